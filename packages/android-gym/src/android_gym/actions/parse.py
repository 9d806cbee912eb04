"""Read model outputs (UI-TARS, AndroidLab, AndroidWorld JSON, our own dicts) into typed actions.

``parse_action(output)`` returns one :class:`~android_gym.actions.types.Action`;
``parse_actions(output)`` returns every action an output holds. Nothing here runs ``eval``/``exec``:
calls are read by :mod:`android_gym.actions.call_syntax`, JSON by :mod:`json`. Anything malformed
raises :class:`ActionParseError` saying what was wrong and where.

Formats (``style="auto"`` picks one from the text; pass a style to force it):

``"uitars"`` (also ``"uitars_point"``: the same reader)
    ``Thought: ...\\nAction: click(start_box='<|box_start|>(x,y)<|box_end|>')``, with optional
    ``Reflection:`` / ``Action_Summary:`` / ``<think>`` parts before it and a full-width colon
    (``Action：``) allowed. Without an ``Action:`` line the text must be the call(s) alone.
    Coordinates: ``<|box_start|>(x,y)<|box_end|>``, ``(x,y)``, ``[x,y]``, ``[x1,y1,x2,y2]`` (centre),
    ``<point>x y</point>``, ``<bbox>x1 y1 x2 y2</bbox>``. Arguments ``start_box``/``point``/
    ``start_point`` and ``end_box``/``end_point``. Functions (names match in any case):
    click, left_single, left_double, select -> Click; long_press; type(content= or text=, optional
    point) -> Type, a trailing newline (``\\n`` or a real one) meaning submit; scroll(direction,
    optional point); drag(start, end); swipe(start, end); open_app(app_name=); press_home();
    press_back(); press_enter(); hotkey(key='enter'|'return'|'home'|'back'); wait();
    finished(content=). Several calls may follow one ``Action:`` (or repeat it). The Seed XML tool
    call (``<seed:tool_call><function=click><parameter=point>...``) and a ``<tool_call>`` JSON
    wrapper whose parameters carry an ``action`` string are read too.
``"androidlab"``
    ``do(action="Tap"|"Long Press"|"Type"|"Swipe"|"Home"|"Back"|"Enter"|"Wait"|"Launch", element=
    [x1,y1,x2,y2] or [x,y], text=, direction=, dist=, app=)`` and ``finish(message=)``, anywhere in
    the text (code fences are fine). AndroidLab's executor presses Enter after typing, so "Type" is
    ``Type(submit=True)``; "Swipe" becomes the exact finger path AndroidLab performs
    (:func:`~android_gym.actions.gestures.androidlab_swipe`, needs ``screen_size``).
``"androidworld"``
    An AndroidWorld JSONAction, as a dict or JSON text (optionally after ``Action:``):
    click / double_tap (both Click) / long_press / input_text (Type with submit: AndroidWorld taps,
    types and presses Enter) / scroll / swipe (AndroidWorld's full-screen gesture, needs
    ``screen_size``) / navigate_home / navigate_back / keyboard_enter / open_app / wait /
    status (complete or infeasible: both Finished, the infeasible flag is not kept) /
    answer (Finished with the answer text). ``index`` is resolved through ``elements=``.
``"json"``
    Our own ``Action.to_dict()`` form (a dict or JSON text), through ``action_from_dict``.

Coordinates in UI-TARS, AndroidLab and AndroidWorld outputs are mapped to screen pixels by the
``coordinates=`` space (see :mod:`android_gym.actions.coords`; ``"auto"`` means absolute pixels).
Our own ``json`` form is screen pixels already. Results are clamped to the screen when
``screen_size`` is known.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from android_gym.actions.call_syntax import Call, CallReader, read_literal
from android_gym.actions.coords import (
    FACTOR,
    MAX_PIXELS,
    MIN_PIXELS,
    CoordinateSpace,
    coordinate_space,
    point_from_value,
)
from android_gym.actions.gestures import androidlab_swipe, androidworld_swipe
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
    action_from_dict,
)

PARSE_STYLES = ("auto", "uitars", "uitars_point", "androidlab", "androidworld", "json")

_ACTION_MARK_RE = re.compile(r"(?<![A-Za-z0-9_])Action\s*[:：]")
_THINK_BLOCK_RE = re.compile(r"<(think[\w-]*|Thought)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_PROSE_PREFIX_RE = re.compile(r"\s*(Thought|Reflection|Action_Summary|Reason|Step)\s*[:：]", re.IGNORECASE)
# Between calls of a UI-TARS action section: whitespace, repeated "Action:", special tokens,
# wrapper tags such as </computer_env> or </Output>, and code fences.
_JUNK_RE = re.compile(r"\s+|Action\s*[:：]|<\|[^|<>\n]*\|>|</?[A-Za-z_][\w:.\-]*\s*/?>|```[A-Za-z]*")
_CALL_START_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*\(")
_ANDROIDLAB_CALL_RE = re.compile(r"(?<![\w.])(?:do\s*\(\s*(?:action\s*=|['\"])|finish\s*\()")
_SEED_BLOCK_RE = re.compile(r"<seed:tool_call>(.*?)(?:</seed:tool_call>|$)", re.DOTALL)
_SEED_FUNCTION_RE = re.compile(
    r"<function(?:=|\s+name\s*=\s*)['\"]?([A-Za-z_]\w*)['\"]?\s*>(.*?)</function>", re.DOTALL)
_SEED_PARAM_RE = re.compile(
    r"<parameter(?:=|\s+name\s*=\s*)['\"]?([A-Za-z_]\w*)['\"]?\s*>(.*?)</parameter>", re.DOTALL)
_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FENCE_RE = re.compile(r"```[A-Za-z]*")


@dataclass(frozen=True)
class _Context:
    space: CoordinateSpace
    elements: Sequence[Any] | None

    @property
    def screen_size(self) -> tuple[int, int] | None:
        return self.space.screen_size

    def point(self, value: Any, what: str) -> tuple[int, int]:
        return self.space.to_screen(*point_from_value(value, what))


def parse_actions(
    output: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
    *,
    style: str = "auto",
    screen_size: tuple[int, int] | None = None,
    coordinates: str = "auto",
    image_size: tuple[int, int] | None = None,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
    factor: int = FACTOR,
    elements: Sequence[Any] | None = None,
) -> list[Action]:
    """Every action in a model output, in order (never empty: no action raises ActionParseError).

    ``output`` is model text, an action dict (AndroidWorld JSONAction or our ``to_dict`` form) or a
    list of such dicts. ``screen_size``/``image_size`` are (width, height). See the module notes for
    ``style`` and ``coordinates``. ``elements`` resolves AndroidWorld ``index`` fields: a sequence of
    objects with a ``center`` (x, y) in screen pixels (AndroidWorld UIElements work too).
    Bad options (unknown style or space, a space that needs ``screen_size``) raise ``ValueError``.
    """
    if style not in PARSE_STYLES:
        raise ValueError(f"style must be one of {PARSE_STYLES}, got {style!r}")
    ctx = _Context(
        space=coordinate_space(coordinates, screen_size=screen_size, image_size=image_size,
                               factor=factor, min_pixels=min_pixels, max_pixels=max_pixels),
        elements=elements,
    )
    if isinstance(output, Mapping):
        return [_action_from_mapping(output, style, ctx)]
    if isinstance(output, (bytes, bytearray)):
        raise ActionParseError("got bytes: decode the model output to str first")
    if isinstance(output, Sequence) and not isinstance(output, str):
        if not output:
            raise ActionParseError("empty list of actions")
        return [_action_from_mapping(item, style, ctx) for item in output]
    if not isinstance(output, str):
        raise ActionParseError(f"expected model output text or an action dict, got {type(output).__name__}")
    actions = _parse_text(output, style, ctx)
    if not actions:
        raise ActionParseError("no action found", text=output)
    return actions


def parse_action(
    output: str | Mapping[str, Any],
    *,
    style: str = "auto",
    screen_size: tuple[int, int] | None = None,
    coordinates: str = "auto",
    image_size: tuple[int, int] | None = None,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
    factor: int = FACTOR,
    elements: Sequence[Any] | None = None,
    multiple: str = "first",
) -> Action:
    """The action a model output asks for; options as in :func:`parse_actions`.

    Some outputs hold several actions (UI-TARS: ``Action: click(...)\\n\\ntype(...)``). One env step
    executes one action, so by default the first is returned (the whole output is still checked:
    a malformed later action raises). ``multiple="error"`` raises instead; use
    :func:`parse_actions` to get them all.
    """
    if multiple not in ("first", "error"):
        raise ValueError(f"multiple must be 'first' or 'error', got {multiple!r}")
    actions = parse_actions(output, style=style, screen_size=screen_size, coordinates=coordinates,
                            image_size=image_size, min_pixels=min_pixels, max_pixels=max_pixels,
                            factor=factor, elements=elements)
    if len(actions) > 1 and multiple == "error":
        kinds = ", ".join(a.type for a in actions)
        raise ActionParseError(f"expected one action, found {len(actions)} ({kinds})",
                               text=output if isinstance(output, str) else None)
    return actions[0]


# ---------------------------------------------------------------------------------------------
# Text: style detection and the action section


def _parse_text(text: str, style: str, ctx: _Context) -> list[Action]:
    if not text.strip():
        raise ActionParseError("the model output is empty")
    if style in ("json", "androidworld"):
        return [_action_from_mapping(obj, style, ctx) for obj in _json_objects(text, _section_start(text))]
    if style == "androidlab":
        return _androidlab_actions(text, 0, ctx)
    if style in ("uitars", "uitars_point"):
        return _uitars_text(text, ctx)
    return _auto_text(text, ctx)


def _blank_thinking(text: str) -> str:
    """``text`` with ``<think>...</think>``-style blocks blanked out (same length, so positions hold)."""
    return _THINK_BLOCK_RE.sub(lambda m: " " * len(m.group(0)), text)


def _find_marker(text: str) -> re.Match[str] | None:
    """The first ``Action:`` marker outside thinking blocks."""
    return _ACTION_MARK_RE.search(_blank_thinking(text))


def _section_start(text: str) -> int:
    """Where the action part starts: after the first ``Action:`` marker, else the beginning."""
    m = _find_marker(text)
    return m.end() if m else 0


def _first_meaningful(text: str, pos: int) -> int:
    """Skip whitespace, code fences and further ``Action:`` markers."""
    while pos < len(text):
        m = _FENCE_RE.match(text, pos) or _ACTION_MARK_RE.match(text, pos)
        if m and m.end() > pos:
            pos = m.end()
        elif text[pos].isspace():
            pos += 1
        else:
            break
    return pos


def _auto_text(text: str, ctx: _Context) -> list[Action]:
    stripped = text.lstrip()
    if stripped[:1] in "{[":
        return [_action_from_mapping(obj, "auto", ctx) for obj in _json_objects(text, 0)]
    mark = _find_marker(text)
    head_end = mark.start() if mark else len(text)
    if "<seed:tool_call>" in text[:head_end] or "<tool_call>" in text[:head_end]:
        return _uitars_text(text, ctx)
    if mark:
        first = _first_meaningful(text, mark.end())
        if _ANDROIDLAB_CALL_RE.match(text, first):
            return _androidlab_actions(text, mark.end(), ctx)
        if text[first:first + 1] in ("{", "["):
            return [_action_from_mapping(obj, "auto", ctx) for obj in _json_objects(text, mark.end())]
        return _uitars_text(text, ctx)
    if _ANDROIDLAB_CALL_RE.search(text):
        return _androidlab_actions(text, 0, ctx)
    first = _first_meaningful(text, 0)
    if text[first:first + 1] in ("{", "["):
        return [_action_from_mapping(obj, "auto", ctx) for obj in _json_objects(text, 0)]
    return _uitars_text(text, ctx)


# ---------------------------------------------------------------------------------------------
# UI-TARS


def _uitars_text(text: str, ctx: _Context) -> list[Action]:
    mark = _find_marker(text)
    head_end = mark.start() if mark else len(text)
    if "<seed:tool_call>" in text[:head_end]:
        return _seed_actions(text, ctx)
    if "<tool_call>" in text[:head_end]:
        return _tool_call_actions(text, ctx)
    if mark:
        return _uitars_section(text, mark.end(), ctx, after_marker=True)
    # No "Action:" line: the text must be the call(s) alone, after any <think> block.
    cleaned = _blank_thinking(text)
    prose = _PROSE_PREFIX_RE.match(cleaned)
    if prose:
        raise ActionParseError(f"no 'Action:' line: the output has a {prose.group(1)}: part but no action "
                               "after it", text=text)
    return _uitars_section(cleaned, 0, ctx, after_marker=False)


def _uitars_section(text: str, start: int, ctx: _Context, *, after_marker: bool) -> list[Action]:
    reader = CallReader(text)
    calls: list[Call] = []
    pos = start
    while pos < len(text):
        junk = _JUNK_RE.match(text, pos)
        if junk and junk.end() > pos:
            pos = junk.end()
            continue
        if _CALL_START_RE.match(text, pos):
            call = reader.read_call(pos)
            calls.append(call)
            pos = call.end
            continue
        snippet = text[pos:pos + 30]
        raise reader.fail(f"unexpected text {snippet!r} where an action call such as click(...) should be", pos)
    if not calls:
        if after_marker:
            raise ActionParseError("nothing follows 'Action:': no action call", text=text[max(0, start - 60):])
        raise ActionParseError("no action call in the output", text=text)
    return [_uitars_call_action(call, ctx) for call in calls]


_CLICK_NAMES = {"click", "left_single", "left_double", "double_click", "tap", "select"}
_DESKTOP_NAMES = {"right_single", "right_double", "middle_single", "mouse_move", "mouse_down", "mouse_up",
                  "hover", "move_to", "open_computer", "navigate", "navigate_back", "screenshot"}
_START_KEYS = ("start_box", "point", "start_point")
_END_KEYS = ("end_box", "end_point")
_HOTKEYS: dict[str, type[Action]] = {"enter": PressEnter, "return": PressEnter, "home": PressHome,
                                     "back": PressBack}
_UITARS_NAMES = sorted(_CLICK_NAMES | {"long_press", "type", "scroll", "drag", "swipe", "open_app",
                                       "press_home", "press_back", "press_enter", "hotkey", "wait",
                                       "finished"})
# The argument a lone positional value stands for.
_PRIMARY_ARG = {**{n: "start_box" for n in _CLICK_NAMES}, "long_press": "start_box", "type": "content",
                "open_app": "app_name", "finished": "content", "hotkey": "key"}


def _call_error(call: Call, message: str) -> ActionParseError:
    return ActionParseError(message, text=call.text)


def _uitars_call_action(call: Call, ctx: _Context) -> Action:
    name = call.name.lower()
    kwargs = dict(call.kwargs)
    if call.args:
        primary = _PRIMARY_ARG.get(name)
        if primary is None or len(call.args) > 1 or primary in kwargs:
            raise _call_error(call, f"{call.name}() got positional arguments it does not take; write key='value'")
        kwargs[primary] = call.args[0]

    def take(allowed: set[str]) -> None:
        extra = set(kwargs) - allowed
        if extra:
            raise _call_error(call, f"{call.name}() got unexpected argument(s) {sorted(extra)}; "
                                    f"it takes {sorted(allowed) or 'no arguments'}")

    def one_of(keys: Sequence[str]) -> tuple[str, Any] | None:
        found = [k for k in keys if k in kwargs]
        if len(found) > 1:
            raise _call_error(call, f"{call.name}() got both {found[0]}= and {found[1]}=")
        return (found[0], kwargs[found[0]]) if found else None

    def start_point(required: bool) -> tuple[int, int] | None:
        got = one_of(_START_KEYS)
        if got is None:
            if not required:
                return None
            if any(k in kwargs for k in _END_KEYS):
                raise _call_error(call, f"{call.name}() needs start_box= or point=; it only got an end point")
            raise _call_error(call, f"{call.name}() needs coordinates: start_box='(x,y)' or point='<point>x y</point>'")
        key, value = got
        return ctx.point(value, f"{key} of {call.name}()")

    def end_point() -> tuple[int, int]:
        got = one_of(_END_KEYS)
        if got is None:
            raise _call_error(call, f"{call.name}() needs an end point: end_box= or end_point=")
        key, value = got
        return ctx.point(value, f"{key} of {call.name}()")

    if name in _CLICK_NAMES or name == "long_press":
        x, y = start_point(required=True)  # type: ignore[misc]
        take(set(_START_KEYS))
        return LongPress(x=x, y=y) if name == "long_press" else Click(x=x, y=y)
    if name == "type":
        take({"content", "text", *_START_KEYS})
        got = one_of(("content", "text"))
        if got is None:
            raise _call_error(call, "type() needs content='...'")
        content = got[1]
        if not isinstance(content, str):
            raise _call_error(call, f"type() content must be a string, got {content!r}")
        point = start_point(required=False)
        return _type_action(content, point, call)
    if name == "scroll":
        take({"direction", *_START_KEYS})
        if "direction" not in kwargs:
            raise _call_error(call, f"scroll() needs direction= one of {DIRECTIONS}")
        direction = _direction(kwargs["direction"], call)
        point = start_point(required=False)
        if point is None:
            return Scroll(direction=direction)
        return Scroll(direction=direction, x=point[0], y=point[1])
    if name in ("drag", "swipe"):
        take(set(_START_KEYS) | set(_END_KEYS))
        x, y = start_point(required=True)  # type: ignore[misc]
        end_x, end_y = end_point()
        cls = Drag if name == "drag" else Swipe
        return cls(x=x, y=y, end_x=end_x, end_y=end_y)
    if name == "open_app":
        take({"app_name", "app"})
        got = one_of(("app_name", "app"))
        if got is None or not isinstance(got[1], str) or not got[1].strip():
            raise _call_error(call, "open_app() needs a non-empty app_name='...'")
        return OpenApp(app=got[1].strip())
    if name in ("press_home", "press_back", "press_enter", "wait"):
        take(set())
        return {"press_home": PressHome, "press_back": PressBack, "press_enter": PressEnter,
                "wait": Wait}[name]()
    if name in ("hotkey", "press", "key"):
        take({"key"})
        key = kwargs.get("key")
        if not isinstance(key, str) or not key.strip():
            raise _call_error(call, f"{call.name}() needs key='...'")
        normal = " ".join(key.lower().split())
        if normal not in _HOTKEYS:
            raise _call_error(call, f"{call.name}(key={key!r}) has no Android equivalent; "
                                    f"supported keys: {sorted(_HOTKEYS)}")
        return _HOTKEYS[normal]()
    if name == "finished":
        take({"content"})
        content = kwargs.get("content")
        if content is not None and not isinstance(content, str):
            raise _call_error(call, f"finished() content must be a string, got {content!r}")
        return Finished(text=content or None)
    if name == "call_user":
        raise _call_error(call, "call_user() hands control to a person; there is no Android action for it")
    if name in _DESKTOP_NAMES:
        raise _call_error(call, f"{call.name}() is a desktop/browser action with no Android equivalent")
    raise _call_error(call, f"unknown action {call.name}(); expected one of {_UITARS_NAMES}")


def _type_action(content: str, point: tuple[int, int] | None, call: Call) -> Action:
    submit = content.endswith("\n")
    text = content.rstrip("\n") if submit else content
    if not text:
        if submit:
            return PressEnter() if point is None else Type(text="", x=point[0], y=point[1], submit=True)
        raise _call_error(call, f"{call.name}() content is empty: nothing to type")
    if point is None:
        return Type(text=text, submit=submit)
    return Type(text=text, x=point[0], y=point[1], submit=submit)


def _direction(value: Any, call: Call) -> str:
    if isinstance(value, str):
        normal = value.strip().lower()
        if normal in DIRECTIONS:
            return normal
    raise _call_error(call, f"bad direction {value!r}: expected one of {DIRECTIONS}")


def _seed_actions(text: str, ctx: _Context) -> list[Action]:
    actions: list[Action] = []
    for block in _SEED_BLOCK_RE.finditer(text):
        body = block.group(1)
        covered = 0
        for fn in _SEED_FUNCTION_RE.finditer(body):
            gap = body[covered:fn.start()]
            if gap.strip():
                raise ActionParseError(f"unsupported tool-call layout: unexpected {gap.strip()[:40]!r} "
                                       "(expected <function=NAME><parameter=KEY>VALUE</parameter></function>)",
                                       text=block.group(0))
            covered = fn.end()
            params: dict[str, Any] = {}
            inner = fn.group(2)
            inner_covered = 0
            for param in _SEED_PARAM_RE.finditer(inner):
                gap = inner[inner_covered:param.start()]
                if gap.strip():
                    raise ActionParseError(f"unexpected {gap.strip()[:40]!r} inside <function={fn.group(1)}>",
                                           text=fn.group(0))
                inner_covered = param.end()
                value = param.group(2).strip()
                if param.group(1) in ("content", "text") and value.endswith("\\n"):
                    value = value[:-2] + "\n"
                params[param.group(1)] = value
            if inner[inner_covered:].strip():
                raise ActionParseError(f"unexpected {inner[inner_covered:].strip()[:40]!r} inside "
                                       f"<function={fn.group(1)}>", text=fn.group(0))
            call = Call(name=fn.group(1), kwargs=params, start=0, end=len(fn.group(0)), source=fn.group(0))
            actions.append(_uitars_call_action(call, ctx))
        rest = body[covered:].strip()
        if rest:
            raise ActionParseError(f"unsupported tool-call layout: unexpected {rest[:40]!r} "
                                   "(expected <function=NAME><parameter=KEY>VALUE</parameter></function>)",
                                   text=block.group(0))
    if not actions:
        raise ActionParseError("the <seed:tool_call> block holds no <function=...> call", text=text)
    return actions


def _tool_call_actions(text: str, ctx: _Context) -> list[Action]:
    actions: list[Action] = []
    for block in _TOOL_CALL_RE.finditer(text):
        body = block.group(1).strip()
        obj = _loads_lenient(body, block.group(0))
        if not isinstance(obj, Mapping):
            raise ActionParseError("a <tool_call> must hold a JSON object", text=block.group(0))
        args = obj.get("parameters", obj.get("arguments"))
        if isinstance(args, str):
            args = _loads_lenient(args, block.group(0))
        if isinstance(args, Mapping) and isinstance(args.get("action"), str):
            actions.extend(_uitars_text(args["action"], ctx))
        elif isinstance(obj.get("action"), str):
            actions.extend(_uitars_text(obj["action"], ctx))
        elif isinstance(obj.get("name"), str) and isinstance(args, Mapping):
            call = Call(name=obj["name"], kwargs=dict(args), start=0, end=len(body), source=body)
            actions.append(_uitars_call_action(call, ctx))
        else:
            raise ActionParseError("the <tool_call> has no 'action' string and no name/arguments",
                                   text=block.group(0))
    return actions


# ---------------------------------------------------------------------------------------------
# AndroidLab


_ANDROIDLAB_ACTIONS = ("Tap", "Long Press", "Type", "Swipe", "Home", "Back", "Enter", "Wait", "Launch")
_ANDROIDLAB_KEYS = {"action", "element", "text", "direction", "dist", "app"}


def _androidlab_actions(text: str, start: int, ctx: _Context) -> list[Action]:
    reader = CallReader(text)
    actions: list[Action] = []
    pos = start
    while True:
        m = _ANDROIDLAB_CALL_RE.search(text, pos)
        if not m:
            break
        call = reader.read_call(m.start())
        actions.append(_androidlab_call_action(call, ctx))
        pos = call.end
    if not actions:
        raise ActionParseError("no AndroidLab do(action=...) or finish(...) call found", text=text)
    return actions


def _androidlab_call_action(call: Call, ctx: _Context) -> Action:
    kwargs = dict(call.kwargs)
    if call.name == "finish":
        if call.args:
            if len(call.args) > 1 or "message" in kwargs:
                raise _call_error(call, "finish() takes one message")
            kwargs["message"] = call.args[0]
        extra = set(kwargs) - {"message"}
        if extra:
            raise _call_error(call, f"finish() got unexpected argument(s) {sorted(extra)}")
        message = kwargs.get("message")
        if message is not None and not isinstance(message, str):
            message = str(message)
        return Finished(text=message or None)
    names = ("action", "element")
    if len(call.args) > len(names):
        raise _call_error(call, "do() takes at most action and element positionally")
    for key, value in zip(names, call.args):
        if key in kwargs:
            raise _call_error(call, f"do() got {key} twice")
        kwargs[key] = value
    extra = set(kwargs) - _ANDROIDLAB_KEYS
    if extra:
        raise _call_error(call, f"do() got unexpected argument(s) {sorted(extra)}; "
                                f"it takes {sorted(_ANDROIDLAB_KEYS)}")
    action = kwargs.get("action")
    if not isinstance(action, str) or not action.strip():
        raise _call_error(call, f"do() needs action= one of {_ANDROIDLAB_ACTIONS}")
    kind = " ".join(action.replace("_", " ").lower().split())
    element = kwargs.get("element")

    def where(required: bool) -> tuple[int, int] | None:
        if element is None:
            if required:
                raise _call_error(call, f'do(action="{action}") needs element=[x1,y1,x2,y2] or [x,y]')
            return None
        return ctx.point(element, f'element of do(action="{action}")')

    if kind in ("tap", "click"):
        x, y = where(True)  # type: ignore[misc]
        return Click(x=x, y=y)
    if kind in ("long press", "longpress"):
        x, y = where(True)  # type: ignore[misc]
        return LongPress(x=x, y=y)
    if kind == "type":
        text = kwargs.get("text")
        if not isinstance(text, str) or not text:
            raise _call_error(call, 'do(action="Type") needs a non-empty text="..."')
        point = where(False)
        if point is None:
            return Type(text=text, submit=True)
        return Type(text=text, x=point[0], y=point[1], submit=True)
    if kind == "swipe":
        if "direction" not in kwargs:
            raise _call_error(call, f'do(action="Swipe") needs direction= one of {DIRECTIONS}')
        direction = _direction(kwargs["direction"], call)
        dist = kwargs.get("dist", "medium")
        if isinstance(dist, str):
            dist = dist.strip().lower()
        if ctx.screen_size is None:
            raise _call_error(call, 'do(action="Swipe") needs screen_size: AndroidLab swipe lengths are '
                                    "fractions of the screen width")
        point = where(False)
        x, y = point if point is not None else (None, None)
        try:
            return androidlab_swipe(x, y, direction, dist, ctx.screen_size)
        except ActionParseError as exc:
            raise _call_error(call, exc.reason) from None
    if kind == "home":
        return PressHome()
    if kind == "back":
        return PressBack()
    if kind == "enter":
        return PressEnter()
    if kind == "wait":
        return Wait()
    if kind == "launch":
        app = kwargs.get("app")
        if not isinstance(app, str) or not app.strip():
            raise _call_error(call, 'do(action="Launch") needs a non-empty app="..."')
        return OpenApp(app=app.strip())
    raise _call_error(call, f"unknown AndroidLab action {action!r}; expected one of {_ANDROIDLAB_ACTIONS}")


# ---------------------------------------------------------------------------------------------
# JSON: AndroidWorld JSONAction and our own to_dict form


def _loads_lenient(body: str, shown: str) -> Any:
    try:
        return json.loads(body)
    except RecursionError:
        raise ActionParseError("JSON nested too deeply", text=shown) from None
    except ValueError as json_error:
        try:
            return read_literal(body)
        except ActionParseError:
            raise ActionParseError(f"invalid JSON ({_json_reason(json_error)})", text=shown) from None


def _json_reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at character {error.pos}"
    return str(error)


def _json_objects(text: str, start: int) -> list[Any]:
    """Read one JSON object or list (or several objects in a row) from ``text`` after ``start``."""
    decoder = json.JSONDecoder()
    reader = CallReader(text)
    values: list[Any] = []
    pos = _first_meaningful(text, start)
    while pos < len(text):
        if text[pos] not in "{[":
            if values:
                raise reader.fail(f"unexpected text {text[pos:pos + 30]!r} after the JSON action", pos)
            raise reader.fail("expected a JSON action object", pos)
        try:
            value, end = decoder.raw_decode(text, pos)
        except RecursionError:
            raise reader.fail("JSON nested too deeply", pos) from None
        except ValueError as json_error:
            try:
                value, end = reader.read_value(pos)
            except ActionParseError:
                where = json_error.pos if isinstance(json_error, json.JSONDecodeError) else pos
                raise reader.fail(f"invalid JSON action ({_json_reason(json_error)})", where) from None
        if isinstance(value, list):
            values.extend(value)
        else:
            values.append(value)
        pos = end
        while pos < len(text) and (text[pos].isspace() or text[pos] == ","):
            pos += 1
        pos = _first_meaningful(text, pos)
    if not values:
        raise ActionParseError("no JSON action found", text=text)
    return values


def _action_from_mapping(obj: Any, style: str, ctx: _Context) -> Action:
    if not isinstance(obj, Mapping):
        raise ActionParseError(f"an action must be a JSON object, got {type(obj).__name__} {obj!r}")
    data = dict(obj)
    if style == "json" or (style == "auto" and "type" in data and "action_type" not in data):
        for key in ("x", "y", "end_x", "end_y"):
            value = data.get(key)
            if isinstance(value, float) and not math.isfinite(value):
                raise ActionParseError(f"field {key!r} must be a finite number, got {value!r}")
        return _clamped(action_from_dict(data), ctx)
    if style in ("androidworld", "auto") and "action_type" in data:
        return _androidworld_action(data, ctx)
    if style == "androidworld":
        raise ActionParseError(f"an AndroidWorld action needs 'action_type'; got keys {sorted(data)}")
    if style in ("uitars", "uitars_point", "androidlab"):
        raise ActionParseError(f"style={style!r} reads text, not a dict; pass style='auto', 'json' or 'androidworld'")
    raise ActionParseError(f"an action dict needs 'type' (our form) or 'action_type' (AndroidWorld); "
                           f"got keys {sorted(data)}")


def _clamped(action: Action, ctx: _Context) -> Action:
    if ctx.screen_size is None:
        return action
    changes: dict[str, int] = {}
    for fx, fy in (("x", "y"), ("end_x", "end_y")):
        x, y = getattr(action, fx, None), getattr(action, fy, None)
        if x is not None and y is not None:
            changes[fx], changes[fy] = ctx.space.clamp(x, y)
    return dataclasses.replace(action, **changes) if changes else action


_ANDROIDWORLD_KEYS = {"action_type", "index", "x", "y", "text", "direction", "goal_status", "app_name",
                      "keycode", "clear_text"}
_ANDROIDWORLD_TYPES = ("click", "double_tap", "long_press", "input_text", "scroll", "swipe", "navigate_home",
                       "navigate_back", "keyboard_enter", "open_app", "wait", "status", "answer")


def _androidworld_action(data: dict[str, Any], ctx: _Context) -> Action:
    shown = json.dumps(data, ensure_ascii=False, default=str)
    data = {k: v for k, v in data.items() if v is not None}
    extra = set(data) - _ANDROIDWORLD_KEYS
    if extra:
        raise ActionParseError(f"AndroidWorld action has unknown field(s) {sorted(extra)}", text=shown)
    kind = data.get("action_type")
    if not isinstance(kind, str):
        raise ActionParseError(f"action_type must be a string, got {kind!r}", text=shown)
    kind = kind.strip().lower()

    def fail(message: str) -> ActionParseError:
        return ActionParseError(message, text=shown)

    def location(required: bool) -> tuple[int, int] | None:
        has_index = "index" in data
        has_xy = "x" in data or "y" in data
        if has_index and has_xy:
            raise fail(f"{kind} gives both index and x/y; give one")
        if has_index:
            return _element_center(data["index"], ctx, shown)
        if has_xy:
            if "x" not in data or "y" not in data:
                raise fail(f"{kind} needs both x and y")
            x, y = _number(data["x"], "x", shown), _number(data["y"], "y", shown)
            return ctx.space.to_screen(x, y)
        if required:
            raise fail(f"{kind} needs a target: index (with elements=) or x and y")
        return None

    def direction() -> str:
        value = data.get("direction")
        if not isinstance(value, str) or value.strip().lower() not in DIRECTIONS:
            raise fail(f"{kind} needs direction one of {DIRECTIONS}, got {value!r}")
        return value.strip().lower()

    def text_field(what: str) -> str:
        value = data.get("text")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value:
            raise fail(f"{kind} needs a non-empty {what}")
        return value

    if kind in ("click", "double_tap", "long_press"):
        x, y = location(True)  # type: ignore[misc]
        return LongPress(x=x, y=y) if kind == "long_press" else Click(x=x, y=y)
    if kind == "input_text":
        text = text_field("text")
        point = location(False)
        if point is None:
            return Type(text=text, submit=True)
        return Type(text=text, x=point[0], y=point[1], submit=True)
    if kind == "scroll":
        d = direction()
        point = location(False)
        return Scroll(direction=d) if point is None else Scroll(direction=d, x=point[0], y=point[1])
    if kind == "swipe":
        d = direction()
        if ctx.screen_size is None:
            raise fail("swipe needs screen_size: AndroidWorld swipes run edge to edge across the screen")
        return androidworld_swipe(d, ctx.screen_size)
    if kind == "navigate_home":
        return PressHome()
    if kind == "navigate_back":
        return PressBack()
    if kind == "keyboard_enter":
        return PressEnter()
    if kind == "wait":
        return Wait()
    if kind == "open_app":
        app = data.get("app_name")
        if not isinstance(app, str) or not app.strip():
            raise fail("open_app needs a non-empty app_name")
        return OpenApp(app=app.strip())
    if kind == "status":
        status = data.get("goal_status")
        if status not in ("complete", "infeasible"):
            raise fail(f"status needs goal_status 'complete' or 'infeasible', got {status!r}")
        return Finished()
    if kind == "answer":
        return Finished(text=text_field("answer text"))
    raise fail(f"unsupported AndroidWorld action_type {kind!r}; expected one of {_ANDROIDWORLD_TYPES}")


def _number(value: Any, name: str, shown: str) -> float:
    if isinstance(value, bool):
        raise ActionParseError(f"{name} must be a number, got {value!r}", text=shown)
    number: float | None = None
    if isinstance(value, (int, float)):
        number = float(value) if abs(value) < 1e300 else math.inf
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None:
        raise ActionParseError(f"{name} must be a number, got {value!r}", text=shown)
    if not math.isfinite(number):
        raise ActionParseError(f"{name} must be a finite number, got {value!r}", text=shown)
    return number


def _element_center(index: Any, ctx: _Context, shown: str) -> tuple[int, int]:
    if isinstance(index, bool):
        raise ActionParseError(f"index must be an integer, got {index!r}", text=shown)
    try:
        idx = int(index)
        if isinstance(index, float) and index != idx:
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise ActionParseError(f"index must be an integer, got {index!r}", text=shown) from None
    if ctx.elements is None:
        raise ActionParseError(f"index {idx} names a UI element but no elements= were given to resolve it",
                               text=shown)
    if not 0 <= idx < len(ctx.elements):
        raise ActionParseError(f"index {idx} is out of range: there are {len(ctx.elements)} elements",
                               text=shown)
    element = ctx.elements[idx]
    center = getattr(element, "center", None)
    if center is None and isinstance(element, Mapping):
        center = element.get("center")
    if center is None:
        center = getattr(getattr(element, "bbox_pixels", None), "center", None)
    if center is None or len(center) != 2:
        raise ActionParseError(f"element {idx} has no center (x, y) to act on", text=shown)
    x, y = ctx.space.clamp(int(round(center[0])), int(round(center[1])))
    return x, y
