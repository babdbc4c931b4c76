"""Token autoencoder with a reconstruction head and an auxiliary head."""
