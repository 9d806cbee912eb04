r"""The one training record: :class:`StepRecord`, what every learner reads of one environment step.

The collector builds a record per step exactly once, after the episode ended and its rewards are known:
the prompt the policy saw, its reply with token ids and log-probs, the acting policy version, the process
reward ``r_p`` (NaN when the reward model could not score the step), the outcome reward ``r_o`` of the
episode and the return target ``R_t`` (:func:`coach_rl.returns.coach_returns`, the only place returns are
computed). The replay buffer stores these fields as its columns; the critic, Android Coach, GRPO, PPO and every
other :class:`coach_rl.algorithms.Algorithm` take batches of records and nothing else.

Records of one episode share ``episode_id``; records of one task instance share ``group`` (GRPO-style
algorithms normalise within it). :func:`episodes` regroups a flat batch into per-episode lists.

While an episode runs, the collector keeps one :class:`PolicyTurn` per step beside the android_gym ``Trajectory``
(what the policy was given and produced there, typed, instead of riding in ``step.info``); the reward pipeline
(:func:`coach_rl.rewards.step_records`) turns trajectory + turns + rewards into the records.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PolicyTurn", "StepRecord", "TrajectoryRecord", "check_records", "episodes", "episodes_of",
           "trajectory_records"]


@dataclass
class PolicyTurn:
    """What the policy was given and produced at one step of a running episode (one per ``Trajectory`` step).

    Built by :class:`coach_rl.rollout.RolloutCollector` from the step's ``PolicyOutput``; read by the reward
    pipeline (the PRM sees ``thought``, the sim oracle ``expert_action``) and copied into the step's
    :class:`StepRecord`. Never stored in ``step.info``.
    """

    prompt: list[dict[str, Any]]
    """The chat messages the policy was given (JSON-safe; images as placeholders)."""
    prompt_text: str
    """The templated prompt string the policy generated from."""
    thought: str = ""
    """The reasoning part of the reply (what the process reward model is shown beside the action)."""
    num_tokens: int = 0
    """Generated tokens (EOS included)."""
    token_ids: list[int] | None = None
    """The generated token ids (None when the policy did not record them)."""
    token_logprobs: list[float] | None = None
    """Their log-probs under the acting policy (None when not recorded)."""
    policy_version: int = 0
    """Version of the policy that acted (``Policy.version``)."""
    expert_action: Any = None
    """The sim expert's action in the state acted in (an android_gym ``Action``; only when the process reward
    model is :class:`coach_rl.rewards.SimOracle`, None otherwise or when the expert was stuck)."""
    oracle: str | None = None
    """The sim's oracle for this state as JSON (:class:`coach_rl.diagnostics.StateOracle`: the expert's action and the
    elements index answers point into), recorded for the oracle diagnostics; None off the sim or when switched off."""
    expert_match: float | None = None
    """1.0 when the action taken here is the expert's, 0.0 when not, None when unknown (diagnostics only)."""
    candidates: list[tuple[str, Any]] = field(default_factory=list)
    """Extra replies sampled at this state and never executed (``critic_prm_candidates``), each with its parsed
    action (None when it did not parse): the process reward model judges them for the critic."""

    def __post_init__(self) -> None:
        if not isinstance(self.prompt_text, str):
            raise TypeError(f"prompt_text must be a str, got {type(self.prompt_text).__name__}")
        if self.token_ids is not None and self.token_logprobs is not None and len(self.token_ids) != len(self.token_logprobs):
            raise ValueError(f"token_ids ({len(self.token_ids)}) and token_logprobs ({len(self.token_logprobs)}) "
                             "must have one entry per generated token")


