"""The soft keyboard window (Gboard's package), as the AndroidWorld emulator's accessibility tree lists it.

From the real episodes' element lists: the window holds the navigation strip's "Back" and "Switch input method"
buttons (gesture navigation shows them while a keyboard is up), then the header row ("More features", Gboard's
toolbar of shortcuts, "Voice input"; a field for a phone number gets a row of digits instead), then the keys, each a
``FrameLayout`` read out by its character (upper case while Shift is on) with Gboard's ``key_pos_<row>_<column>``
resource name. The keys area is 288 dp tall over a 48 dp navigation strip (the app above ends 883 px from the
bottom at 420 dpi).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from android_gym.sim.view import HORIZONTAL, View

IME_PACKAGE = "com.google.android.inputmethod.latin"
KEYS_HEIGHT_DP = 288.4
NAV_STRIP_DP = 48.0
KEYBOARD_HEIGHT_DP = KEYS_HEIGHT_DP + NAV_STRIP_DP
"""The keyboard window's height: the keys and the navigation strip below them."""
KEYBOARD_MAX_SHARE = 0.37
"""On a short screen the keys shrink: the window takes at most this share of the screen's height (the full
883 px are 36.8 % of the emulator's 2400)."""

_LETTERS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_SYMBOLS = ("1234567890", "@#$_&-+()/", "*\"':;!?")
_ID = f"{IME_PACKAGE}:id/"


def _key(rid: str, desc: str, on_click: Callable[[], Any], label: str | None = None, weight: float = 1.0) -> View:
    label = desc if label is None else label
    return View(cls="android.widget.FrameLayout", content_desc=desc, resource_id=_ID + rid, text="", clickable=True,
                weight=weight, on_click=on_click, icon=label, background="#ffffff",
                size=22 if len(label) == 1 else 14)


_TOOLBAR = (("Sticker Keyboard", "stk"), ("GIF Keyboard", "GIF"), ("Clipboard", "clip"), ("Settings", "set"),
            ("Theme settings", "thm"))
"""The header's toolbar between "More features" and "Voice input" (Gboard's shortcuts, each a ``FrameLayout``
with no resource name), as the real episodes list it while no word is being suggested."""


_SUGGESTION_WIDTHS = (272, 306, 272)
"""Gboard's suggestion slots (px at 1080 wide) between "More features" and "Voice input" while a word is typed on
its keys: the second held-out source's tuning run ClockStopWatchRunning of 2025-12-13T21:50 lists, after "m" and
"v" typed on the keys, "m", "my", "me" and "v", "very", "video" there (``FrameLayout``s described by the word)."""


def _suggestions(composing: str, press: Callable[[str], None]) -> list[View]:
    """The three slots: the typed word (a tap keeps it and adds a space), then two of Gboard's completions, which
    come from its dictionary and its learning: the sim does not know them, so it lists the slots undescribed."""
    return [View(cls="android.widget.FrameLayout", content_desc=composing if i == 0 else "", text="", clickable=True,
                 long_clickable=True, focusable=True, weight=width,
                 on_click=(lambda: press("suggestion")) if i == 0 else None, icon=composing if i == 0 else "",
                 size=16) for i, width in enumerate(_SUGGESTION_WIDTHS)]


def _tool(desc: str, icon: str, tell: Callable[[str], None]) -> View:
    return View(cls="android.widget.FrameLayout", content_desc=desc, text="", clickable=True, weight=1.0,
                on_click=lambda: tell(f"{desc} is not available"), icon=icon, size=14)


def _row(keys: list[View], share: float = 58.7) -> View:
    """A row of keys taking ``share`` (its height in dp on a full-size keyboard) of the keys area."""
    return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, weight=share, layout_only=True,
                children=keys)


def _gap(width: float | None = None, weight: float = 0.0, height: float = 1.0) -> View:
    return View(cls="android.view.View", width=width, weight=weight, height=height, layout_only=True)


_NUMBER_PAD = (("1", "2", "3", "Dash"), ("4", "5", "6", "Space"), ("7", "8", "9", "Delete"), (",", "0", ".", None))


def _number_pad(enter_label: str, type_char: Callable[[str], None], press: Callable[[str], None]) -> View:
    """Gboard's number pad (a field for a number: Pro Expense's Amount): no header row, four rows of four keys
    ``key_pos_number_line<row>_<column>`` (Dash, Space, Delete in the last column), the action key last."""
    rows: list[View] = [_row([_gap(weight=1.0)], 44.2), _row([_gap(weight=1.0)], 8.0)]
    for r, keys in enumerate(_NUMBER_PAD, 1):
        row: list[View] = []
        for c, key in enumerate(keys, 1):
            if key is None:
                row.append(_key("key_pos_ime_action", enter_label, lambda: press("enter"), weight=1.0))
            elif key == "Delete":
                row.append(_key(f"key_pos_number_line{r}_{c}", key, lambda: press("delete"), "Del"))
            else:
                char = {"Dash": "-", "Space": " "}.get(key, key)
                row.append(_key(f"key_pos_number_line{r}_{c}", key, lambda ch=char: type_char(ch), char))
        rows.append(_row(row))
    keys_area = View(cls="android.widget.FrameLayout", resource_id=_ID + "keyboard_holder", weight=1.0,
                     background="#e9eef6", padding=(2.0, 0.0), children=rows)
    return _with_nav(keys_area, press, lambda _text: None)


