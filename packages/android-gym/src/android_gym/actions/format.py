"""Write typed actions back in the formats agents are trained on (SFT targets, prompts, exports).

``format_action(action, style, **opts)`` is the inverse of :func:`~android_gym.actions.parse.parse_action`:
for every action a style can express, ``parse_action(format_action(a, style, **opts), **opts) == a``
where ``opts`` are the shared coordinate options (``screen_size``, ``coordinates``, ``image_size``,
``factor``, ``min_pixels``, ``max_pixels``). In the lossy spaces (``relative1000``, and
``smart_resize`` when the resized image is smaller than the screen) numbers are written as integers,
as a model writes them, so a point comes back within one model unit of where it was; points that
lie on that grid come back exactly.

Styles and what they cannot express (formatting those raises :class:`ActionFormatError`):

``"uitars"`` / ``"uitars_point"``
    ``Action: click(start_box='<|box_start|>(x,y)<|box_end|>')`` or ``click(point='<point>x y</point>')``;
    ``thought=`` adds a ``Thought:`` line. Not expressible: a Type whose text ends in a newline
    (a trailing newline means submit), a Type with empty text and no target, an empty Finished text
    (read back as None).
``"androidlab"``
    ``do(action="Tap", element=[x, y])`` ... ``finish(message="...")``. Not expressible: Drag,
    Scroll (AndroidLab only swipes), a Type without submit (its executor always presses Enter),
    a Swipe other than AndroidLab's fixed gestures (:func:`~android_gym.actions.gestures.androidlab_swipe`;
    needs ``screen_size``), an empty Finished text.
``"androidworld"``
    A JSONAction as JSON text; ``thought=`` adds ``Reason: ...`` and ``Action:``. Not expressible:
    Drag, a Type without submit (``input_text`` presses Enter), a Swipe other than AndroidWorld's
    four full-screen gestures (needs ``screen_size``), an empty Finished text. A Click is written
    as ``click`` (``double_tap`` reads back as a Click too).
``"json"``
    Our own ``to_dict()`` as JSON; expresses every action.

In every style a point outside a known screen is refused (it would read back clamped).
"""

from __future__ import annotations

import json
import re
from typing import Any

from android_gym.actions.coords import FACTOR, MAX_PIXELS, MIN_PIXELS, CoordinateSpace, coordinate_space
from android_gym.actions.gestures import ANDROIDLAB_DISTANCES, androidlab_swipe, androidworld_swipe
from android_gym.actions.types import (
    DIRECTIONS,
    Action,
    ActionParseError,
    Click,
    Drag,
    Finished,
    LongPress,
    OpenApp,
    PressBack,
    PressEnter,
    PressHome,
    Scroll,
    Swipe,
    Type,
    Wait,
)

FORMAT_STYLES = ("uitars", "uitars_point", "androidlab", "androidworld", "json")

_MARKER_RE = re.compile(r"(?<![A-Za-z0-9_])Action\s*[:：]|tool_call>")
_ANDROIDLAB_CALL_RE = re.compile(r"(?<![\w.])(?:do|finish)\s*\(")


class ActionFormatError(ValueError):
    """The action cannot be written in the chosen style (the message says why and what would work)."""


