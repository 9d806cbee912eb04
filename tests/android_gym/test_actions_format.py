"""format_action: exact strings, round trips parse(format(a)) == a per style, and what styles refuse."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from android_gym.actions.coords import coordinate_space
from android_gym.actions.format import ActionFormatError, format_action
from android_gym.actions.gestures import ANDROIDLAB_DISTANCES, androidlab_swipe, androidworld_swipe
from android_gym.actions.parse import parse_action, parse_actions
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

PHONE = (1080, 2400)
W, H = PHONE
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------------------------
# Exact output


@pytest.mark.parametrize(
    "action, style, expected",
    [
        (Click(1, 2), "uitars", "Action: click(start_box='<|box_start|>(1,2)<|box_end|>')"),
        (Click(1, 2), "uitars_point", "Action: click(point='<point>1 2</point>')"),
        (Type("it's", submit=True), "uitars", "Action: type(content='it\\'s\\n')"),
        (Scroll("down", 5, 6), "uitars", "Action: scroll(start_box='<|box_start|>(5,6)<|box_end|>', direction='down')"),
        (Drag(1, 2, 3, 4), "uitars_point",
         "Action: drag(start_point='<point>1 2</point>', end_point='<point>3 4</point>')"),
        (OpenApp("Markor"), "uitars", "Action: open_app(app_name='Markor')"),
        (Finished("42"), "uitars", "Action: finished(content='42')"),
        (Click(1, 2), "androidlab", 'do(action="Tap", element=[1, 2])'),
        (Type('say "hi"', submit=True), "androidlab", 'do(action="Type", text="say \\"hi\\"")'),
        (OpenApp("Clock"), "androidlab", 'do(action="Launch", app="Clock")'),
        (Finished(), "androidlab", "finish()"),
        (Type("hi", x=3, y=4, submit=True), "androidworld",
         '{"action_type": "input_text", "text": "hi", "x": 3, "y": 4}'),
        (Finished(), "androidworld", '{"action_type": "status", "goal_status": "complete"}'),
        (Finished("42"), "androidworld", '{"action_type": "answer", "text": "42"}'),
        (PressEnter(), "json", '{"type": "press_enter"}'),
    ],
)
def test_exact_strings(action: Action, style: str, expected: str) -> None:
    assert format_action(action, style) == expected


def test_thought_prefixes() -> None:
    assert format_action(Wait(), "uitars", thought="let it load") == "Thought: let it load\nAction: wait()"
    assert format_action(PressBack(), "androidlab", thought="wrong page") == \
        'Thought: wrong page\nAction: do(action="Back")'
    assert format_action(Wait(), "androidworld", thought="loading") == \
        'Reason: loading\nAction: {"action_type": "wait"}'
    with pytest.raises(ValueError, match="must not contain an 'Action:' marker"):
        format_action(Wait(), "uitars", thought="x\nAction: click()")
    with pytest.raises(ValueError, match="no place for a thought"):
        format_action(Wait(), "json", thought="x")


def test_coordinate_options_mirror_parsing() -> None:
    # 540 px on a 1080-wide screen is 546 in the 1092-wide smart-resized image.
    opts = {"coordinates": "smart_resize", "screen_size": PHONE}
    text = format_action(Click(540, 1200), "uitars", **opts)
    assert text == "Action: click(start_box='<|box_start|>(546,1204)<|box_end|>')"
    assert parse_action(text, **opts) == Click(540, 1200)
    rel = {"coordinates": "relative1000", "screen_size": PHONE}
    assert format_action(Click(540, 1200), "uitars_point", **rel) == "Action: click(point='<point>500 500</point>')"


def test_swipe_gestures_format_back_to_words() -> None:
    gesture = androidlab_swipe(540, 1050, "up", "medium", PHONE)
    assert format_action(gesture, "androidlab", screen_size=PHONE) == \
        'do(action="Swipe", element=[540, 1050], direction="up", dist="medium")'
    assert format_action(androidworld_swipe("left", PHONE), "androidworld", screen_size=PHONE) == \
        '{"action_type": "swipe", "direction": "left"}'


# ----------------------------------------------------------------------------------------------
# What each style cannot express


@pytest.mark.parametrize(
    "action, style, message",
    [
        (Type("abc\n"), "uitars", "trailing newline"),
        (Type(""), "uitars", "empty text"),
        (Type("", submit=True), "uitars_point", "empty text"),
        (Finished(""), "uitars", "empty answer"),
        (OpenApp(" Markor"), "uitars", "surrounding spaces"),
        (Drag(1, 2, 3, 4), "androidlab", "no drag"),
        (Scroll("down"), "androidlab", "no scroll"),
        (Type("abc"), "androidlab", "always presses Enter"),
        (Swipe(1, 2, 3, 4), "androidlab", "pass screen_size"),
        (Finished(""), "androidlab", "empty message"),
        (Drag(1, 2, 3, 4), "androidworld", "no drag"),
        (Type("abc", x=1, y=2), "androidworld", "always presses Enter"),
        (Swipe(1, 2, 3, 4), "androidworld", "pass screen_size"),
        (Finished(""), "androidworld", "empty answer"),
    ],
)
def test_inexpressible_actions_raise(action: Action, style: str, message: str) -> None:
    with pytest.raises(ActionFormatError, match=f"cannot express .*{message}"):
        format_action(action, style)


def test_inexpressible_swipes_with_a_screen() -> None:
    with pytest.raises(ActionFormatError, match="not among them"):
        format_action(Swipe(100, 100, 100, 150), "androidlab", screen_size=PHONE)
    with pytest.raises(ActionFormatError, match="edge to edge"):
        format_action(Swipe(100, 100, 100, 150), "androidworld", screen_size=PHONE)


def test_points_off_screen_are_refused() -> None:
    with pytest.raises(ActionFormatError, match="outside the 1080x2400 screen"):
        format_action(Click(2000, 5), "uitars", screen_size=PHONE)
    with pytest.raises(ActionFormatError, match="outside"):
        format_action(Drag(1, 1, 1, 9999), "json", screen_size=PHONE)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="needs an Action"):
        format_action({"type": "wait"}, "json")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="style must be one of"):
        format_action(Wait(), "qwen")


# ----------------------------------------------------------------------------------------------
# Round trips (hypothesis)

xs = st.integers(0, W - 1)
ys = st.integers(0, H - 1)
directions = st.sampled_from(DIRECTIONS)
texts = st.text(min_size=1, max_size=40)
answers = st.none() | texts
apps = st.text(min_size=1, max_size=20).filter(lambda s: s == s.strip() and s != "")
no_arg = st.sampled_from([PressBack(), PressHome(), PressEnter(), Wait()])


def _type_uitars() -> st.SearchStrategy[Action]:
    plain = st.builds(Type, text=texts.filter(lambda t: not t.endswith("\n")), submit=st.booleans())
    placed = st.builds(lambda t, x, y, s: Type(t, x=x, y=y, submit=s),
                       texts.filter(lambda t: not t.endswith("\n")), xs, ys, st.booleans())
    empty_submit = st.builds(lambda x, y: Type("", x=x, y=y, submit=True), xs, ys)
    return plain | placed | empty_submit


def _scroll() -> st.SearchStrategy[Action]:
    return st.builds(Scroll, directions) | st.builds(lambda d, x, y: Scroll(d, x, y), directions, xs, ys)


def _uitars_actions() -> st.SearchStrategy[Action]:
    return st.one_of(
        st.builds(Click, xs, ys), st.builds(LongPress, xs, ys), _type_uitars(), _scroll(),
        st.builds(Drag, xs, ys, xs, ys), st.builds(Swipe, xs, ys, xs, ys), st.builds(OpenApp, apps),
        no_arg, st.builds(Finished, answers),
    )


def _androidlab_actions() -> st.SearchStrategy[Action]:
    typed = st.builds(lambda t: Type(t, submit=True), texts) | st.builds(
        lambda t, x, y: Type(t, x=x, y=y, submit=True), texts, xs, ys)
    swipes = st.builds(lambda x, y, d, n: androidlab_swipe(x, y, d, n, PHONE),
                       xs, ys, directions, st.sampled_from(list(ANDROIDLAB_DISTANCES)))
    return st.one_of(st.builds(Click, xs, ys), st.builds(LongPress, xs, ys), typed, swipes,
                     st.builds(OpenApp, apps), no_arg, st.builds(Finished, answers))


def _androidworld_actions() -> st.SearchStrategy[Action]:
    typed = st.builds(lambda t: Type(t, submit=True), texts) | st.builds(
        lambda t, x, y: Type(t, x=x, y=y, submit=True), texts, xs, ys)
    swipes = st.builds(lambda d: androidworld_swipe(d, PHONE), directions)
    return st.one_of(st.builds(Click, xs, ys), st.builds(LongPress, xs, ys), typed, _scroll(), swipes,
                     st.builds(OpenApp, apps), no_arg, st.builds(Finished, answers))


def _any_action() -> st.SearchStrategy[Action]:
    typed = st.builds(lambda t, s: Type(t, submit=s), st.text(max_size=40), st.booleans())
    return st.one_of(_uitars_actions(), typed, st.builds(Finished, st.text(max_size=5)))


STYLE_ACTIONS = {
    "uitars": _uitars_actions(),
    "uitars_point": _uitars_actions(),
    "androidlab": _androidlab_actions(),
    "androidworld": _androidworld_actions(),
    "json": _any_action(),
}

thoughts = st.text(max_size=60).filter(
    lambda t: "Action" not in t and "tool_call>" not in t and "do" not in t and "finish" not in t)


@pytest.mark.parametrize("style", list(STYLE_ACTIONS))
@SETTINGS
@given(data=st.data())
def test_round_trip_exact_in_screen_pixels(style: str, data: st.DataObject) -> None:
    action = data.draw(STYLE_ACTIONS[style])
    thought = None if style == "json" else data.draw(st.none() | thoughts)
    text = format_action(action, style, thought=thought, screen_size=PHONE)
    assert parse_action(text, screen_size=PHONE) == action
    assert parse_action(text, style=style, screen_size=PHONE) == action


@pytest.mark.parametrize("style", ["uitars", "uitars_point", "json"])
@SETTINGS
@given(data=st.data())
def test_round_trip_exact_without_a_screen(style: str, data: st.DataObject) -> None:
    big = st.integers(0, 100_000)
    action = data.draw(st.one_of(st.builds(Click, big, big), st.builds(Drag, big, big, big, big)))
    assert parse_action(format_action(action, style)) == action


def _coords(action: Action) -> list[int]:
    return [v for k in ("x", "y", "end_x", "end_y") if (v := getattr(action, k, None)) is not None]


@pytest.mark.parametrize("style", ["uitars", "uitars_point", "androidworld"])
@pytest.mark.parametrize(
    "opts",
    [
        {"coordinates": "relative1000", "screen_size": PHONE},
        {"coordinates": "smart_resize", "screen_size": PHONE, "max_pixels": 1000 * 28 * 28},
        {"coordinates": "smart_resize", "screen_size": PHONE},
        {"coordinates": "absolute", "screen_size": PHONE, "image_size": (540, 1200)},
    ],
    ids=["relative1000", "smart_resize_small", "smart_resize", "absolute_downscaled"],
)
@FEW
@given(data=st.data())
def test_round_trip_in_model_spaces(style: str, opts: dict, data: st.DataObject) -> None:
    """Integer model units: a point comes back within one unit; what comes back is a fixed point."""
    strategy = _androidworld_actions() if style == "androidworld" else _uitars_actions()
    action = data.draw(strategy)
    back = parse_action(format_action(action, style, **opts), **opts)
    assert type(back) is type(action)
    space = coordinate_space(**opts)
    frame_w, frame_h = space.frame or PHONE
    tolerance = [math.ceil(W / frame_w / 2 + 0.5), math.ceil(H / frame_h / 2 + 0.5)]
    for i, (a, b) in enumerate(zip(_coords(action), _coords(back))):
        assert abs(a - b) <= tolerance[i % 2]
    # Points on the model's grid survive exactly.
    assert parse_action(format_action(back, style, **opts), **opts) == back


def test_representable_points_are_exact_in_relative1000() -> None:
    opts = {"coordinates": "relative1000", "screen_size": (1000, 2000)}
    action = Drag(0, 0, 999, 1998)
    assert parse_action(format_action(action, "uitars", **opts), **opts) == action


# ----------------------------------------------------------------------------------------------
# Fuzz: whatever the text, parsing returns actions or raises ActionParseError, nothing else

FRAGMENTS = [
    "Action:", "Action：", "Thought: ", "click(", "type(content=", "scroll(", "drag(", "finished(", ")", "'",
    '"', "\\", "\n", "start_box=", "end_box=", "point=", "direction='up'", "<point>", "</point>", "<bbox>",
    "<|box_start|>", "<|box_end|>", "(", ",", "100", "-3", "1e999", "[", "]", "{", "}", ":", "do(action=",
    '"Tap"', '"Swipe"', "element=", "finish(", "<seed:tool_call>", "<function=click>", "<parameter=point>",
    "</parameter>", "</function>", "<tool_call>", "</tool_call>", '"action_type"', '"click"', '"x"', "null",
    "```", "<think>", "</think>", "hotkey(key=", "open_app(", "index", "Infinity", " ",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join))
def test_fuzz_fragments_only_raise_parse_errors(text: str) -> None:
    for kwargs in ({}, {"screen_size": PHONE, "coordinates": "relative1000"}):
        try:
            actions = parse_actions(text, **kwargs)
        except ActionParseError:
            continue
        assert actions and all(isinstance(a, Action) for a in actions)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_arbitrary_text_only_raises_parse_errors(text: str) -> None:
    try:
        parse_actions(text, screen_size=PHONE)
    except ActionParseError:
        pass
