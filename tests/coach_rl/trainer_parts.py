"""Shared parts of the CoachTrainer tests: a fixed toy critic and a small CPU CoachConfig."""

from __future__ import annotations

from coach_rl.config import CoachConfig

K = 4


def vowel_critic(states: list[str], actions: list[str]) -> list[float]:
    """A fixed toy critic: prefers actions rich in the letter 'e' (any deterministic function of the text works)."""
    return [a.count("e") / (1 + len(a)) + 0.01 * len(s) for s, a in zip(states, actions)]


def trainer_config(tmp_path, **overrides) -> CoachConfig:
    """K replies per state, one optimiser step per batch, no checkpointing: what the trainer tests run."""
    kwargs = dict(output_dir=str(tmp_path), use_cpu=True, report_to="none", save_strategy="no",
                  per_device_train_batch_size=8, num_generations=K, max_completion_length=8,
                  learning_rate=1e-3, lr_scheduler_type="constant", seed=7, bf16=False,
                  gradient_checkpointing=False)
    kwargs.update(overrides)
    return CoachConfig(**kwargs)
