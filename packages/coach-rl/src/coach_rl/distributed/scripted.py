"""``ScriptedPolicy``: a policy that costs no compute, for benchmarks and tests of the collection machinery."""

from __future__ import annotations

import random
from collections.abc import Sequence

from android_gym.actions import Finished, PressBack, PressHome
from coach_rl.policy import PolicyOutput, PolicyRequest

__all__ = ["ScriptedPolicy"]


class ScriptedPolicy:
    """Presses home or back at random (seeded) and finishes with probability ``finish_prob`` per step.

    It answers in microseconds, so a benchmark over it measures the collector and the devices, not the CPU
    spent generating. ``version`` is set by whoever publishes (there are no weights).
    """

    def __init__(self, seed: int = 0, finish_prob: float = 0.0) -> None:
        """``finish_prob``: chance that a step is ``finished`` (0: episodes run to the env's step budget)."""
        if not 0 <= finish_prob <= 1:
            raise ValueError(f"finish_prob must be in [0, 1], got {finish_prob!r}")
        self.rng = random.Random(seed)
        self.finish_prob = float(finish_prob)
        self.version = 0

    def act(self, requests: Sequence[PolicyRequest], *, greedy: bool = False) -> list[PolicyOutput]:
        """One scripted reply per request."""
        out = []
        for request in requests:
            if self.rng.random() < self.finish_prob:
                action, text = Finished(), "finished()"
            elif greedy or self.rng.random() < 0.5:
                action, text = PressHome(), "press_home()"
            else:
                action, text = PressBack(), "press_back()"
            out.append(PolicyOutput(text=f"Action: {text}", action=action, error=None, thought="", prompt=[],
                                    prompt_text=f"Task: {request.instruction}\n", num_tokens=1))
        return out
