"""spikenet: a small leaky integrate-and-fire network trained with surrogate gradients."""
