"""The fixed swipe gestures of AndroidLab and AndroidWorld, as screen-pixel :class:`Swipe` actions.

Both benchmarks name a swipe by a direction (and AndroidLab by a distance word) rather than by end
points; these functions turn those words into the exact finger path their executors perform, so
parsing and formatting agree with them.

- AndroidLab (``do(action="Swipe", element=..., direction=..., dist=...)``): the finger starts at
  the element centre (the screen centre when there is no element) and moves in ``direction``. The
  unit is ``int(width / 10)``, times 1 / 2 / 10 for short / medium / long; vertical swipes travel
  2 units, horizontal ones 2.5 units. Distance defaults to "medium".
- AndroidWorld (``{"action_type": "swipe", "direction": ...}``): a full-screen swipe through the
  middle of the screen, from edge to edge, exactly as its ``actuation.execute_adb_action`` does:
  "up"/"down" move the finger up/down; "left" moves the finger from the left edge to the right edge
  and "right" from the right edge to the left (that is how AndroidWorld executes them).

End points are clamped to the screen.
"""

from __future__ import annotations

import math

from android_gym.actions.types import DIRECTIONS, ActionParseError, Swipe

ANDROIDLAB_DISTANCES: dict[str, int] = {"short": 1, "medium": 2, "long": 10}
"""AndroidLab distance words and how many width/10 units each is."""


def _clamp(value: float, size: int) -> int:
    return min(max(math.floor(value + 0.5), 0), size - 1)


def androidlab_swipe(
    x: int | None,
    y: int | None,
    direction: str,
    dist: str | int,
    screen_size: tuple[int, int],
) -> Swipe:
    """The Swipe AndroidLab performs for ``direction``/``dist`` starting at (x, y) (None: screen centre).

    ``dist`` is "short", "medium", "long", or a unit length in pixels (AndroidLab's controller accepts both).
    """
    width, height = screen_size
    if direction not in DIRECTIONS:
        raise ActionParseError(f"AndroidLab Swipe direction must be one of {DIRECTIONS}, got {direction!r}")
    if isinstance(dist, str):
        if dist not in ANDROIDLAB_DISTANCES:
            raise ActionParseError(
                f"AndroidLab Swipe dist must be one of {tuple(ANDROIDLAB_DISTANCES)}, got {dist!r}")
        unit = int(width / 10) * ANDROIDLAB_DISTANCES[dist]
    elif isinstance(dist, int) and not isinstance(dist, bool) and dist > 0:
        unit = dist
    else:
        raise ActionParseError(f"AndroidLab Swipe dist must be a distance word or a positive integer, got {dist!r}")
    if x is None or y is None:
        x, y = width // 2, height // 2
    dx, dy = {"up": (0.0, -2.0 * unit), "down": (0.0, 2.0 * unit),
              "left": (-2.5 * unit, 0.0), "right": (2.5 * unit, 0.0)}[direction]
    return Swipe(x=x, y=y, end_x=_clamp(x + dx, width), end_y=_clamp(y + dy, height))


def androidworld_swipe(direction: str, screen_size: tuple[int, int]) -> Swipe:
    """The full-screen Swipe AndroidWorld's executor performs for ``direction`` (see the module notes)."""
    width, height = screen_size
    mid_x, mid_y = int(0.5 * width), int(0.5 * height)
    ends = {
        "down": (mid_x, 0, mid_x, height),
        "up": (mid_x, height, mid_x, 0),
        "left": (0, mid_y, width, mid_y),
        "right": (width, mid_y, 0, mid_y),
    }
    if direction not in ends:
        raise ActionParseError(f"AndroidWorld swipe direction must be one of {DIRECTIONS}, got {direction!r}")
    x, y, end_x, end_y = ends[direction]
    return Swipe(x=_clamp(x, width), y=_clamp(y, height), end_x=_clamp(end_x, width), end_y=_clamp(end_y, height))


def androidworld_scroll(direction: str, bounds: tuple[int, int, int, int] | None,
                        screen_size: tuple[int, int]) -> Swipe:
    """The Swipe AndroidWorld's executor performs for ``{"action_type": "scroll", "direction": ..., "index": ...}``:
    from the middle of the element's ``bounds`` (x1, y1, x2, y2; None: the whole screen, when there is no index) to
    the middle of its edge the content comes from ("down": its top edge), exactly as ``actuation.execute_adb_action``
    does (bounds clipped to the screen, its ``input swipe`` takes Android's default 300 ms). Without an index that is
    a 1,200 px swipe on a 1080x2400 screen, 4/3 of this package's own :class:`Scroll` (see
    ``android_gym.device.scroll_gesture``), and a list flings further than the finger moves
    (``android_gym.sim.fling``)."""
    width, height = screen_size
    if bounds is None:
        x1, y1, x2, y2 = 0, 0, width, height
    else:
        x1, y1 = max(bounds[0], 0), max(bounds[1], 0)
        x2, y2 = min(bounds[2], width), min(bounds[3], height)
    mx, my = (x1 + x2) // 2, (y1 + y2) // 2
    ends = {"down": (mx, y1), "up": (mx, y2), "right": (x1, my), "left": (x2, my)}
    if direction not in ends:
        raise ActionParseError(f"AndroidWorld scroll direction must be one of {DIRECTIONS}, got {direction!r}")
    end_x, end_y = ends[direction]
    return Swipe(x=_clamp(mx, width), y=_clamp(my, height), end_x=_clamp(end_x, width), end_y=_clamp(end_y, height))
