"""tinydpo: a LLaMA-style toy decoder fine-tuned with Direct Preference Optimization."""
