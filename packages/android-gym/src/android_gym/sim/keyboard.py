"""The soft keyboard window (Gboard's package): letter, digit and symbol keys that type into the focused field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from android_gym.sim.view import HORIZONTAL, View

IME_PACKAGE = "com.google.android.inputmethod.latin"
KEYBOARD_HEIGHT_DP = 270

_LETTERS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_SYMBOLS = ("1234567890", "@#$_&-+()/", "*\"':;!?")


def _key(label: str, desc: str, on_click: Callable[[], Any], weight: float = 1.0) -> View:
    return View(cls="android.widget.FrameLayout", content_desc=desc, text="", clickable=True, weight=weight,
                on_click=on_click, icon=label, background="#ffffff", size=22 if len(label) == 1 else 14)


def build_keyboard(shift: bool, symbols: bool, enter_label: str, type_char: Callable[[str], None],
                   press: Callable[[str], None]) -> View:
    """The keyboard view. ``type_char(c)`` types one character; ``press(name)`` handles
    "shift", "symbols", "delete" and "enter"."""
    rows = _SYMBOLS if symbols else _LETTERS
    key_rows: list[View] = []
    for r, chars in enumerate(rows):
        keys: list[View] = []
        if r == 2:
            keys.append(_key("123" if symbols else "Shift", "Symbols" if symbols else "Shift",
                             (lambda: press("shift")) if not symbols else (lambda: press("symbols")), 1.5))
        for c in chars:
            shown = c.upper() if shift and not symbols else c
            keys.append(_key(shown, shown, lambda ch=shown: type_char(ch)))
        if r == 2:
            keys.append(_key("Del", "Delete", lambda: press("delete"), 1.5))
        key_rows.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, weight=1, children=keys))
    bottom = [
        _key("ABC" if symbols else "?123", "Letters" if symbols else "Symbols", lambda: press("symbols"), 1.5),
        _key(",", ",", lambda: type_char(",")),
        _key(" ", "Space", lambda: type_char(" "), 5),
        _key(".", ".", lambda: type_char(".")),
        _key(enter_label, enter_label, lambda: press("enter"), 1.5),
    ]
    key_rows.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, weight=1, children=bottom))
    return View(cls="android.widget.FrameLayout", resource_id="com.google.android.inputmethod.latin:id/input_area",
                background="#e9eef6", padding=(4.0, 6.0), children=[
                    View(cls="android.widget.LinearLayout", weight=1, resource_id=f"{IME_PACKAGE}:id/keyboard_holder",
                         children=key_rows)])
