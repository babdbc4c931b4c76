"""gcache: dual-encoder contrastive training with gradient caching (Gao et al., 2021)."""
