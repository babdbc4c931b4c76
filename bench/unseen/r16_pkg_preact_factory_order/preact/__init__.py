"""Pre-activation residual MLP built from a YAML config and a layer registry."""
