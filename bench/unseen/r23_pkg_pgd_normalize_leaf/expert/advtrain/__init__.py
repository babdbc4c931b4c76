"""PGD adversarial training (Madry et al.) with normalization inside the model."""
