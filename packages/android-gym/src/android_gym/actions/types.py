"""The typed action vocabulary shared by parsers, formatters, devices and trainers.

Every action is a frozen dataclass with a class-level ``type`` word and ``to_dict()`` giving a
JSON-friendly dict: ``{"type": ...}`` plus whichever of x, y, end_x, end_y, text, direction, app,
submit apply. ``action_from_dict`` is the inverse. Coordinates are integer screen pixels.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

DIRECTIONS = ("up", "down", "left", "right")


class ActionParseError(ValueError):
    """A model output or dict could not be read as an action; the message says what and where."""

    def __init__(self, message: str, text: str | None = None, position: int | None = None):
        self.reason = message
        self.text = text
        self.position = position
        where = ""
        if text is not None:
            snippet = text if len(text) <= 120 else text[:117] + "..."
            where = f" in {snippet!r}"
            if position is not None:
                where += f" at character {position}"
        super().__init__(message + where)


@dataclass(frozen=True)
class Action:
    """Base class of all actions. Subclasses set ``type`` and their fields."""

    type: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            out[f.name] = value
        return out


@dataclass(frozen=True)
class Click(Action):
    """Tap once at a screen point."""

    type: ClassVar[str] = "click"
    x: int
    y: int


@dataclass(frozen=True)
class LongPress(Action):
    """Press and hold at a screen point (about one second)."""

    type: ClassVar[str] = "long_press"
    x: int
    y: int


@dataclass(frozen=True)
class Swipe(Action):
    """A finger gesture from (x, y) to (end_x, end_y)."""

    type: ClassVar[str] = "swipe"
    x: int
    y: int
    end_x: int
    end_y: int


@dataclass(frozen=True)
class Scroll(Action):
    """Scroll content in ``direction`` ("down" reveals what is below: the finger moves up).

    x, y name the point to scroll at; None means the centre of the screen.
    """

    type: ClassVar[str] = "scroll"
    direction: str
    x: int | None = None
    y: int | None = None

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ActionParseError(f"scroll direction must be one of {DIRECTIONS}, got {self.direction!r}")


@dataclass(frozen=True)
class Drag(Action):
    """Press at (x, y), move to (end_x, end_y) slowly, release (drag and drop)."""

    type: ClassVar[str] = "drag"
    x: int
    y: int
    end_x: int
    end_y: int


@dataclass(frozen=True)
class Type(Action):
    """Type ``text`` into the focused field, or tap (x, y) first when given; ``submit`` presses Enter after."""

    type: ClassVar[str] = "type"
    text: str
    x: int | None = None
    y: int | None = None
    submit: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if not self.submit:
            out.pop("submit")
        return out


@dataclass(frozen=True)
class OpenApp(Action):
    """Launch an app by its name (as shown in the launcher) or package."""

    type: ClassVar[str] = "open_app"
    app: str


@dataclass(frozen=True)
class PressBack(Action):
    type: ClassVar[str] = "press_back"


@dataclass(frozen=True)
class PressHome(Action):
    type: ClassVar[str] = "press_home"


@dataclass(frozen=True)
class PressEnter(Action):
    type: ClassVar[str] = "press_enter"


@dataclass(frozen=True)
class Wait(Action):
    """Do nothing for a moment (let the screen settle)."""

    type: ClassVar[str] = "wait"


@dataclass(frozen=True)
class Finished(Action):
    """End the episode; ``text`` is the answer for question tasks (None when there is none)."""

    type: ClassVar[str] = "finished"
    text: str | None = None


ACTION_TYPES: dict[str, type[Action]] = {
    cls.type: cls
    for cls in (Click, LongPress, Swipe, Scroll, Drag, Type, OpenApp, PressBack, PressHome, PressEnter, Wait, Finished)
}

_INT_FIELDS = {"x", "y", "end_x", "end_y"}
_TEXT_FIELDS = {"text", "direction", "app"}


def action_from_dict(data: dict[str, Any]) -> Action:
    """Build an action from its ``to_dict()`` form; unknown types or fields raise ActionParseError."""
    if not isinstance(data, dict):
        raise ActionParseError(f"an action dict must be a dict, got {type(data).__name__}")
    kind = data.get("type")
    cls = ACTION_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ActionParseError(f"unknown action type {kind!r}; expected one of {sorted(ACTION_TYPES)}")
    names = {f.name for f in dataclasses.fields(cls)}
    extra = set(data) - names - {"type"}
    if extra:
        raise ActionParseError(f"action {kind!r} does not take field(s) {sorted(extra)}")
    kwargs: dict[str, Any] = {}
    for name in names:
        if name not in data:
            continue
        value = data[name]
        if name in _INT_FIELDS and value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ActionParseError(f"field {name!r} of {kind!r} must be a finite number, got {value!r}")
            value = int(round(value))
        elif name in _TEXT_FIELDS and value is not None and not isinstance(value, str):
            raise ActionParseError(f"field {name!r} of {kind!r} must be a string, got {type(value).__name__}")
        elif name == "submit" and not isinstance(value, bool):
            raise ActionParseError(f"field 'submit' of {kind!r} must be true or false, got {value!r}")
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:
        missing = sorted(f.name for f in dataclasses.fields(cls) if f.name not in kwargs
                         and f.default is dataclasses.MISSING)
        raise ActionParseError(f"action {kind!r} is missing field(s) {missing}") from exc
