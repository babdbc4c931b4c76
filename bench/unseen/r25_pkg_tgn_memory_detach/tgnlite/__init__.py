"""tgnlite: a compact Temporal Graph Network (memory + link predictor) for event streams."""
