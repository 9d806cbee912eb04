"""coach-rl."""