def _quote(text: str, quote: str) -> str:
    escaped = (text.replace("\\", "\\\\").replace(quote, "\\" + quote)
               .replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t"))
    return quote + escaped + quote


class _Writer:
    def __init__(self, action: Action, style: str, space: CoordinateSpace):
        self.action = action
        self.style = style
        self.space = space

    def refuse(self, why: str) -> ActionFormatError:
        return ActionFormatError(f"style {self.style!r} cannot express {self.action!r}: {why}")

    def point(self, x: int | None, y: int | None) -> tuple[int, int]:
        if x is None or y is None:
            raise self.refuse("x and y must both be set")
        screen = self.space.screen_size
        if screen is not None and not (0 <= x < screen[0] and 0 <= y < screen[1]):
            raise self.refuse(f"point ({x}, {y}) lies outside the {screen[0]}x{screen[1]} screen")
        return self.space.from_screen(x, y)

    def optional_point(self, x: int | None, y: int | None) -> tuple[int, int] | None:
        if x is None and y is None:
            return None
        return self.point(x, y)


def format_action(
    action: Action,
    style: str = "uitars",
    *,
    thought: str | None = None,
    screen_size: tuple[int, int] | None = None,
    coordinates: str = "auto",
    image_size: tuple[int, int] | None = None,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
    factor: int = FACTOR,
) -> str:
    """``action`` written in ``style`` (see the module notes); coordinate options as in parsing.

    ``thought`` prefixes ``Thought: ...`` (UI-TARS, AndroidLab) or ``Reason: ...`` (AndroidWorld);
    it must not itself contain an ``Action:`` line or a call the parser would pick up.
    Raises :class:`ActionFormatError` when the style cannot express the action.
    """
    if not isinstance(action, Action):
        raise TypeError(f"format_action needs an Action, got {type(action).__name__}")
    if style not in FORMAT_STYLES:
        raise ValueError(f"style must be one of {FORMAT_STYLES}, got {style!r}")
    space = coordinate_space(coordinates, screen_size=screen_size, image_size=image_size, factor=factor,
                             min_pixels=min_pixels, max_pixels=max_pixels)
    writer = _Writer(action, style, space)
    if thought is not None:
        if style == "json":
            raise ValueError("style 'json' has no place for a thought")
        if _MARKER_RE.search(thought) or (style == "androidlab" and _ANDROIDLAB_CALL_RE.search(thought)):
            raise ValueError(f"thought must not contain an 'Action:' marker, a tool call or an action call: {thought!r}")
    if style in ("uitars", "uitars_point"):
        body = "Action: " + _uitars(writer, point_form=style == "uitars_point")
        return body if thought is None else f"Thought: {thought}\n{body}"
    if style == "androidlab":
        body = _androidlab(writer)
        return body if thought is None else f"Thought: {thought}\nAction: {body}"
    if style == "androidworld":
        body = json.dumps(_androidworld(writer), ensure_ascii=False)
        return body if thought is None else f"Reason: {thought}\nAction: {body}"
    for name in ("x", "end_x"):
        if getattr(action, name, None) is not None:
            writer.point(getattr(action, name), getattr(action, name.replace("x", "y")))
    return json.dumps(action.to_dict(), ensure_ascii=False)


def _uitars(w: _Writer, *, point_form: bool) -> str:
    a = w.action

    def where(x: int | None, y: int | None, key: str) -> str:
        px, py = w.point(x, y)
        if point_form:
            return f"{key}='<point>{px} {py}</point>'"
        return f"{key}='<|box_start|>({px},{py})<|box_end|>'"

    start, end = ("point", "end_point") if point_form else ("start_box", "end_box")
    drag_start = "start_point" if point_form else "start_box"
    if isinstance(a, Click):
        return f"click({where(a.x, a.y, start)})"
    if isinstance(a, LongPress):
        return f"long_press({where(a.x, a.y, start)})"
    if isinstance(a, Type):
        if a.text.endswith("\n"):
            raise w.refuse("UI-TARS reads a trailing newline in content as submit")
        if not a.text and (not a.submit or a.x is None):
            raise w.refuse("empty text: use PressEnter, or give a target and submit=True")
        content = _quote(a.text + ("\n" if a.submit else ""), "'")
        if a.x is None and a.y is None:
            return f"type(content={content})"
        return f"type(content={content}, {where(a.x, a.y, start)})"
    if isinstance(a, Scroll):
        if a.x is None and a.y is None:
            return f"scroll(direction='{a.direction}')"
        return f"scroll({where(a.x, a.y, start)}, direction='{a.direction}')"
    if isinstance(a, (Drag, Swipe)):
        name = "drag" if isinstance(a, Drag) else "swipe"
        return f"{name}({where(a.x, a.y, drag_start)}, {where(a.end_x, a.end_y, end)})"
    if isinstance(a, OpenApp):
        return f"open_app(app_name={_quote(_app_name(w), chr(39))})"
    if isinstance(a, (PressHome, PressBack, PressEnter, Wait)):
        return {PressHome: "press_home()", PressBack: "press_back()", PressEnter: "press_enter()",
                Wait: "wait()"}[type(a)]
    if isinstance(a, Finished):
        if a.text is None:
            return "finished()"
        if not a.text:
            raise w.refuse("an empty answer reads back as no answer; use text=None")
        return f"finished(content={_quote(a.text, chr(39))})"
    raise w.refuse("unknown action class")


def _app_name(w: _Writer) -> str:
    app = w.action.app  # type: ignore[attr-defined]
    if not app or app != app.strip():
        raise w.refuse("the app name must be non-empty without surrounding spaces")
    return app


def _androidlab(w: _Writer) -> str:
    a = w.action

    def element(x: int | None, y: int | None) -> str:
        px, py = w.point(x, y)
        return f"element=[{px}, {py}]"

    if isinstance(a, Click):
        return f'do(action="Tap", {element(a.x, a.y)})'
    if isinstance(a, LongPress):
        return f'do(action="Long Press", {element(a.x, a.y)})'
    if isinstance(a, Type):
        if not a.submit:
            raise w.refuse("AndroidLab's Type always presses Enter after typing (use submit=True)")
        if not a.text:
            raise w.refuse("AndroidLab's Type needs non-empty text")
        text = _quote(a.text, '"')
        if a.x is None and a.y is None:
            return f'do(action="Type", text={text})'
        return f'do(action="Type", {element(a.x, a.y)}, text={text})'
    if isinstance(a, Swipe):
        return _androidlab_swipe(w, a)
    if isinstance(a, (PressHome, PressBack, PressEnter, Wait)):
        word = {PressHome: "Home", PressBack: "Back", PressEnter: "Enter", Wait: "Wait"}[type(a)]
        return f'do(action="{word}")'
    if isinstance(a, OpenApp):
        return f'do(action="Launch", app={_quote(_app_name(w), chr(34))})'
    if isinstance(a, Finished):
        if a.text is None:
            return "finish()"
        if not a.text:
            raise w.refuse("an empty message reads back as no message; use text=None")
        return f"finish(message={_quote(a.text, chr(34))})"
    if isinstance(a, Scroll):
        raise w.refuse("AndroidLab has no scroll; write the equivalent Swipe (finger opposite to the content)")
    if isinstance(a, Drag):
        raise w.refuse("AndroidLab has no drag")
    raise w.refuse("unknown action class")


def _androidlab_swipe(w: _Writer, a: Swipe) -> str:
    screen = w.space.screen_size
    if screen is None:
        raise w.refuse("AndroidLab swipe lengths depend on the screen width: pass screen_size")
    model = w.point(a.x, a.y)
    start = w.space.to_screen(*model)
    for direction in DIRECTIONS:
        for dist in ANDROIDLAB_DISTANCES:
            try:
                gesture = androidlab_swipe(start[0], start[1], direction, dist, screen)
            except ActionParseError:
                continue
            if gesture == a:
                return (f'do(action="Swipe", element=[{model[0]}, {model[1]}], '
                        f'direction="{direction}", dist="{dist}")')
    raise w.refuse("AndroidLab swipes move 2 (vertical) or 2.5 (horizontal) units of width/10 x 1/2/10 "
                   "from the start point; this one is not among them")


def _androidworld(w: _Writer) -> dict[str, Any]:
    a = w.action

    def at(x: int | None, y: int | None) -> dict[str, int]:
        point = w.optional_point(x, y)
        return {} if point is None else {"x": point[0], "y": point[1]}

    if isinstance(a, Click):
        return {"action_type": "click", **at(a.x, a.y)}
    if isinstance(a, LongPress):
        return {"action_type": "long_press", **at(a.x, a.y)}
    if isinstance(a, Type):
        if not a.submit:
            raise w.refuse("AndroidWorld's input_text always presses Enter after typing (use submit=True)")
        if not a.text:
            raise w.refuse("input_text needs non-empty text")
        return {"action_type": "input_text", "text": a.text, **at(a.x, a.y)}
    if isinstance(a, Scroll):
        return {"action_type": "scroll", "direction": a.direction, **at(a.x, a.y)}
    if isinstance(a, Swipe):
        screen = w.space.screen_size
        if screen is None:
            raise w.refuse("AndroidWorld swipes span the screen: pass screen_size")
        for direction in DIRECTIONS:
            if androidworld_swipe(direction, screen) == a:
                return {"action_type": "swipe", "direction": direction}
        raise w.refuse("AndroidWorld only swipes edge to edge through the middle of the screen")
    if isinstance(a, Drag):
        raise w.refuse("AndroidWorld has no drag")
    if isinstance(a, OpenApp):
        return {"action_type": "open_app", "app_name": _app_name(w)}
    if isinstance(a, (PressHome, PressBack, PressEnter, Wait)):
        kind = {PressHome: "navigate_home", PressBack: "navigate_back", PressEnter: "keyboard_enter",
                Wait: "wait"}[type(a)]
        return {"action_type": kind}
    if isinstance(a, Finished):
        if a.text is None:
            return {"action_type": "status", "goal_status": "complete"}
        if not a.text:
            raise w.refuse("an empty answer reads back as no answer; use text=None")
        return {"action_type": "answer", "text": a.text}
    raise w.refuse("unknown action class")
