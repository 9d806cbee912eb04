"""Hand-written parsing cases for every format, function, coordinate form and error we promise."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from android_gym.actions.parse import parse_action, parse_actions
from android_gym.actions.types import (
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


# ----------------------------------------------------------------------------------------------
# UI-TARS


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Action: click(start_box='<|box_start|>(100,200)<|box_end|>')", Click(100, 200)),
        ("Action: left_single(start_box='(100,200)')", Click(100, 200)),
        ("Action: left_double(start_box='[100,200]')", Click(100, 200)),
        ("Action: CLICK(start_box='(100,200)')", Click(100, 200)),
        ("Action: click(point='<point>100 200</point>')", Click(100, 200)),
        ("Action: click(start_box='<bbox>100 200 300 400</bbox>')", Click(200, 300)),
        ("Action: click(start_box='[100, 200, 300, 400]')", Click(200, 300)),
        ("Action: click(start_box='<|box_start|>(100,200),(300,400)<|box_end|>')", Click(200, 300)),
        ("Action: click(start_box=(100, 200))", Click(100, 200)),
        ("Action: long_press(start_box='<|box_start|>(5,6)<|box_end|>')", LongPress(5, 6)),
        ("Action: type(content='hello world')", Type("hello world")),
        ("Action: type(text='Hello', start_box='(300,400)')", Type("Hello", x=300, y=400)),
        ("Action: type(content='hello\\n')", Type("hello", submit=True)),
        ("Action: type(content='hello\n')", Type("hello", submit=True)),
        ("Action: type(content='line1\\nline2')", Type("line1\nline2")),
        ("Action: type(content='it\\'s \"quoted\"')", Type("it's \"quoted\"")),
        ('Action: type(content="say \\"hi\\"")', Type('say "hi"')),
        ("Action: type(content='I'm here, aren't I')", Type("I'm here, aren't I")),
        ("Action: type(content='C:\\\\new')", Type("C:\\new")),
        ("Action: type(content='\\n')", PressEnter()),
        ("Action: scroll(start_box='(540,1200)', direction='down')", Scroll("down", 540, 1200)),
        ("Action: scroll(direction='UP')", Scroll("up")),
        ("Action: scroll(point='<point>5 6</point>', direction=\"left\")", Scroll("left", 5, 6)),
        ("Action: drag(start_box='(1,2)', end_box='(3,4)')", Drag(1, 2, 3, 4)),
        ("Action: drag(start_point='<point>1 2</point>', end_point='<point>3 4</point>')", Drag(1, 2, 3, 4)),
        ("Action: swipe(start_box='(1,2)', end_box='(3,4)')", Swipe(1, 2, 3, 4)),
        ("Action: open_app(app_name='Markor')", OpenApp("Markor")),
        ("Action: open_app(app_name=' Simple SMS Messenger ')", OpenApp("Simple SMS Messenger")),
        ("Action: press_home()", PressHome()),
        ("Action: press_back()", PressBack()),
        ("Action: press_enter()", PressEnter()),
        ("Action: hotkey(key='enter')", PressEnter()),
        ("Action: hotkey(key='Return')", PressEnter()),
        ("Action: hotkey(key='home')", PressHome()),
        ("Action: wait()", Wait()),
        ("Action: finished()", Finished()),
        ("Action: finished(content='')", Finished()),
        ("Action: finished(content='The total is $42.')", Finished("The total is $42.")),
        ("Action: finished(content='He said \\'no\\'')", Finished("He said 'no'")),
        ("Action: finished('done')", Finished("done")),
    ],
)
def test_uitars_functions(text: str, expected: object) -> None:
    assert parse_action(text) == expected
    assert parse_action(text, style="uitars") == expected


def test_uitars_prefixes_and_full_width_colon() -> None:
    text = ("Reflection: the menu opened.\nAction_Summary: tap Settings\n"
            "Thought： the gear icon is top right\nAction：click(start_box='<|box_start|>(990,80)<|box_end|>')")
    assert parse_action(text) == Click(990, 80)


def test_uitars_think_blocks_and_wrappers() -> None:
    text = ("<think>The field is empty. Action: maybe type first? No, tap.</think>\n"
            "Thought: tap the field\nAction: click(point='<point>10 20</point>')\n</computer_env>")
    # An "Action:" inside the thinking block is not the action line.
    assert parse_action(text) == Click(10, 20)
    clean = "<think>I will tap it.</think>\n<computer_env>\nAction: click(point='<point>10 20</point>')\n</computer_env>"
    assert parse_action(clean) == Click(10, 20)


def test_uitars_thought_with_call_text_is_ignored() -> None:
    text = "Thought: swipe(start_box='(693,685)', end_box='(724,300)')\n\nAction: scroll(direction='left')"
    assert parse_actions(text) == [Scroll("left")]


def test_uitars_bare_call_without_action_line() -> None:
    assert parse_action('click(start_box="(100,200)")') == Click(100, 200)


def test_uitars_several_actions() -> None:
    text = ("Thought: search\nAction: click(point='<point>403 81</point>')\n\ntype(content='baidu.com')\n\n"
            "hotkey(key='enter')\n\nAction: wait()")
    assert parse_actions(text) == [Click(403, 81), Type("baidu.com"), PressEnter(), Wait()]
    assert parse_action(text) == Click(403, 81)
    with pytest.raises(ActionParseError, match="expected one action, found 4"):
        parse_action(text, multiple="error")


def test_parse_action_checks_later_actions_too() -> None:
    with pytest.raises(ActionParseError, match="unknown action fly"):
        parse_action("Action: click(start_box='(1,2)')\nfly(to='moon')")


def test_uitars_smart_resize_and_relative_coordinates() -> None:
    text = "Action: click(start_box='<|box_start|>(546,1204)<|box_end|>')"
    # Resized 1080x2400 -> 1092x2408: 546*1080/1092 = 540, 1204*2400/2408 = 1200.
    assert parse_action(text, coordinates="smart_resize", screen_size=PHONE) == Click(540, 1200)
    # Relative 0..1000: 546*1.08 = 589.68 -> 590; 1204 > 1000 -> 2889.6 clamped to 2399.
    assert parse_action(text, coordinates="relative1000", screen_size=PHONE) == Click(590, 2399)
    # Absolute: as given, clamped to the screen.
    assert parse_action("Action: click(start_box='(5000,-20)')", screen_size=PHONE) == Click(1079, 0)
    # Absolute with the screenshot downscaled by 2 before the model saw it.
    half = "Action: click(start_box='(100,300)')"
    assert parse_action(half, screen_size=PHONE, image_size=(540, 1200)) == Click(200, 600)


def test_uitars_drag_end_mapped_too() -> None:
    text = "Action: drag(start_box='(0,0)', end_box='(1000,500)')"
    assert parse_action(text, coordinates="relative1000", screen_size=PHONE) == Drag(0, 0, 1079, 1200)


def test_seed_tool_call_xml() -> None:
    text = ("<seed:tool_call>\n<function=scroll>\n<parameter=direction>up</parameter>\n"
            "<parameter=point><point>500 500</point></parameter>\n</function>\n"
            "<function=type>\n<parameter=content>hello\\n</parameter>\n</function>\n</seed:tool_call>")
    assert parse_actions(text) == [Scroll("up", 500, 500), Type("hello", submit=True)]
    named = ("<seed:tool_call><function name='click'><parameter name='point'>7 8</parameter>"
             "</function></seed:tool_call>")
    assert parse_action(named) == Click(7, 8)


def test_tool_call_json_wrapper() -> None:
    text = ('Thought: open the search bar\n<tool_call>\n{"name": "browser_action_tool", "parameters": '
            '{"thought": "t", "action": "click(point=\'<point>400 435</point>\')"}}\n</tool_call>')
    assert parse_action(text) == Click(400, 435)
    plain = '<tool_call>{"name": "press_back", "arguments": {}}</tool_call>'
    assert parse_action(plain) == PressBack()


# ----------------------------------------------------------------------------------------------
# AndroidLab


@pytest.mark.parametrize(
    "text, expected",
    [
        ('do(action="Tap", element=[100, 200, 300, 400])', Click(200, 300)),
        ('do(action="Tap", element=[540, 1200])', Click(540, 1200)),
        ('do(action="Tap", element=[0540, 01200])', Click(540, 1200)),  # leading zeros, as models write
        ('do(action="Long Press", element=[10, 20, 30, 40])', LongPress(20, 30)),
        ('do(action="Type", text="hello")', Type("hello", submit=True)),
        ('do(action="Type", element=[1, 2], text="a \\"b\\"")', Type('a "b"', x=1, y=2, submit=True)),
        ('do(action="Home")', PressHome()),
        ('do(action="Back")', PressBack()),
        ('do(action="Enter")', PressEnter()),
        ('do(action="Wait")', Wait()),
        ('do(action="Launch", app="Clock")', OpenApp("Clock")),
        ("finish()", Finished()),
        ('finish(message="The alarm on 9:00 AM weekday has been set")',
         Finished("The alarm on 9:00 AM weekday has been set")),
        ('finish(message=None)', Finished()),
    ],
)
def test_androidlab_actions(text: str, expected: object) -> None:
    assert parse_action(text) == expected
    assert parse_action(text, style="androidlab") == expected


def test_androidlab_in_prose_and_fences() -> None:
    text = ('I should open the clock.\n```\ndo(action="Launch", app="Clock")\n```')
    assert parse_action(text) == OpenApp("Clock")
    assert parse_action('Thought: go back\nAction: do(action="Back")') == PressBack()


@pytest.mark.parametrize(
    "element, direction, dist, expected",
    [
        # unit = int(1080/10) = 108; medium = 216; vertical moves 2 units: 432 px.
        ("[500, 1000, 580, 1100]", "up", "medium", Swipe(540, 1050, 540, 618)),
        ("[540, 1050]", "down", "short", Swipe(540, 1050, 540, 1266)),
        # horizontal moves 2.5 units: short 270 px.
        ("[540, 1050]", "right", "short", Swipe(540, 1050, 810, 1050)),
        # long = 1080; 2.5 * 1080 = 2700 px, clamped at the left edge.
        ("[540, 1050]", "left", "long", Swipe(540, 1050, 0, 1050)),
        (None, "up", None, Swipe(540, 1200, 540, 768)),  # no element: screen centre; default medium
    ],
)
def test_androidlab_swipe_geometry(element: str | None, direction: str, dist: str | None, expected: Swipe) -> None:
    args = [f'direction="{direction}"']
    if element:
        args.insert(0, f"element={element}")
    if dist:
        args.append(f'dist="{dist}"')
    text = f'do(action="Swipe", {", ".join(args)})'
    assert parse_action(text, screen_size=PHONE) == expected


def test_androidlab_relative_coordinates() -> None:
    text = 'do(action="Tap", element=[400, 400, 600, 600])'
    assert parse_action(text, coordinates="relative1000", screen_size=PHONE) == Click(540, 1200)


# ----------------------------------------------------------------------------------------------
# AndroidWorld JSON


@dataclass
class _Element:
    center: tuple[float, float]


ELEMENTS = [_Element((10.0, 20.0)), _Element((540.4, 1200.6))]


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"action_type": "click", "x": 10, "y": 20}, Click(10, 20)),
        ({"action_type": "click", "index": 1}, Click(540, 1201)),
        ({"action_type": "double_tap", "index": "0"}, Click(10, 20)),
        ({"action_type": "long_press", "x": 5.6, "y": 6.4}, LongPress(6, 6)),
        ({"action_type": "input_text", "text": "hi", "index": 0}, Type("hi", x=10, y=20, submit=True)),
        ({"action_type": "input_text", "text": "hi"}, Type("hi", submit=True)),
        ({"action_type": "scroll", "direction": "down"}, Scroll("down")),
        ({"action_type": "scroll", "direction": "up", "index": 1}, Scroll("up", 540, 1201)),
        ({"action_type": "navigate_home"}, PressHome()),
        ({"action_type": "navigate_back"}, PressBack()),
        ({"action_type": "keyboard_enter"}, PressEnter()),
        ({"action_type": "open_app", "app_name": "Contacts"}, OpenApp("Contacts")),
        ({"action_type": "wait"}, Wait()),
        ({"action_type": "status", "goal_status": "complete"}, Finished()),
        ({"action_type": "status", "goal_status": "infeasible"}, Finished()),
        ({"action_type": "answer", "text": "42"}, Finished("42")),
        ({"action_type": "click", "x": 1, "y": 2, "index": None, "text": None}, Click(1, 2)),
    ],
)
def test_androidworld_actions(data: dict, expected: object) -> None:
    import json

    assert parse_action(data, elements=ELEMENTS) == expected
    assert parse_action(json.dumps(data), elements=ELEMENTS) == expected
    assert parse_action(data, style="androidworld", elements=ELEMENTS) == expected


def test_androidworld_swipe_and_text_forms() -> None:
    # AndroidWorld swipes edge to edge through the middle; its horizontal swipes move the finger
    # opposite to the named direction, as its executor does.
    assert parse_action({"action_type": "swipe", "direction": "up"}, screen_size=PHONE) == Swipe(540, 2399, 540, 0)
    assert parse_action({"action_type": "swipe", "direction": "left"}, screen_size=PHONE) == Swipe(0, 1200, 1079, 1200)
    text = 'Reason: the list continues below.\nAction: {"action_type": "scroll", "direction": "down"}'
    assert parse_action(text) == Scroll("down")
    fenced = "Action:\n```json\n{'action_type': 'click', 'x': 3, 'y': 4}\n```"
    assert parse_action(fenced) == Click(3, 4)
    several = '[{"action_type": "click", "x": 1, "y": 2}, {"action_type": "keyboard_enter"}]'
    assert parse_actions(several) == [Click(1, 2), PressEnter()]


def test_androidworld_coordinates_use_the_space() -> None:
    data = {"action_type": "click", "x": 546, "y": 1204}
    assert parse_action(data, coordinates="smart_resize", screen_size=PHONE) == Click(540, 1200)


# ----------------------------------------------------------------------------------------------
# Our own dict form


def test_own_dict_form() -> None:
    assert parse_action({"type": "click", "x": 1, "y": 2}) == Click(1, 2)
    assert parse_action('{"type": "type", "text": "a", "submit": true}') == Type("a", submit=True)
    assert parse_action({"type": "drag", "x": 1, "y": 2, "end_x": 9999, "end_y": 3}, screen_size=PHONE) == \
        Drag(1, 2, 1079, 3)
    assert parse_actions([{"type": "wait"}, {"type": "press_back"}]) == [Wait(), PressBack()]
    assert parse_action({"type": "click", "x": 1, "y": 2}, style="json") == Click(1, 2)


# ----------------------------------------------------------------------------------------------
# Errors: every one an ActionParseError that names the problem


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("Thought: nothing to do", "no 'Action:' line"),
        ("Thought: x\nAction:", "nothing follows 'Action:'"),
        ("Action: fly(to='moon')", "unknown action fly"),
        ("Action: open_computer()", "desktop/browser action"),
        ("Action: right_single(start_box='(1,2)')", "desktop/browser action"),
        ("Action: call_user()", "hands control to a person"),
        ("Action: hotkey(key='ctrl v')", "hotkey\\(key='ctrl v'\\) has no Android equivalent"),
        ("Action: click()", "click\\(\\) needs coordinates"),
        ("Action: click(start_box='')", "start_box of click\\(\\) '' is empty"),
        ("Action: click(start_box='[]')", "is empty"),
        ("Action: click(end_box='(1,2)')", "needs start_box= or point=; it only got an end point"),
        ("Action: click(start_box='(1,2)', point='<point>1 2</point>')", "got both start_box= and point="),
        ("Action: click(start_box='(1,2)', color='red')", "unexpected argument\\(s\\) \\['color'\\]"),
        ("Action: click(start_box='(1,2,3)')", "has 3 numbers"),
        ("Action: click(start_box='top left')", "not a point or box"),
        ("Action: drag(start_box='(1,2)')", "needs an end point"),
        ("Action: click(start_box='(100,200)", "unterminated string"),
        ("Action: click(start_box='(100,200)'", "missing '\\)' to close click\\("),
        ("Action: click(start_box='(1,2)' start_box='(3,4)')", "expected ',' or '\\)' in click\\(\\), found 's'"),
        ("Action: drag(start_point='<point>1 2</point>' end_point='<point>3 4</point>')", "expected ',' or '\\)'"),
        ("Action: click(start_box='(1,2)', start_box='(3,4)')", "given twice"),
        ("Action: type(content='')", "content is empty"),
        ("Action: type()", "needs content="),
        ("Action: type(content=5)", "content must be a string"),
        ("Action: scroll(direction='sideways')", "bad direction 'sideways'"),
        ("Action: scroll(start_box='(1,2)')", "needs direction="),
        ("Action: open_app(app_name='')", "non-empty app_name"),
        ("Action: click(start_box=topleft)", "unexpected bare word 'topleft'"),
        ("Action: click(start_box='(1,2)') and then more", "unexpected text 'and then more'"),
        ("start_box", "unexpected text 'start_box'"),
        ('do(action="Fly")', "unknown AndroidLab action 'Fly'"),
        ('do(action="Tap")', "needs element="),
        ('do(action="Type", text="")', "non-empty text"),
        ('do(action="Swipe", direction="up")', "needs screen_size"),
        ('do(action="Launch")', "non-empty app="),
        ('do(action="Tap", element=[1,2], color="red")', "unexpected argument\\(s\\) \\['color'\\]"),
        ('{"action_type": "fly"}', "unsupported AndroidWorld action_type 'fly'"),
        ('{"action_type": "click", "index": 3}', "no elements= were given"),
        ('{"action_type": "click"}', "needs a target"),
        ('{"action_type": "click", "x": 1}', "needs both x and y"),
        ('{"action_type": "click", "x": 1, "y": 2, "index": 0}', "both index and x/y"),
        ('{"action_type": "click", "x": "left", "y": 2}', "x must be a number"),
        ('{"action_type": "input_text", "text": ""}', "non-empty text"),
        ('{"action_type": "scroll", "direction": "diagonal"}', "direction one of"),
        ('{"action_type": "swipe", "direction": "up"}', "needs screen_size"),
        ('{"action_type": "status", "goal_status": "done"}', "goal_status 'complete' or 'infeasible'"),
        ('{"action_type": "click", "x": 1, "y": 2, "speed": 3}', "unknown field\\(s\\) \\['speed'\\]"),
        ('{"action_type": "click", "x": 1, "y": 2', "invalid JSON action"),
        ('{"foo": 1}', "needs 'type' .* or 'action_type'"),
        ('{"type": "teleport"}', "unknown action type 'teleport'"),
        ('{"type": "click", "x": 1}', "missing field"),
        ("<seed:tool_call><function><name>scroll</name></function></seed:tool_call>", "unsupported tool-call layout"),
        ("<tool_call>{\"name\": \"x\"}</tool_call>", "no 'action' string"),
    ],
)
def test_malformed_outputs_raise_clear_errors(text: str, message: str) -> None:
    with pytest.raises(ActionParseError, match=message):
        parse_actions(text)


def test_error_positions_point_at_the_problem() -> None:
    text = "Thought: t\nAction: click(start_box='(1,2)', color='red'"
    with pytest.raises(ActionParseError) as info:
        parse_action(text)
    assert "missing ')' to close click( opened at character 24" in str(info.value)
    assert text[24] == "("


def test_index_errors() -> None:
    with pytest.raises(ActionParseError, match="index 5 is out of range: there are 2 elements"):
        parse_action({"action_type": "click", "index": 5}, elements=ELEMENTS)
    with pytest.raises(ActionParseError, match="element 0 has no center"):
        parse_action({"action_type": "click", "index": 0}, elements=[object()])


def test_bad_options_are_value_errors() -> None:
    with pytest.raises(ValueError, match="style must be one of"):
        parse_action("Action: wait()", style="qwen")
    with pytest.raises(ValueError, match="needs screen_size"):
        parse_action("Action: wait()", coordinates="relative1000")
    with pytest.raises(ValueError, match="multiple must be"):
        parse_action("Action: wait()", multiple="all")


def test_non_text_input() -> None:
    with pytest.raises(ActionParseError, match="expected model output text or an action dict, got int"):
        parse_action(5)  # type: ignore[arg-type]
    with pytest.raises(ActionParseError, match="reads text, not a dict"):
        parse_action({"type": "wait"}, style="uitars")
    with pytest.raises(ActionParseError, match="decode the model output"):
        parse_action(b"Action: wait()")  # type: ignore[arg-type]


def test_numpy_integer_sizes_are_accepted() -> None:
    np = pytest.importorskip("numpy")
    size = (np.int64(1080), np.int64(2400))
    text = "Action: click(start_box='(500,500)')"
    assert parse_action(text, coordinates="relative1000", screen_size=size) == Click(540, 1200)


def test_deep_nesting_and_huge_numbers_are_parse_errors() -> None:
    with pytest.raises(ActionParseError, match="nested more than"):
        parse_action("Action: click(start_box=" + "[" * 100 + ")")
    with pytest.raises(ActionParseError, match="finite"):
        parse_action('{"type": "click", "x": Infinity, "y": 1}')
    with pytest.raises(ActionParseError, match="finite"):
        parse_action('{"action_type": "click", "x": 1e999, "y": 1}')
    with pytest.raises(ActionParseError, match="more than 400 characters"):
        parse_action("Action: click(start_box=(" + "9" * 500 + ", 1))")
