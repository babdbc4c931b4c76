"""Time-series classification with a small S4D (diagonal state-space) model."""
