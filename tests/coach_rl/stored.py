"""Test helper: store hand-made trajectories in a replay buffer the way the collector does (records with returns)."""

from __future__ import annotations

from collections.abc import Sequence

from android_gym.trajectory import Trajectory
from coach_rl.records import PolicyTurn
from coach_rl.replay import ReplayBuffer
from coach_rl.rewards import score_trajectory


def turns_for(traj: Trajectory, *, policy_version: int = 0) -> list[PolicyTurn]:
    """The policy turns a collector would have kept for ``traj``: a prompt per step, no token data."""
    return [PolicyTurn(prompt=[{"role": "user", "content": f"{traj.instruction} | {step.ui}"}],
                       prompt_text=f"<user>{traj.instruction} | {step.ui}</user><assistant>",
                       policy_version=policy_version) for step in traj.steps]


def store(buf: ReplayBuffer, traj: Trajectory, *, policy_version: int = 0,
          process_rewards: Sequence[float] | None = None, outcome_reward: float | None = None) -> str:
    """Score ``traj`` with the paper's returns from made-up policy turns and add it; returns the id."""
    rewards = list(process_rewards) if process_rewards is not None else [0.0] * len(traj.steps)
    outcome = float(traj.success if outcome_reward is None else outcome_reward)
    return buf.add(traj, score_trajectory(traj, turns_for(traj, policy_version=policy_version), rewards, outcome,
                                          "pending"))
