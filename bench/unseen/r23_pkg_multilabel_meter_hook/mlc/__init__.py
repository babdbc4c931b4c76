"""Multi-label tagger with a hook-based running metric."""
