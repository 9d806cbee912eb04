"""Coordinate spaces agents speak in, and the mapping between them and screen pixels.

A model names a point in *its* frame; the device needs screen pixels. The frames:

- ``"absolute"``: pixels of the image the model saw. That image is the screen unless you pass
  ``image_size`` (you downscaled the screenshot), in which case x is scaled by W / image_width.
- ``"relative1000"``: 0..1000 on each axis (UI-TARS-1.0, CogAgent, AndroidLab's relative mode);
  x_screen = x * W / 1000. Needs ``screen_size``.
- ``"smart_resize"``: pixels of the Qwen2-VL/Qwen2.5-VL resized image (UI-TARS-1.5). The processor
  resizes the screenshot (``image_size``, default the screen) with :func:`smart_resize`; the model's
  x maps back as x * W / w_resized. Needs ``screen_size``; ``factor``, ``min_pixels`` and
  ``max_pixels`` must be the values the processor used.
- ``"auto"``: the same as ``"absolute"``. No string tells which frame a model was trained in, so
  guessing would silently mis-click; say ``"smart_resize"`` for UI-TARS-1.5 / Qwen2.5-VL and
  ``"relative1000"`` for UI-TARS-1.0.

Results are integers (rounded half up) and, when the screen size is known, clamped to the screen.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from android_gym.actions.types import ActionParseError

FACTOR = 28
"""Qwen2-VL patch (14) times merge size (2): resized sides are multiples of this."""
MIN_PIXELS = 100 * 28 * 28
"""The smallest resized image UI-TARS-1.5's processor allows (100 patches of 28x28)."""
MAX_PIXELS = 16384 * 28 * 28
"""The largest resized image UI-TARS-1.5's processor allows (16384 patches of 28x28)."""
MAX_ASPECT_RATIO = 200
"""Qwen2-VL refuses images more elongated than this."""

COORDINATE_SPACES = ("auto", "absolute", "relative1000", "smart_resize")