@dataclass
class StepRecord:
    """One step of one episode as the learners see it (see the module docstring)."""

    episode_id: str
    """Id of the episode (the replay buffer's trajectory id): records of one episode share it."""
    step_index: int
    """Position of the step in its episode (0-based)."""
    num_steps: int
    """Length of the episode."""
    task: str
    """Task name."""
    group: str
    """Task instance the episode played (``"<task>:<seed>"``): GRPO-style groups share it."""
    prompt: list[dict[str, Any]]
    """The chat messages the policy was given (JSON-safe; images as placeholders)."""
    prompt_text: str
    """The templated prompt string the policy generated from: the state text the critic reads."""
    response: str
    """The policy's reply (thought and action)."""
    token_ids: list[int] | None = None
    """Generated token ids of ``response`` (None when the policy did not record them)."""
    token_logprobs: list[float] | None = None
    """Their log-probs under the acting policy, one per id (None when not recorded)."""
    policy_version: int = 0
    """Version of the policy that acted (``Policy.version``): staleness = learner version - this."""
    process_reward: float = 0.0
    """r_p of the step; NaN when the process reward model was asked and gave no usable answer."""
    outcome_reward: float = 0.0
    """r_o of the episode (the verifier's score, or the task's own check)."""
    return_t: float = 0.0
    """R_t = w_p * sum_{tau>=t} gamma^(T-tau) r_p^tau + w_o * r_o (missing r_p handled by ``coach_returns``)."""
    success: float = 0.0
    """The task's own check at the end of the episode (recorded by the env; 0 for truncated episodes)."""
    env_reward: float = 0.0
    """The env's reward for this step (parse penalties, the terminal success reward)."""
    parse_error: str | None = None
    """Why the reply could not be parsed or performed (None when it was)."""
    truncated: bool = False
    """Whether the episode ended without the agent finishing (step budget, device error)."""
    instruction: str = ""
    """The task's goal text."""
    ui: str = ""
    """The compressed UI text of the screen the policy acted on."""
    action: str | None = None
    """The parsed action as JSON (``Action.to_dict``), None when the reply did not parse."""
    sample_weight: float = 1.0
    """How much the step counts in a policy update (1; less for stale data that ``stale_policy=downweight``
    keeps): learners scale the step's advantage by it."""
    expert_match: float | None = None
    """Diagnostics only, never read by a learner: 1.0 when the action taken is the sim expert's in this state, 0.0
    when not, None when unknown (off the sim, the oracle switched off, or the expert stuck)."""
    oracle: str | None = None
    """Diagnostics only: the state's :class:`coach_rl.diagnostics.StateOracle` as JSON, so that actions sampled
    later at this stored state (Android Coach's K) can be labelled against the expert too."""
    candidate_labels: list[tuple[str, float]] = field(default_factory=list)
    """``(reply, label)`` of extra actions sampled at this state and never executed, labelled by the process reward
    model (1.0 judged correct, 0.0 not; ``critic_prm_candidates``): extra critic targets of this iteration's critic
    update. Not stored in the replay buffer."""
    info: dict[str, Any] = field(default_factory=dict)
    """Free-form extras for reports (never read by a learner)."""

    def __post_init__(self) -> None:
        if not isinstance(self.prompt_text, str):
            raise TypeError(f"prompt_text must be a str, got {type(self.prompt_text).__name__}")
        if not isinstance(self.response, str):
            raise TypeError(f"response must be a str, got {type(self.response).__name__}")
        for name in ("outcome_reward", "return_t"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if self.token_ids is not None and self.token_logprobs is not None and len(self.token_ids) != len(self.token_logprobs):
            raise ValueError(f"token_ids ({len(self.token_ids)}) and token_logprobs ({len(self.token_logprobs)}) "
                             "must have one entry per generated token")

    @property
    def process_reward_missing(self) -> bool:
        """Whether r_p is missing (the reward model failed on this step)."""
        return isinstance(self.process_reward, float) and math.isnan(self.process_reward)


def episodes(records: Iterable[StepRecord]) -> list[list[StepRecord]]:
    """The records grouped by episode (first-seen order), each list sorted by ``step_index``."""
    grouped: dict[str, list[StepRecord]] = {}
    for record in records:
        grouped.setdefault(record.episode_id, []).append(record)
    return [sorted(steps, key=lambda r: r.step_index) for steps in grouped.values()]


def check_records(records: Sequence[StepRecord], name: str = "records") -> list[StepRecord]:
    """``records`` as a list, or a TypeError naming the first entry that is not a :class:`StepRecord`."""
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        raise TypeError(f"{name} must be a list of StepRecord, got {type(records).__name__}")
    for i, record in enumerate(records):
        if not isinstance(record, StepRecord):
            raise TypeError(f"{name}[{i}] must be a coach_rl.records.StepRecord, got {type(record).__name__}")
    return list(records)


@dataclass
class TrajectoryRecord:
    """The records of one episode with its group (task instance) and outcome reward (what GRPO and PPO learn from)."""

    group: Hashable
    outcome_reward: float
    steps: list[StepRecord] = field(default_factory=list)


def trajectory_records(records: Sequence[StepRecord]) -> list[TrajectoryRecord]:
    """The step records of a batch grouped into episodes (first-seen order, steps in order)."""
    return [TrajectoryRecord(group=steps[0].group, outcome_reward=steps[0].outcome_reward, steps=steps)
            for steps in episodes(check_records(records))]


def episodes_of(batch: Sequence[StepRecord] | Sequence[TrajectoryRecord]) -> list[TrajectoryRecord]:
    """Episodes of a batch of step records (grouped here) or of already grouped :class:`TrajectoryRecord` objects."""
    if isinstance(batch, Sequence) and batch and all(isinstance(b, TrajectoryRecord) for b in batch):
        return list(batch)  # type: ignore[arg-type]
    return trajectory_records(batch)  # type: ignore[arg-type]
