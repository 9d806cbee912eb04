"""Reading and setting up device state through the Android shell, the way task checks do it.

Every helper takes anything with a ``shell(command) -> str`` method (a :class:`~android_gym.device.Device`)
and uses only commands a real phone answers: ``content query|insert|delete``, ``settings get|put``,
``getprop``, ``dumpsys window``, ``date``, ``am force-stop``, ``input keyevent``, ``uiautomator dump``
and ``am broadcast`` (the Clipper clipboard receiver). So a check written with them runs against the
in-process simulated phone, the simulated phone behind ``adb``, and an emulator.

``content query`` prints rows as ``Row: 0 a=1, b=some, text`` without quoting, so a value may hold
", " or "=": :func:`parse_rows` splits a row exactly by knowing the projection's columns in order
(put free-text columns last), reads ``NULL`` as None, and keeps newlines inside values.

Also here: the answer comparison question tasks share (:func:`normalize_answer`, :func:`answers_match`)
and the wall-clock convention of the providers (:func:`to_ms`: a naive datetime read as UTC, the
simulated phone's time zone).
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from android_gym.tasks.base import TaskError

if TYPE_CHECKING:  # pragma: no cover
    from android_gym.device import Device
    from android_gym.xml import UINode

__all__ = [
    "NO_RESULT",
    "answers_match",
    "content_delete",
    "content_insert",
    "content_query",
    "device_time_ms",
    "force_stop",
    "foreground_activity",
    "foreground_package",
    "from_ms",
    "getprop",
    "go_home",
    "normalize_answer",
    "parse_rows",
    "quote",
    "read_setting",
    "screen_nodes",
    "set_clipboard",
    "to_ms",
    "write_setting",
]

NO_RESULT = "No result found."
"""What ``content query`` prints when no row matches."""

_EPOCH = dt.datetime(1970, 1, 1)
_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ROW_PREFIX = re.compile(r"Row: 0 ")
_FOCUS = re.compile(r"mCurrentFocus=Window\{\S+ \S+ ([\w.]+)/([\w.$]+)\}")
_SETTINGS_NAMESPACES = ("system", "secure", "global")


def quote(value: object) -> str:
    """Quote one argument for the device shell (``sh``); safe strings come back unchanged."""
    return shlex.quote(str(value))


# --- content providers ------------------------------------------------------------------------------


def parse_rows(output: str, columns: Sequence[str]) -> list[dict[str, str | None]]:
    """Rows of ``content query --projection a:b:...`` output as dicts (None for ``NULL``).

    ``columns`` are the projection's columns in order. A value runs up to ", <next column>=", the
    last column takes the rest of its row (newlines included), so free-text columns belong last.
    "No result found." gives []; an error message or any other text raises :class:`TaskError`.
    """
    if not columns:
        raise ValueError("parse_rows needs the projection's columns")
    text = output.strip("\n")
    if text.startswith(NO_RESULT):
        return []
    first = _ROW_PREFIX.search(text)
    if first is None or (first.start() > 0 and text[first.start() - 1] != "\n"):
        raise TaskError(f"content query failed: {output.strip()!r}")
    rows: list[dict[str, str | None]] = []
    pos = first.end()
    index = 0
    while True:
        marker = f"\nRow: {index + 1} "
        end = text.find(marker, pos)
        body = text[pos:] if end < 0 else text[pos:end]
        rows.append(_parse_row(body, columns))
        if end < 0:
            return rows
        pos = end + len(marker)
        index += 1


def _parse_row(body: str, columns: Sequence[str]) -> dict[str, str | None]:
    row: dict[str, str | None] = {}
    pos = 0
    for i, col in enumerate(columns):
        prefix = f"{col}="
        if not body.startswith(prefix, pos):
            raise TaskError(f"unexpected content row {body!r}: expected column {col!r} at {body[pos:]!r}")
        start = pos + len(prefix)
        if i + 1 < len(columns):
            end = body.find(f", {columns[i + 1]}=", start)
            if end < 0:
                raise TaskError(f"unexpected content row {body!r}: column {columns[i + 1]!r} missing")
            pos = end + 2
        else:
            end = len(body)
        value = body[start:end]
        row[col] = None if value == "NULL" else value
    return row


def _check_columns(columns: Sequence[str]) -> None:
    bad = [c for c in columns if not _COLUMN.match(c)]
    if bad or not columns:
        raise ValueError(f"projection columns must be plain column names, got {list(columns)!r}")


def content_query(device: Device, uri: str, columns: Sequence[str], where: str | None = None,
                  sort: str | None = None) -> list[dict[str, str | None]]:
    """``content query`` through the device shell, parsed with the projection ``columns`` (see :func:`parse_rows`)."""
    _check_columns(columns)
    cmd = f"content query --uri {quote(uri)} --projection {':'.join(columns)}"
    if where:
        cmd += f" --where {quote(where)}"
    if sort:
        cmd += f" --sort {quote(sort)}"
    return parse_rows(device.shell(cmd), columns)


def content_insert(device: Device, uri: str, binds: Iterable[tuple[str, str, Any]]) -> None:
    """``content insert --uri U --bind name:type:value ...`` (type s, i, l, f, d, b); TaskError if it prints an error."""
    parts = [f"--bind {quote(f'{name}:{kind}:{value}')}" for name, kind, value in binds]
    if not parts:
        raise ValueError(f"content insert on {uri} needs at least one bind")
    _expect_silence(device.shell(f"content insert --uri {quote(uri)} {' '.join(parts)}"), "content insert", uri)


def content_delete(device: Device, uri: str, where: str | None = None) -> None:
    """``content delete --uri U [--where W]``; TaskError if it prints an error."""
    cmd = f"content delete --uri {quote(uri)}"
    if where:
        cmd += f" --where {quote(where)}"
    _expect_silence(device.shell(cmd), "content delete", uri)


def _expect_silence(output: str, what: str, uri: str) -> None:
    if output.strip():
        raise TaskError(f"{what} on {uri} failed: {output.strip()}")


# --- settings, properties, time ---------------------------------------------------------------------


def read_setting(device: Device, namespace: str, key: str) -> str:
    """``settings get NAMESPACE KEY``, stripped ("null" when unset)."""
    _check_namespace(namespace)
    return device.shell(f"settings get {namespace} {quote(key)}").strip()


def write_setting(device: Device, namespace: str, key: str, value: str | int) -> None:
    """``settings put NAMESPACE KEY VALUE``."""
    _check_namespace(namespace)
    device.shell(f"settings put {namespace} {quote(key)} {quote(value)}")


def _check_namespace(namespace: str) -> None:
    if namespace not in _SETTINGS_NAMESPACES:
        raise ValueError(f"settings namespace must be one of {_SETTINGS_NAMESPACES}, got {namespace!r}")


def getprop(device: Device, name: str) -> str:
    """A system property (``getprop NAME``), stripped; "" when unset."""
    return device.shell(f"getprop {quote(name)}").strip()


def device_time_ms(device: Device) -> int:
    """The device clock in epoch milliseconds (``date +%s``, so whole seconds)."""
    out = device.shell("date +%s").strip()
    if not out.isdigit():
        raise TaskError(f"`date +%s` gave {out!r}, not a number")
    return int(out) * 1000


def to_ms(when: dt.datetime) -> int:
    """Epoch milliseconds of a naive wall-clock time read as UTC (the providers' convention here)."""
    return int((when - _EPOCH).total_seconds() * 1000)


def from_ms(ms: int | str) -> dt.datetime:
    """The naive wall-clock time of provider epoch milliseconds (inverse of :func:`to_ms`)."""
    return _EPOCH + dt.timedelta(milliseconds=int(ms))


# --- apps and screen ------------------------------------------------------------------------------------


def foreground_activity(device: Device) -> tuple[str, str]:
    """(package, activity) of the focused window from ``dumpsys window``; ("", "") when none can be read."""
    m = _FOCUS.search(device.shell("dumpsys window"))
    return (m.group(1), m.group(2)) if m else ("", "")


def foreground_package(device: Device) -> str:
    """The package of the focused window ("" when unknown)."""
    return foreground_activity(device)[0]


def force_stop(device: Device, *packages: str) -> None:
    """``am force-stop`` each package: its UI state is dropped and it cold-starts next time (data stays)."""
    for package in packages:
        device.shell(f"am force-stop {quote(package)}")


def go_home(device: Device, *packages: str) -> None:
    """Force-stop ``packages`` and show the home screen (the usual start of a task)."""
    force_stop(device, *packages)
    device.shell("input keyevent 3")


def screen_nodes(device: Device) -> list[UINode]:
    """Every node of the current screen, from ``uiautomator dump`` and ``cat`` of the dump file."""
    from android_gym.xml import parse_ui

    path = "/sdcard/window_dump.xml"
    device.shell(f"uiautomator dump {path}")
    return list(parse_ui(device.shell(f"cat {path}")).nodes)


def set_clipboard(device: Device, text: str) -> None:
    """Put ``text`` on the clipboard with the Clipper broadcast and read it back; TaskError when that fails."""
    device.shell(f"am broadcast -a clipper.set -e text {quote(text)}")
    out = device.shell("am broadcast -a clipper.get")
    m = re.search(r'data="(.*)"', out, re.DOTALL)
    if m is None or m.group(1) != text:
        raise TaskError("the clipboard could not be set through the shell (am broadcast -a clipper.set)")


# --- answers of question tasks ------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """Lower case, runs of non-alphanumeric characters made one space, trimmed (how answers are compared)."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def answers_match(answer: str | None, expected: Sequence[str]) -> bool:
    """True when the comma-separated ``answer`` names exactly the ``expected`` values (any order)."""
    if answer is None:
        return False
    given = sorted(normalize_answer(part) for part in answer.split(",") if normalize_answer(part))
    return given == sorted(normalize_answer(e) for e in expected)
