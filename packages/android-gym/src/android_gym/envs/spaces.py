"""The Android envs' own Gymnasium spaces: any Unicode text, the agent's action, the screen's UI elements.

``UnicodeText`` is a Gymnasium ``Text`` space that holds any Unicode string (UI trees, instructions,
model outputs).

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
from gymnasium.spaces import Space, Text

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


class UIElements(Space):
    """The screen's parsed UI elements in index order: a tuple of :class:`android_gym.xml.UIElement`.

    It is the list an index-format agent's ``{"index": i}`` points into, in the observation because it
    is what the agent sees (a policy must not have to read ``info`` to act). ``sample`` draws random
    elements inside ``screen_size``, so Gymnasium's checker and ``observation_space.sample()`` work.
    """

    def __init__(self, max_length: int = 4096, screen_size: tuple[int, int] = (1080, 2400),
                 seed: int | np.random.Generator | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.max_length = int(max_length)
        self.screen_size = (int(screen_size[0]), int(screen_size[1]))

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        from android_gym.xml import UIElement

        return isinstance(x, tuple) and len(x) <= self.max_length and all(isinstance(e, UIElement) for e in x)

    def sample(self, mask: Any = None, probability: Any = None) -> tuple[Any, ...]:
        from android_gym.xml import UIElement

        if mask is not None or probability is not None:
            raise NotImplementedError("UIElements.sample does not support masks")
        width, height = self.screen_size
        out = []
        for i in range(int(self.np_random.integers(0, min(self.max_length, 8) + 1))):
            x1, y1 = int(self.np_random.integers(0, width - 1)), int(self.np_random.integers(0, height - 1))
            x2, y2 = int(self.np_random.integers(x1 + 1, width + 1)), int(self.np_random.integers(y1 + 1, height + 1))
            clickable = bool(self.np_random.integers(0, 2))
            out.append(UIElement(
                id=f"e{i}", bounds=(x1, y1, x2, y2), text=f"item {i}", content_desc="", hint="",
                class_name="android.widget.Button" if clickable else "android.widget.TextView", resource_id="",
                package="android", clickable=clickable, long_clickable=False, scrollable=False, checkable=False,
                checked=False, editable=False, focusable=clickable, focused=False, selected=False, enabled=True,
                password=False, parent_id=None, depth=1, index_path=(0, i)))
        return tuple(out)

    def __repr__(self) -> str:
        return f"UIElements(at most {self.max_length} android_gym.xml.UIElement)"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, UIElements) and self.max_length == other.max_length
                and self.screen_size == other.screen_size)


# --- AsyncVectorEnv's shared memory for these spaces ----------------------------------------------------------
# Gymnasium reads a shared-memory buffer once, when the vector env starts, and hands that object back after every
# step; its Text reader returns decoded strings, so text observations never change (and read as NUL characters).
# Ours return a live view that decodes on access and becomes a plain tuple when copied (AsyncVectorEnv copies by
# default), so ``gym.make_vec(..., vectorization_mode="async")`` returns the current screens.
_PAD = _MAX_CODE_POINT  # Text's flatten pads with len(character_set)
ELEMENTS_SHARED_BYTES = 4 << 20
"""Bytes of shared memory per env for ``obs["elements"]`` (pickled); a bigger screen asks for shared_memory=False."""


class _SharedView(Sequence):
    """The values of ``n`` envs in one shared buffer, decoded on access; ``copy.deepcopy`` gives a plain tuple."""

    def __init__(self, decode: Any, n: int):
        self._decode, self._n = decode, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return tuple(self._decode(i) for i in range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError(index)
        return self._decode(index % self._n)

    def __deepcopy__(self, memo: dict) -> tuple[Any, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return repr(tuple(self))


def _register_shared_memory() -> None:
    import pickle

    from gymnasium.vector.utils import shared_memory as shm

    def rows(memory: Any, width: int, dtype: Any) -> np.ndarray:
        return np.frombuffer(memory.get_obj(), dtype=dtype).reshape(-1, width)

    @shm.read_from_shared_memory.register(UnicodeText)
    def _read_text(space: UnicodeText, memory: Any, n: int = 1) -> _SharedView:
        def decode(i: int) -> str:
            row = rows(memory, space.max_length, np.int32)[i]
            return row[row < _PAD].astype("<u4").tobytes().decode("utf-32-le")
        return _SharedView(decode, n)

    @shm.write_to_shared_memory.register(UnicodeText)
    def _write_text(space: UnicodeText, index: int, value: str, memory: Any) -> None:
        codes = np.frombuffer(value.encode("utf-32-le"), dtype="<u4").astype(np.int32)
        row = rows(memory, space.max_length, np.int32)[index]
        row[: len(codes)] = codes[: space.max_length]
        row[len(codes):] = _PAD

    @shm.create_shared_memory.register(UIElements)
    def _create_elements(space: UIElements, n: int = 1, ctx: Any = None) -> Any:
        import multiprocessing

        return (ctx or multiprocessing).Array("B", n * (8 + ELEMENTS_SHARED_BYTES))

    @shm.read_from_shared_memory.register(UIElements)
    def _read_elements(space: UIElements, memory: Any, n: int = 1) -> _SharedView:
        def decode(i: int) -> tuple[Any, ...]:
            row = rows(memory, 8 + ELEMENTS_SHARED_BYTES, np.uint8)[i]
            size = int(row[:8].view("<u8")[0])
            return pickle.loads(row[8: 8 + size].tobytes()) if size else ()
        return _SharedView(decode, n)

    @shm.write_to_shared_memory.register(UIElements)
    def _write_elements(space: UIElements, index: int, value: tuple[Any, ...], memory: Any) -> None:
        data = pickle.dumps(tuple(value), protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > ELEMENTS_SHARED_BYTES:
            raise ValueError(f"the screen's {len(value)} UI elements take {len(data)} bytes, more than the "
                             f"{ELEMENTS_SHARED_BYTES} of shared memory per env; make the vector env with "
                             "vector_kwargs={'shared_memory': False}")
        row = rows(memory, 8 + ELEMENTS_SHARED_BYTES, np.uint8)[index]
        row[:8] = np.frombuffer(np.array([len(data)], dtype="<u8").tobytes(), dtype=np.uint8)
        row[8: 8 + len(data)] = np.frombuffer(data, dtype=np.uint8)


_register_shared_memory()
