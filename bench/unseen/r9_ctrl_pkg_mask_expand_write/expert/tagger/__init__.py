"""tagger: streaming (left-context) sequence tagger with a small self-attention encoder."""
