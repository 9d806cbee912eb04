"""The records the PRM-data stages pass along: an expert state (``ExpertStep``), a policy's proposed step
(``Candidate``) and the ``Sampler`` protocol a policy implements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

from android_gym.actions import Action

__all__ = [
    "Candidate",
    "ExpertStep",
    "Sampler",
]


@dataclass(frozen=True)
class ExpertStep:
    """One state of a successful demonstration and the action the demonstrator took there.

    ``history`` holds the earlier actions as UI-TARS call text, oldest first (what the PRM prompt shows);
    ``elements`` are the on-screen elements (``android_gym`` ``UIElement``s) when known, used by the
    perturbation sampler; ``screenshot`` is an HxWx3 uint8 array, a PIL image or None.
    """

    instruction: str
    ui: str
    expert: Action
    screen_size: tuple[int, int]
    history: tuple[str, ...] = ()
    elements: tuple[Any, ...] = ()
    screenshot: Any = None
    step_instruction: str = ""
    source: str = ""
    episode_id: str = ""
    task: str = ""
    app: str = ""
    step_index: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.instruction, str) or not self.instruction.strip():
            raise ValueError("an ExpertStep needs a non-empty instruction")
        if not isinstance(self.expert, Action):
            raise TypeError(f"ExpertStep.expert must be an android_gym Action, got {type(self.expert).__name__}")
        w, h = self.screen_size
        if not (isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0):
            raise ValueError(f"screen_size must be two positive ints (width, height), got {self.screen_size!r}")


class Candidate(NamedTuple):
    """One proposed step: the policy's reasoning and its action as text (a UI-TARS call, or anything parseable)."""

    thought: str
    action_text: str


@runtime_checkable
class Sampler(Protocol):
    """A policy that proposes ``k`` candidate steps for each state (one list of ``k`` per state, in order)."""

    def sample(self, steps: Sequence[ExpertStep], k: int) -> list[list[Candidate]]:
        """Return ``k`` candidates for every state in ``steps``."""
        ...
