"""Small CTC acoustic model (ESPnet-style Conv2d subsampling + Transformer encoder)."""
