"""Consistency distillation (Song et al., 2023) of a toy 2-D diffusion model."""
