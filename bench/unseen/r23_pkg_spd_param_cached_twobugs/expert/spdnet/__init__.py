"""Prototype classifier with a learned SPD (Mahalanobis) metric."""
