"""Residual MLP-mixer style sequence classifier with optional activation checkpointing."""
