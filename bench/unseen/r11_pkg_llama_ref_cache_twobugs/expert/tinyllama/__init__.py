"""A tiny re-implementation of the reference LLaMA model, trained on synthetic token streams."""
