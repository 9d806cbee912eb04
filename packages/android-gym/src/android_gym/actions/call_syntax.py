"""A small hand-written reader for the Python-like call text agents emit (``click(start_box='...')``).

Model outputs are *almost* Python: they carry raw newlines inside quotes, unescaped apostrophes
(``type(content='I'm here')``), leading zeros (``[0123, 45]``) and special tokens. ``ast`` rejects
all of those, and ``eval`` is out of the question, so this module reads calls with a grammar of its
own::

    call   := NAME '(' [arg (',' arg)* [',']] ')'
    arg    := NAME '=' value | value
    value  := string | number | list | tuple | dict | true/false/none (any case) | null

Strings take single or double quotes; ``\\n \\t \\r \\\\ \\' \\"`` are escapes, any other backslash is
kept as written. A quote that matches the opening one only closes the string when what follows
looks like the end of a value (``)``, ``]``, ``}``, ``:``, end of text, or a comma followed by another
argument, or a keyword argument after a forgotten comma); otherwise it is taken as a literal
apostrophe. Errors are :class:`ActionParseError`
naming the problem and the character position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from android_gym.actions.types import ActionParseError

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_WS = " \t\r\n"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
_LITERAL_NAMES = {"true": True, "false": False, "none": None, "null": None}
# After ",": what may start the next argument, which tells a closing quote from an apostrophe.
_NEXT_ARG_RE = re.compile(r"\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*=|['\"\[({<\-+.\d)\]}]|$)")
# A keyword argument right after a quote (a forgotten comma) also ends the string, so the reader
# can report the missing comma instead of swallowing the next argument.
_KEYWORD_AFTER_RE = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)")


@dataclass(frozen=True)
class Call:
    """One call read from text: its name, positional and keyword arguments, and where it sat."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    start: int = 0
    end: int = 0
    source: str = ""

    @property
    def text(self) -> str:
        """The call exactly as written."""
        return self.source[self.start:self.end]


