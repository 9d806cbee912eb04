"""Reference agents: a seeded random agent (the floor any learner must beat) and the env's expert."""

from __future__ import annotations

import random
import string
from typing import Any

from android_gym.actions import Action, Click, Finished, PressBack, Scroll, Type

_DIRECTIONS = ("up", "down", "left", "right")


class RandomAgent:
    """Uniform over sensible moves on what is visible: tap a clickable element, scroll, back, type, finish.

    ``finish_prob`` is kept low so episodes explore before giving up, as a weak baseline should.
    """

    def __init__(self, seed: int | None = None, finish_prob: float = 0.05):
        self.rng = random.Random(seed)
        self.finish_prob = finish_prob

    def act(self, ui: Any) -> Action:
        """Next action for a ``CompressedUI`` (anything with ``.elements``)."""
        rng = self.rng
        if rng.random() < self.finish_prob:
            return Finished(rng.choice([None, "yes", "no", "0"]))
        clickable = [e for e in ui.elements if e.clickable or e.editable or e.checkable]
        roll = rng.random()
        if clickable and roll < 0.65:
            x, y = rng.choice(clickable).center
            return Click(int(x), int(y))
        if roll < 0.8:
            return Scroll(rng.choice(_DIRECTIONS))
        if roll < 0.9:
            return PressBack()
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 8)))
        return Type(word)

    __call__ = act
