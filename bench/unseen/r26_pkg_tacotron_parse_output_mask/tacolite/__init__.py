"""tacolite: a miniature Tacotron 2 (NVIDIA layout) trained on synthetic text/mel pairs."""