def smart_resize(
    height: int,
    width: int,
    factor: int = FACTOR,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """The (height, width) a Qwen2-VL-style processor resizes a ``height`` x ``width`` image to.

    Both sides go to the nearest multiple of ``factor`` (at least ``factor``). If the area then
    exceeds ``max_pixels`` both sides shrink by the same ratio and round *down* to multiples of
    ``factor``; if it falls below ``min_pixels`` they grow and round *up*. The aspect ratio is kept
    as well as the grid allows.
    """
    for name, value in (("height", height), ("width", width), ("factor", factor),
                        ("min_pixels", min_pixels), ("max_pixels", max_pixels)):
        if not _is_positive_int(value):
            raise ValueError(f"smart_resize: {name} must be a positive integer, got {value!r}")
    height, width, factor = int(height), int(width), int(factor)
    min_pixels, max_pixels = int(min_pixels), int(max_pixels)
    if min_pixels > max_pixels:
        raise ValueError(f"smart_resize: min_pixels ({min_pixels}) is larger than max_pixels ({max_pixels})")
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise ValueError(f"smart_resize: aspect ratio of {width}x{height} exceeds {MAX_ASPECT_RATIO}")
    new_h = max(factor, round(height / factor) * factor)
    new_w = max(factor, round(width / factor) * factor)
    if new_h * new_w > max_pixels:
        scale = math.sqrt(height * width / max_pixels)
        new_h = max(factor, math.floor(height / scale / factor) * factor)
        new_w = max(factor, math.floor(width / scale / factor) * factor)
    elif new_h * new_w < min_pixels:
        scale = math.sqrt(min_pixels / (height * width))
        new_h = math.ceil(height * scale / factor) * factor
        new_w = math.ceil(width * scale / factor) * factor
    return new_h, new_w


def _round_half_up(value: float) -> int:
    if not math.isfinite(value):
        raise ActionParseError(f"coordinate {value!r} is not a finite number")
    return math.floor(value + 0.5)


def _finite(value: Any, what: str) -> float:
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ActionParseError(f"{what} holds {value!r}, which is not a finite number")
    return number


def _is_positive_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0


def _check_size(name: str, size: Any) -> tuple[int, int] | None:
    if size is None:
        return None
    if not isinstance(size, Sequence) or len(size) != 2 or not all(_is_positive_int(v) for v in size):
        raise ValueError(f"{name} must be (width, height) as two positive integers, got {size!r}")
    return int(size[0]), int(size[1])


@dataclass(frozen=True)
class CoordinateSpace:
    """A model's coordinate frame tied to a screen: maps points both ways (see the module notes).

    ``frame`` is the (width, height) of the model's frame; None means model units are screen pixels.
    """

    kind: str
    screen_size: tuple[int, int] | None = None
    frame: tuple[float, float] | None = None

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """Screen pixels (rounded, clamped when the screen is known) for a point in model units."""
        if self.frame is not None and self.screen_size is not None:
            x = x * self.screen_size[0] / self.frame[0]
            y = y * self.screen_size[1] / self.frame[1]
        return self.clamp(_round_half_up(x), _round_half_up(y))

    def from_screen(self, x: int, y: int) -> tuple[int, int]:
        """Model units (rounded to integers, as a model would write them) for a screen point."""
        if self.frame is not None and self.screen_size is not None:
            return (_round_half_up(x * self.frame[0] / self.screen_size[0]),
                    _round_half_up(y * self.frame[1] / self.screen_size[1]))
        return int(x), int(y)

    def clamp(self, x: int, y: int) -> tuple[int, int]:
        """(x, y) kept inside the screen when its size is known."""
        if self.screen_size is None:
            return x, y
        width, height = self.screen_size
        return min(max(x, 0), width - 1), min(max(y, 0), height - 1)


def coordinate_space(
    coordinates: str = "auto",
    *,
    screen_size: tuple[int, int] | None = None,
    image_size: tuple[int, int] | None = None,
    factor: int = FACTOR,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> CoordinateSpace:
    """Build the :class:`CoordinateSpace` named by ``coordinates``; sizes are (width, height).

    Raises ``ValueError`` for an unknown space or when the space needs ``screen_size`` and it is missing.
    """
    screen = _check_size("screen_size", screen_size)
    image = _check_size("image_size", image_size)
    if coordinates not in COORDINATE_SPACES:
        raise ValueError(f"coordinates must be one of {COORDINATE_SPACES}, got {coordinates!r}")
    if coordinates in ("auto", "absolute"):
        frame = (float(image[0]), float(image[1])) if (image and screen and image != screen) else None
        return CoordinateSpace("absolute", screen, frame)
    if screen is None:
        raise ValueError(f"coordinates={coordinates!r} needs screen_size=(width, height) to map to screen pixels")
    if coordinates == "relative1000":
        return CoordinateSpace("relative1000", screen, (1000.0, 1000.0))
    base_w, base_h = image or screen
    new_h, new_w = smart_resize(base_h, base_w, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
    return CoordinateSpace("smart_resize", screen, (float(new_w), float(new_h)))


_TAG_RE = re.compile(r"<\|box_start\|>|<\|box_end\|>|</?point>|</?bbox>", re.IGNORECASE)
_NUM_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_ALLOWED_REST = set("()[], \t\r\n")


def point_from_value(value: Any, what: str = "coordinates") -> tuple[float, float]:
    """A point in model units from a coordinate value as agents write it; a box gives its centre.

    Accepts strings such as ``'<|box_start|>(x,y)<|box_end|>'``, ``'(x,y)'``, ``'[x1,y1,x2,y2]'``,
    ``'<point>x y</point>'``, ``'<bbox>x1 y1 x2 y2</bbox>'``, ``'x1, y1, x2, y2'``, and lists or
    tuples of 2 or 4 numbers. Anything else raises :class:`ActionParseError` naming ``what``.
    """
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
            raise ActionParseError(f"{what} must contain only numbers, got {list(value)!r}")
        numbers = [_finite(v, what) for v in value]
        shown = repr(list(value))
    elif isinstance(value, str):
        shown = repr(value)
        stripped = _TAG_RE.sub(" ", value)
        rest = _NUM_RE.sub("", stripped)
        odd = sorted(set(rest) - _ALLOWED_REST)
        if odd:
            raise ActionParseError(f"{what} {shown} is not a point or box (unexpected {''.join(odd)!r})")
        numbers = [_finite(v, what) for v in _NUM_RE.findall(stripped)]
    elif value is None:
        raise ActionParseError(f"{what} is missing")
    else:
        raise ActionParseError(f"{what} must be a point or box, got {type(value).__name__} {value!r}")
    if not numbers:
        raise ActionParseError(f"{what} {shown} is empty: expected a point (x, y) or a box (x1, y1, x2, y2)")
    if len(numbers) == 2:
        return numbers[0], numbers[1]
    if len(numbers) == 4:
        return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    raise ActionParseError(
        f"{what} {shown} has {len(numbers)} numbers: expected 2 (a point) or 4 (a box)")
