"""Customer lifetime-value regression with the zero-inflated lognormal (ZILN) loss."""
