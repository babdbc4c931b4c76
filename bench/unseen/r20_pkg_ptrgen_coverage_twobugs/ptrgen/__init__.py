"""ptrgen: pointer-generator network with coverage (See et al., 2017) on a toy copy-summarisation task."""
