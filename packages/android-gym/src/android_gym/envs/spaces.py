"""A Gymnasium ``Text`` space that holds any Unicode string (UI trees, instructions, model outputs).

Gymnasium's ``Text`` only accepts characters from an explicit charset (alphanumeric by default), which
rejects XML punctuation and non-ASCII screens. ``UnicodeText`` accepts every code point while keeping
``Text``'s machinery, so batching and AsyncVectorEnv shared memory work unchanged: a character's
index is its code point.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Text

_MAX_CODE_POINT = 0x110000
_SAMPLE_CHARS = tuple(string.ascii_letters + string.digits + " .,;:!?()[]<>=/'\"-_\n") + tuple("éüßçñ中文日本語한국어")


class _AllCodePoints(Sequence):
    """Every code point as a read-only sequence (index -> character) without materialising it."""

    def __len__(self) -> int:
        return _MAX_CODE_POINT

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return tuple(chr(i) for i in range(*index.indices(_MAX_CODE_POINT)))
        return chr(int(index))

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and len(item) == 1


class UnicodeText(Text):
    """``Text(min_length, max_length)`` over all of Unicode; samples draw from a small readable alphabet."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None):
        super().__init__(max_length=max_length, min_length=min_length, charset="a", seed=seed)
        self._all = _AllCodePoints()

    @property
    def character_set(self):  # type: ignore[override]
        return self._all

    @property
    def character_list(self):  # type: ignore[override]
        return self._all

    def character_index(self, char: str) -> np.int32:
        return np.int32(ord(char))

    @property
    def characters(self) -> str:
        return "<any unicode>"

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise NotImplementedError("UnicodeText.sample does not support masks")
        length = int(self.np_random.integers(self.min_length, min(self.max_length, 64) + 1))
        picks = self.np_random.integers(0, len(_SAMPLE_CHARS), size=length)
        return "".join(_SAMPLE_CHARS[i] for i in picks)

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, UnicodeText) and self.min_length == other.min_length
                and self.max_length == other.max_length)


class AgentAction(UnicodeText):
    """The action space of the Android envs: a model's raw reply (text), or a typed action.

    ``contains`` accepts a string of at most ``max_length`` characters (parsed by the env, any supported
    format), an :class:`android_gym.actions.Action`, or its ``to_dict()`` form (a dict with a known ``type``),
    so agents that parse replies themselves step the env with exactly what this space declares. ``sample``
    draws text, like :class:`UnicodeText`.
    """

    def contains(self, x: Any) -> bool:
        from android_gym.actions import Action, action_from_dict

        if isinstance(x, str):
            return super().contains(x)
        if isinstance(x, Action):
            return True
        if isinstance(x, dict) and isinstance(x.get("type"), str):
            try:
                action_from_dict(x)
            except (TypeError, ValueError, KeyError):
                return False
            return True
        return False

    def __repr__(self) -> str:
        return f"AgentAction(text of at most {self.max_length} characters, or an android_gym Action)"
