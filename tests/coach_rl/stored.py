"""Test helper: store hand-made trajectories in a replay buffer the way the collector does (records with returns)."""

from __future__ import annotations

from collections.abc import Sequence

from android_gym.trajectory import Trajectory
from coach_rl.replay import ReplayBuffer
from coach_rl.rewards import score_trajectory


def store(buf: ReplayBuffer, traj: Trajectory, *, policy_version: int = 0,
          process_rewards: Sequence[float] | None = None, outcome_reward: float | None = None) -> str:
    """Fill the per-step fields the collector records, score with the paper's returns, add; returns the id."""
    for step in traj.steps:
        step.info.setdefault("prompt", [{"role": "user", "content": f"{traj.instruction} | {step.ui}"}])
        step.info.setdefault("prompt_text", f"<user>{traj.instruction} | {step.ui}</user><assistant>")
        step.info.setdefault("token_ids", None)
        step.info.setdefault("token_logprobs", None)
        step.info["policy_version"] = policy_version
    rewards = (list(process_rewards) if process_rewards is not None
               else [float(s.info.get("process_reward", 0.0)) for s in traj.steps])
    outcome = float(traj.success if outcome_reward is None else outcome_reward)
    return buf.add(traj, score_trajectory(traj, rewards, outcome, "pending"))
