"""semisup: MixMatch (Berthelot et al. 2019) on synthetic 2-moons-like data."""
