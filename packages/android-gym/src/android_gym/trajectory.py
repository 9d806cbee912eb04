"""Episodes as data: a ``Trajectory`` is the instruction plus the list of ``Step`` records of one episode.

These are the records rollouts, reward models and trainers pass to each other. They are plain
dataclasses that convert to and from JSON-friendly dicts (screenshots are kept as arrays, or as
PNG bytes by the code that persists them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from android_gym.actions import Action, action_from_dict


@dataclass
class Step:
    """One decision: what the agent saw, what it said, the action taken and what came of it."""

    ui: str
    action: Action | None
    response: str = ""
    reward: float = 0.0
    screenshot: np.ndarray | None = None
    xml: str | None = None
    parse_error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ui": self.ui,
            "action": self.action.to_dict() if self.action is not None else None,
            "response": self.response,
            "reward": self.reward,
            "xml": self.xml,
            "parse_error": self.parse_error,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        action = data.get("action")
        return cls(
            ui=data["ui"],
            action=action_from_dict(action) if action else None,
            response=data.get("response", ""),
            reward=float(data.get("reward", 0.0)),
            xml=data.get("xml"),
            parse_error=data.get("parse_error"),
            info=dict(data.get("info") or {}),
        )


@dataclass
class Trajectory:
    """A whole episode: task, goal text, steps, outcome."""

    task: str
    instruction: str
    steps: list[Step] = field(default_factory=list)
    success: float = 0.0
    answer: str | None = None
    seed: int | None = None
    truncated: bool = False
    error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "instruction": self.instruction,
            "steps": [s.to_dict() for s in self.steps],
            "success": self.success,
            "answer": self.answer,
            "seed": self.seed,
            "truncated": self.truncated,
            "error": self.error,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        return cls(
            task=data["task"],
            instruction=data["instruction"],
            steps=[Step.from_dict(s) for s in data.get("steps", [])],
            success=float(data.get("success", 0.0)),
            answer=data.get("answer"),
            seed=data.get("seed"),
            truncated=bool(data.get("truncated", False)),
            error=data.get("error"),
            info=dict(data.get("info") or {}),
        )
