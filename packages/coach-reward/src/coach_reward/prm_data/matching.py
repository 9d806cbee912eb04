"""Labels: whether a candidate action matches the expert's (``match_actions``, the paper's rule with a
coordinate tolerance), and actions written as UI-TARS call text (``action_text``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from android_gym.actions import (
    Action,
    ActionFormatError,
    Click,
    Drag,
    Finished,
    LongPress,
    OpenApp,
    Scroll,
    Swipe,
    Type,
    format_action,
)
from android_gym.apps import resolve_package

__all__ = [
    "ActionMatch",
    "DEFAULT_TOLERANCE",
    "action_text",
    "match_actions",
    "normalize_text",
]


DEFAULT_TOLERANCE = 0.14
"""Coordinate tolerance as a fraction of the screen width (GUIOdyssey's rule, used by the paper)."""


@dataclass(frozen=True)
class ActionMatch:
    """Whether a candidate action matches the expert's, and why (``reason`` names the deciding rule)."""

    match: bool
    reason: str



def action_text(action: Action) -> str:
    """An action as a UI-TARS call without the ``Action:`` prefix (JSON for actions UI-TARS cannot write)."""
    try:
        text = format_action(action, "uitars")
    except ActionFormatError:
        return json.dumps(action.to_dict(), ensure_ascii=False, sort_keys=True)
    return text[len("Action: "):] if text.startswith("Action: ") else text


_TRAILING_PUNCT = ".,;:!?。，；：！？…"


def normalize_text(text: str | None) -> str:
    """Text compared case-insensitively, with runs of whitespace collapsed and trailing punctuation dropped."""
    if text is None:
        return ""
    out = " ".join(str(text).split()).casefold()
    return out.rstrip(_TRAILING_PUNCT + " ").strip()


def _point(action: Action) -> tuple[int, int] | None:
    x, y = getattr(action, "x", None), getattr(action, "y", None)
    return None if x is None or y is None else (x, y)


def _swipe_direction(action: Swipe | Drag) -> str:
    """The direction content moves for a finger swipe (finger up = content scrolls down)."""
    dx, dy = action.end_x - action.x, action.end_y - action.y
    if abs(dy) >= abs(dx):
        return "down" if dy < 0 else "up"
    return "right" if dx < 0 else "left"


def _package(app: str) -> str:
    try:
        return resolve_package(app)
    except ValueError:
        return normalize_text(app)


def match_actions(
    candidate: Action | None,
    expert: Action,
    *,
    screen_width: int,
    tolerance: float = DEFAULT_TOLERANCE,
) -> ActionMatch:
    """Label a candidate against the expert action (the paper's rule; see the module docstring).

    Details: a ``Swipe`` compared with a ``Scroll`` matches by the direction the content moves; ``Type``
    compares normalised text, and its points too when both actions give one; ``submit`` is ignored;
    ``Finished`` matches when the expert gave no answer, else the normalised answers must be equal;
    press_back/home/enter and wait match by type alone. ``None`` (an unparseable output) never matches.
    """
    if not isinstance(screen_width, int) or screen_width <= 0:
        raise ValueError(f"screen_width must be a positive int, got {screen_width!r}")
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite fraction of the screen width >= 0, got {tolerance!r}")
    if candidate is None:
        return ActionMatch(False, "the candidate's action could not be parsed")
    limit = tolerance * screen_width

    def near(a: tuple[int, int] | None, b: tuple[int, int] | None, what: str) -> ActionMatch:
        if a is None or b is None:
            return ActionMatch(True, f"{what}: no point to compare")
        dist = math.hypot(a[0] - b[0], a[1] - b[1])
        ok = dist <= limit
        rel = "within" if ok else "beyond"
        return ActionMatch(ok, f"{what}: points {dist:.0f} px apart, {rel} {limit:.0f} px ({tolerance:g} x width)")

    c_type, e_type = candidate.type, expert.type
    if {c_type, e_type} <= {"scroll", "swipe"} and c_type != e_type:
        c_dir = candidate.direction if isinstance(candidate, Scroll) else _swipe_direction(candidate)  # type: ignore[arg-type]
        e_dir = expert.direction if isinstance(expert, Scroll) else _swipe_direction(expert)  # type: ignore[arg-type]
        return ActionMatch(c_dir == e_dir, f"scroll directions {c_dir!r} vs {e_dir!r}")
    if c_type != e_type:
        return ActionMatch(False, f"action type {c_type!r} differs from the expert's {e_type!r}")
    if isinstance(expert, (Click, LongPress)):
        return near(_point(candidate), _point(expert), c_type)
    if isinstance(expert, Type):
        c_text, e_text = normalize_text(candidate.text), normalize_text(expert.text)  # type: ignore[attr-defined]
        if c_text != e_text:
            return ActionMatch(False, f"typed text {c_text!r} differs from {e_text!r}")
        return near(_point(candidate), _point(expert), "type (same text)")
    if isinstance(expert, Scroll):
        ok = candidate.direction == expert.direction  # type: ignore[attr-defined]
        return ActionMatch(ok, f"scroll directions {candidate.direction!r} vs {expert.direction!r}")  # type: ignore[attr-defined]
    if isinstance(expert, (Swipe, Drag)):
        start = near(_point(candidate), _point(expert), f"{c_type} start")
        end = near((candidate.end_x, candidate.end_y), (expert.end_x, expert.end_y), f"{c_type} end")  # type: ignore[attr-defined]
        return ActionMatch(start.match and end.match, f"{start.reason}; {end.reason}")
    if isinstance(expert, OpenApp):
        c_pkg, e_pkg = _package(candidate.app), _package(expert.app)  # type: ignore[attr-defined]
        return ActionMatch(c_pkg == e_pkg, f"open_app packages {c_pkg!r} vs {e_pkg!r}")
    if isinstance(expert, Finished):
        if not normalize_text(expert.text):
            return ActionMatch(True, "finished (the expert gave no answer to compare)")
        c_ans, e_ans = normalize_text(candidate.text), normalize_text(expert.text)  # type: ignore[attr-defined]
        return ActionMatch(c_ans == e_ans, f"answers {c_ans!r} vs {e_ans!r}")
    return ActionMatch(True, f"same action type {c_type!r}")
