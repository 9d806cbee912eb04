"""The ``Device`` protocol every driver implements, its errors, and how actions become shell commands.

Drivers (the embedded ``SimDevice``, the adb-backed ``AdbDevice``) speak the same Android shell
surface, so the translation from :class:`~android_gym.actions.Action` to ``input``/``am``/``monkey``
commands lives here once and both drivers use it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from android_gym.actions import (
    Action,
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
from android_gym.apps import resolve_package
from android_gym.screen import Screen


class DeviceError(RuntimeError):
    """A device failed; subclasses say how. Envs end the episode ``truncated`` with ``info["error"]``."""


class DeviceDisconnected(DeviceError):
    """The device went away (adb transport closed, emulator died)."""


class DeviceTimeout(DeviceError):
    """A device call did not answer within its timeout (a hung device)."""


class DeviceCrashed(DeviceError):
    """The device (or the system server on it) crashed and must be restarted or replaced."""


@runtime_checkable
class Device(Protocol):
    """What envs and tasks need from a phone: the shell, observations, actions and snapshots."""

    serial: str

    @property
    def screen_size(self) -> tuple[int, int]: ...

    def shell(self, command: str, timeout: float | None = None) -> str: ...

    def observe(self, screenshot: bool = False) -> Screen: ...

    def execute(self, action: Action) -> None: ...

    def snapshot_save(self, name: str) -> None: ...

    def snapshot_load(self, name: str) -> None: ...

    def health(self) -> bool: ...

    def close(self) -> None: ...

    # Drivers may also offer ``recover()`` (reconnect or restart a failed device); envs call it
    # before the next episode after a DeviceError.


KEYCODE_HOME = 3
KEYCODE_BACK = 4
KEYCODE_ENTER = 66
KEYCODE_DEL = 67

SCROLL_DURATION_MS = 300
LONG_PRESS_MS = 1000
DRAG_DURATION_MS = 1500


INPUT_TEXT_CHUNK = 400
"""Most characters one ``input text`` command carries (older adbd limits a shell command to 4 KiB)."""


def quote_input_text(text: str) -> str:
    """Quote ``text`` as the one argument of ``input text`` so it is typed literally and never run.

    The argument is single-quoted for the device ``sh`` (``'`` becomes ``'\\''``), so ``;``, ``$()``,
    backticks, ``|``, ``&&`` and newlines stay text. Android's ``input text`` knows one escape, ``%s``
    for a space, and no way to type a literal ``%s`` in one argument: spaces are sent as ``%s`` and
    text holding a literal ``%s`` raises ``ValueError`` (:func:`input_text_commands` splits it).
    """
    if "%s" in text:
        raise ValueError(f"input text cannot type a literal '%s' in one argument; split it: {text!r}")
    encoded = text.replace(" ", "%s")
    return "'" + encoded.replace("'", "'\\''") + "'"


def split_input_text(text: str, max_chars: int = INPUT_TEXT_CHUNK) -> list[str]:
    """Cut ``text`` into pieces that each type exactly as written through one ``input text``.

    A cut goes between a literal ``%`` and a following ``s`` (one argument would type a space) and
    between a backslash and a following ``%`` or space (some shells and the simulated phone read
    ``\\%`` as an escape), and every ``max_chars`` characters.
    """
    if max_chars < 2:
        raise ValueError(f"max_chars must be at least 2, got {max_chars}")
    pieces: list[str] = []
    current = ""
    for ch in text:
        prev = current[-1:] if current else ""
        cut = (prev == "%" and ch == "s") or (prev == "\\" and ch in "% ") or len(current) >= max_chars
        if cut:
            pieces.append(current)
            current = ""
        current += ch
    if current:
        pieces.append(current)
    return pieces


def input_text_commands(text: str) -> list[str]:
    """The ``input text`` commands that type ``text`` literally (empty text: no command)."""
    return [f"input text {quote_input_text(piece)}" for piece in split_input_text(text)]


def scroll_gesture(direction: str, x: int, y: int, width: int, height: int) -> tuple[int, int, int, int]:
    """The finger swipe that scrolls content in ``direction`` at (x, y): "down" moves the finger up."""
    dy = height // 4
    dx = width // 3
    if direction == "down":
        return x, min(height - 1, y + dy // 2), x, max(0, y - dy)
    if direction == "up":
        return x, max(0, y - dy // 2), x, min(height - 1, y + dy)
    if direction == "right":
        return min(width - 1, x + dx // 2), y, max(0, x - dx), y
    return max(0, x - dx // 2), y, min(width - 1, x + dx), y


def action_to_commands(action: Action, screen_size: tuple[int, int]) -> list[str]:
    """The shell commands that perform ``action`` on a device of ``screen_size`` (width, height)."""
    width, height = screen_size
    if isinstance(action, Click):
        return [f"input tap {action.x} {action.y}"]
    if isinstance(action, LongPress):
        return [f"input swipe {action.x} {action.y} {action.x} {action.y} {LONG_PRESS_MS}"]
    if isinstance(action, Swipe):
        return [f"input swipe {action.x} {action.y} {action.end_x} {action.end_y} {SCROLL_DURATION_MS}"]
    if isinstance(action, Drag):
        return [f"input draganddrop {action.x} {action.y} {action.end_x} {action.end_y} {DRAG_DURATION_MS}"]
    if isinstance(action, Scroll):
        x = width // 2 if action.x is None else action.x
        y = height // 2 if action.y is None else action.y
        x1, y1, x2, y2 = scroll_gesture(action.direction, x, y, width, height)
        return [f"input swipe {x1} {y1} {x2} {y2} {SCROLL_DURATION_MS}"]
    if isinstance(action, Type):
        commands = []
        if action.x is not None and action.y is not None:
            commands.append(f"input tap {action.x} {action.y}")
        if action.text:
            commands.extend(input_text_commands(action.text))
        if action.submit:
            commands.append(f"input keyevent {KEYCODE_ENTER}")
        return commands
    if isinstance(action, OpenApp):
        package = resolve_package(action.app)
        return [f"monkey -p {package} -c android.intent.category.LAUNCHER 1"]
    if isinstance(action, PressBack):
        return [f"input keyevent {KEYCODE_BACK}"]
    if isinstance(action, PressHome):
        return [f"input keyevent {KEYCODE_HOME}"]
    if isinstance(action, PressEnter):
        return [f"input keyevent {KEYCODE_ENTER}"]
    if isinstance(action, (Wait, Finished)):
        return []
    raise TypeError(f"no shell translation for action {action!r}")