class CallReader:
    """Reads calls and values from ``source`` starting at any position; positions index ``source``."""

    max_depth = 32
    """Lists/objects nested deeper than this are refused (model outputs never need more)."""

    def __init__(self, source: str):
        self.source = source
        self._depth = 0

    def fail(self, message: str, position: int) -> ActionParseError:
        """An error naming ``message`` at ``position`` with a window of the source around it."""
        lo = max(0, position - 40)
        window = self.source[lo:position + 60]
        return ActionParseError(f"{message} at character {position}", text=window)

    def skip_ws(self, pos: int) -> int:
        """The first position at or after ``pos`` that is not whitespace."""
        n = len(self.source)
        while pos < n and self.source[pos] in _WS:
            pos += 1
        return pos

    def read_call(self, pos: int) -> Call:
        """Read ``NAME(...)`` starting at ``pos`` (leading whitespace allowed)."""
        start = self.skip_ws(pos)
        m = _NAME_RE.match(self.source, start)
        if not m:
            raise self.fail("expected a function name", start)
        name = m.group(0)
        p = self.skip_ws(m.end())
        if p >= len(self.source) or self.source[p] != "(":
            raise self.fail(f"expected '(' after {name!r}", p)
        open_at = p
        p += 1
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        while True:
            p = self.skip_ws(p)
            if p >= len(self.source):
                raise self.fail(f"missing ')' to close {name}( opened", open_at)
            if self.source[p] == ")":
                p += 1
                break
            key_match = _NAME_RE.match(self.source, p)
            if key_match:
                after = self.skip_ws(key_match.end())
                if after < len(self.source) and self.source[after] == "=" and self.source[after:after + 2] != "==":
                    key = key_match.group(0)
                    if key in kwargs:
                        raise self.fail(f"argument {key!r} given twice in {name}()", p)
                    value, p = self.read_value(after + 1)
                    kwargs[key] = value
                else:
                    value, p = self.read_value(p)
                    if kwargs:
                        raise self.fail(f"positional argument after keyword arguments in {name}()", p)
                    args.append(value)
            else:
                value, p = self.read_value(p)
                if kwargs:
                    raise self.fail(f"positional argument after keyword arguments in {name}()", p)
                args.append(value)
            p = self.skip_ws(p)
            if p >= len(self.source):
                raise self.fail(f"missing ')' to close {name}( opened", open_at)
            if self.source[p] == ",":
                p += 1
                continue
            if self.source[p] == ")":
                p += 1
                break
            raise self.fail(f"expected ',' or ')' in {name}(), found {self.source[p]!r}", p)
        return Call(name=name, args=tuple(args), kwargs=kwargs, start=start, end=p, source=self.source)

    def read_value(self, pos: int) -> tuple[Any, int]:
        """Read one value at ``pos``; returns it and the position just after it."""
        p = self.skip_ws(pos)
        if p >= len(self.source):
            raise self.fail("expected a value but the text ended", p)
        ch = self.source[p]
        if ch in "'\"":
            return self.read_string(p)
        if ch in "[({":
            if self._depth >= self.max_depth:
                raise self.fail(f"values nested more than {self.max_depth} deep", p)
            self._depth += 1
            try:
                if ch == "{":
                    return self._read_dict(p)
                return self._read_sequence(p, "]" if ch == "[" else ")")
            finally:
                self._depth -= 1
        m = _NUMBER_RE.match(self.source, p)
        if m:
            text = m.group(0)
            if len(text) > 400:
                raise self.fail("number with more than 400 characters", p)
            is_float = any(c in text for c in ".eE")
            return (float(text) if is_float else int(text)), m.end()
        m = _NAME_RE.match(self.source, p)
        if m:
            word = m.group(0)
            if word.lower() in _LITERAL_NAMES:
                return _LITERAL_NAMES[word.lower()], m.end()
            raise self.fail(f"unexpected bare word {word!r} (strings need quotes)", p)
        raise self.fail(f"unexpected character {ch!r} where a value should start", p)

    def read_string(self, pos: int) -> tuple[str, int]:
        """Read a quoted string at ``pos`` (see the module notes on escapes and apostrophes)."""
        quote = self.source[pos]
        out: list[str] = []
        p = pos + 1
        n = len(self.source)
        while p < n:
            ch = self.source[p]
            if ch == "\\" and p + 1 < n:
                nxt = self.source[p + 1]
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                p += 2
                continue
            if ch == quote and self._closes_string(p + 1):
                return "".join(out), p + 1
            out.append(ch)
            p += 1
        raise self.fail(f"unterminated string (opening {quote} has no closing quote)", pos)

    def _closes_string(self, after: int) -> bool:
        p = self.skip_ws(after)
        if p >= len(self.source):
            return True
        ch = self.source[p]
        if ch in ")]}:":
            return True
        if ch == ",":
            return _NEXT_ARG_RE.match(self.source, p + 1) is not None
        return _KEYWORD_AFTER_RE.match(self.source, after) is not None

    def _read_sequence(self, pos: int, close: str) -> tuple[list[Any], int]:
        items: list[Any] = []
        p = pos + 1
        while True:
            p = self.skip_ws(p)
            if p >= len(self.source):
                raise self.fail(f"missing {close!r} to close the list opened", pos)
            if self.source[p] == close:
                return items, p + 1
            value, p = self.read_value(p)
            items.append(value)
            p = self.skip_ws(p)
            if p < len(self.source) and self.source[p] == ",":
                p += 1
            elif p < len(self.source) and self.source[p] == close:
                return items, p + 1
            elif p >= len(self.source):
                raise self.fail(f"missing {close!r} to close the list opened", pos)
            else:
                raise self.fail(f"expected ',' or {close!r} in a list, found {self.source[p]!r}", p)

    def _read_dict(self, pos: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        p = pos + 1
        while True:
            p = self.skip_ws(p)
            if p >= len(self.source):
                raise self.fail("missing '}' to close the object opened", pos)
            if self.source[p] == "}":
                return out, p + 1
            key, p = self.read_value(p)
            if not isinstance(key, str):
                raise self.fail("object keys must be strings", p)
            p = self.skip_ws(p)
            if p >= len(self.source) or self.source[p] != ":":
                raise self.fail("expected ':' after an object key", p)
            value, p = self.read_value(p + 1)
            out[key] = value
            p = self.skip_ws(p)
            if p < len(self.source) and self.source[p] == ",":
                p += 1
            elif p < len(self.source) and self.source[p] == "}":
                return out, p + 1
            else:
                raise self.fail("expected ',' or '}' in an object", p)


def read_call(text: str) -> Call:
    """Read exactly one call from ``text``; anything after it is an error."""
    reader = CallReader(text)
    call = reader.read_call(0)
    rest = reader.skip_ws(call.end)
    if rest < len(text):
        raise reader.fail(f"unexpected text after {call.name}(...)", rest)
    return call


def read_literal(text: str) -> Any:
    """Read one literal value (a dict, list, string or number) written in the call grammar."""
    reader = CallReader(text)
    value, end = reader.read_value(0)
    rest = reader.skip_ws(end)
    if rest < len(text):
        raise reader.fail("unexpected text after the value", rest)
    return value
