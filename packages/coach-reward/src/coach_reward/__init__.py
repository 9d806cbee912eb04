"""coach-reward."""
