"""pwglite: a tiny mel-to-waveform generator trained with a multi-resolution STFT loss."""
