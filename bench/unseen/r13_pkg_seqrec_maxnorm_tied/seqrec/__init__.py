"""Session-based next-item recommendation (GRU4Rec-style) on synthetic sessions."""