def build_keyboard(shift: bool, symbols: bool, enter_label: str, type_char: Callable[[str], None],
                   press: Callable[[str], None], *, digits_row: bool = False, emoji: bool = True,
                   say: Callable[[str], None] | None = None, number_pad: bool = False, composing: str = "") -> View:
    """The keyboard window's view. ``type_char(c)`` types one character; ``press(name)`` handles "shift",
    "symbols", "delete", "enter", "suggestion" (the typed word's slot) and "back" (the navigation strip's Back: hide
    the keyboard). ``digits_row`` puts the digits above the letters (Gboard's layout for a phone-number field
    here), without the emoji key; ``say(text)`` answers the keys the sim has nothing behind (voice input, emoji,
    other keyboards). While ``composing`` (a word typed on the keys) the header's shortcuts give way to Gboard's
    three suggestion slots (:data:`_SUGGESTION_WIDTHS`)."""
    tell = say or (lambda _text: None)
    if number_pad:
        return _number_pad(enter_label, type_char, press)
    if digits_row:
        header = [_key(f"key_pos_password_header_number_{d}", d, lambda d=d: type_char(d)) for d in "1234567890"]
    else:
        header = [
            _key("key_pos_header_access_points_menu", "More features", lambda: tell("No more features"), "+",
                 weight=1.03),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, weight=7.6, layout_only=True,
                 children=_suggestions(composing, press) if composing else
                 [_tool(desc, icon, tell) for desc, icon in _TOOLBAR]),
            _key("key_pos_header_power_key", "Voice input", lambda: tell("Voice input is not available"), "mic",
                 weight=1.03),
        ]
    rows = _SYMBOLS if symbols else _LETTERS
    key_rows: list[View] = [_row(header, 44.2), _row([_gap(weight=1.0)], 8.0)]
    for r, chars in enumerate(rows):
        keys: list[View] = []
        if r == 1 and not symbols:
            keys.append(_gap(weight=0.5))
        if r == 2:
            keys.append(_key("key_pos_switch_to_symbol" if symbols else "key_pos_shift",
                             "Letters" if symbols else "Shift",
                             (lambda: press("symbols")) if symbols else (lambda: press("shift")),
                             "ABC" if symbols else "^", 1.5))
        for c, ch in enumerate(chars):
            shown = ch.upper() if shift and not symbols else ch
            keys.append(_key(f"key_pos_{r}_{c + (1 if r == 2 else 0)}", shown, lambda ch=shown: type_char(ch)))
        if r == 2:
            keys.append(_key("key_pos_del", "Delete", lambda: press("delete"), "Del", 1.5))
        if r == 1 and not symbols:
            keys.append(_gap(weight=0.5))
        key_rows.append(_row(keys))
    bottom = [
        _key("key_pos_switch_to_symbol", "Letters" if symbols else "Symbol keyboard", lambda: press("symbols"),
             "ABC" if symbols else "?123", 1.5),
        _key("key_pos_bottom_symbol_1", ",", lambda: type_char(",")),
    ]
    if emoji and not digits_row:
        bottom.append(_key("key_pos_switch_to_next_language", "Emoji button",
                           lambda: tell("The emoji keyboard is not available"), ":)"))
    bottom += [
        _key("key_pos_space", "Space", lambda: type_char(" "), " ", 4.0 if emoji and not digits_row else 5.0),
        _key("key_pos_bottom_symbol_2", ".", lambda: type_char(".")),
        _key("key_pos_ime_action", enter_label, lambda: press("enter"), weight=1.5),
    ]
    key_rows.append(_row(bottom))
    keys_area = View(cls="android.widget.FrameLayout", resource_id=_ID + "keyboard_holder", weight=1.0,
                     background="#e9eef6", padding=(2.0, 0.0), children=key_rows)
    return _with_nav(keys_area, press, tell)


def _with_nav(keys_area: View, press: Callable[[str], None], tell: Callable[[str], None]) -> View:
    nav = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=NAV_STRIP_DP, layout_only=True,
               background="#e9eef6", children=[
                   _gap(27.0), View(cls="android.widget.ImageView", content_desc="Back",
                                    resource_id="android:id/input_method_nav_back", clickable=True, width=69.7,
                                    height=NAV_STRIP_DP, icon="v", on_click=lambda: press("back")),
                   _gap(weight=1.0),
                   View(cls="android.widget.ImageView", content_desc="Switch input method",
                        resource_id="android:id/input_method_nav_ime_switcher", clickable=True, width=69.7,
                        height=NAV_STRIP_DP, icon="kb", on_click=lambda: tell("No other keyboard is installed")),
                   _gap(27.0)])
    return View(cls="android.widget.FrameLayout", resource_id=_ID + "input_area", children=[keys_area, nav],
                dump_rank=0)
