"""Safe text entry on a real device: ``input text`` for what it can type, an input-method broadcast for the rest.

Android's ``input text`` types printable ASCII (plus newline as Enter and tab) and fails on anything
else. Text is always quoted by :func:`android_gym.device.input_text_commands`, so nothing in it is
ever run by the device shell. Other characters (emoji, CJK, accents) need an input method that takes
text by broadcast: ADBKeyboard (``am broadcast -a ADB_INPUT_B64 --es msg <base64>``) or the
uiautomator2 keyboard (``ADB_KEYBOARD_INPUT_TEXT``). Without one, those characters are dropped with a
:class:`TextInputWarning` naming them, and the ASCII rest is typed.
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from android_gym.device import KEYCODE_ENTER, input_text_commands

TYPEABLE_CONTROLS = "\n\t"
"""Control characters ``input text`` can type: newline (the Enter key) and tab."""


class TextInputWarning(UserWarning):
    """Characters could not be typed on the device (no input method takes them) and were dropped."""


@dataclass(frozen=True)
class BroadcastIme:
    """An input method that types text it receives in a broadcast: its id, package, action and extra."""

    ime_id: str
    package: str
    action: str
    extra: str

    def command(self, text: str) -> str:
        """The shell command that makes this IME commit ``text`` (base64, so nothing needs quoting)."""
        payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
        return f"am broadcast -a {self.action} --es {self.extra} {payload}"


ADB_KEYBOARD = BroadcastIme("com.android.adbkeyboard/.AdbIME", "com.android.adbkeyboard", "ADB_INPUT_B64", "msg")
"""ADBKeyboard (github.com/senzhk/ADBKeyBoard), the IME AndroidWorld installs."""

UIAUTOMATOR2_KEYBOARD = BroadcastIme("com.github.uiautomator/.AdbKeyboard", "com.github.uiautomator",
                                     "ADB_KEYBOARD_INPUT_TEXT", "text")
"""The keyboard uiautomator2 installs with its app (``d.set_input_ime()``)."""

KNOWN_IMES: tuple[BroadcastIme, ...] = (ADB_KEYBOARD, UIAUTOMATOR2_KEYBOARD)


def is_typeable(ch: str) -> bool:
    """True when ``input text`` can type ``ch`` (printable ASCII, newline or tab)."""
    return " " <= ch <= "~" or ch in TYPEABLE_CONTROLS


def split_typeable(text: str) -> tuple[str, str]:
    """(what ``input text`` can type, the characters it cannot), each in their original order."""
    kept = "".join(ch for ch in text if is_typeable(ch))
    dropped = "".join(ch for ch in text if not is_typeable(ch))
    return kept, dropped


def ime_text_commands(text: str, ime: BroadcastIme) -> list[str]:
    """Commands that type ``text`` through ``ime``: one broadcast per line, Enter between lines."""
    commands: list[str] = []
    for i, line in enumerate(text.split("\n")):
        if i:
            commands.append(f"input keyevent {KEYCODE_ENTER}")
        if line:
            commands.append(ime.command(line))
    return commands


def text_entry_commands(text: str, ime: BroadcastIme | None = None, *, stacklevel: int = 2) -> list[str]:
    """Commands that type ``text`` on a device whose broadcast IME is ``ime`` (None: none installed).

    Typeable text goes through ``input text`` (the commands every driver sends); other text goes
    through ``ime`` when there is one, else its untypeable characters are dropped with a
    :class:`TextInputWarning` and the rest is typed.
    """
    kept, dropped = split_typeable(text)
    if not dropped:
        return input_text_commands(text)
    if ime is not None:
        return ime_text_commands(text, ime)
    shown = ", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in dict.fromkeys(dropped))
    warnings.warn(
        f"{len(dropped)} character(s) cannot be typed with 'input text' and no broadcast input method "
        f"(ADBKeyboard) is installed, so they were dropped: {shown}; typing {kept!r}",
        TextInputWarning, stacklevel=stacklevel + 1)
    return input_text_commands(kept)


def detect_broadcast_ime(shell: Callable[[str], str], imes: Sequence[BroadcastIme] = KNOWN_IMES
                         ) -> tuple[BroadcastIme | None, bool]:
    """Find an installed broadcast IME: (the IME or None, whether it is already enabled).

    Reads ``ime list -s`` (enabled IMEs) first, then ``pm list packages`` (installed ones).
    """
    enabled = {line.strip() for line in shell("ime list -s").splitlines()}
    for ime in imes:
        if ime.ime_id in enabled:
            return ime, True
    packages = {line.strip().removeprefix("package:") for line in shell("pm list packages").splitlines()}
    for ime in imes:
        if ime.package in packages:
            return ime, False
    return None, False
