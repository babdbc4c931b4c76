"""lookalikes: four small experiments whose in-place writes are all legal."""
