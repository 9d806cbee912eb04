"""The ``content`` tool's small SQL surface: ``--where`` predicates, ``--sort``, ``--bind`` values and row printing.

Where clauses support ``col = 'v'`` (also ``!=``/``<>``, ``<``, ``<=``, ``>``, ``>=``), ``LIKE`` with
``%``/``_``, ``IS [NOT] NULL``, ``IN (...)``, ``AND``/``OR``/``NOT`` and parentheses; numbers compare
numerically, everything else as text, as SQLite would for these simple cases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Row = dict[str, Any]
Predicate = Callable[[Row], bool]

_TOKEN = re.compile(r"""\s*(?:(?P<str>'(?:[^']|'')*'|"(?:[^"]|"")*")|(?P<num>-?\d+(?:\.\d+)?)|"""
                    r"""(?P<op><>|!=|<=|>=|=|==|<|>|\(|\)|,)|(?P<word>[A-Za-z_][\w.]*))""")


class ContentError(ValueError):
    """A ``content`` argument (where clause, sort, bind) could not be understood."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ContentError(f"cannot parse where clause {text!r} at {text[pos:]!r}")
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "str":
            q = value[0]
            value = value[1:-1].replace(q + q, q)
        out.append((kind, value))
        pos = m.end()
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _compare(left: Any, op: str, right: Any) -> bool:
    if left is None or right is None:
        return False
    ln, rn = _number(left), _number(right)
    if ln is not None and rn is not None:
        a: Any = ln
        b: Any = rn
    else:
        a, b = str(left), str(right)
    if op in ("=", "=="):
        return a == b
    if op in ("!=", "<>"):
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


def _like(value: Any, pattern: str) -> bool:
    if value is None:
        return False
    rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, str(value), re.IGNORECASE | re.DOTALL) is not None


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0
        self.text = text

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ContentError(f"where clause {self.text!r} ends too early")
        self.i += 1
        return tok

    def word(self, *words: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == "word" and tok[1].upper() in words:
            self.i += 1
            return True
        return False

    def expect_op(self, op: str) -> None:
        tok = self.next()
        if tok != ("op", op):
            raise ContentError(f"expected {op!r} in where clause {self.text!r}, got {tok[1]!r}")

    def parse(self) -> Predicate:
        pred = self.or_expr()
        if self.peek() is not None:
            raise ContentError(f"unexpected {self.peek()[1]!r} in where clause {self.text!r}")  # type: ignore[index]
        return pred

    def or_expr(self) -> Predicate:
        left = self.and_expr()
        while self.word("OR"):
            right = self.and_expr()
            left = (lambda a, b: lambda r: a(r) or b(r))(left, right)
        return left

    def and_expr(self) -> Predicate:
        left = self.not_expr()
        while self.word("AND"):
            right = self.not_expr()
            left = (lambda a, b: lambda r: a(r) and b(r))(left, right)
        return left

    def not_expr(self) -> Predicate:
        if self.word("NOT"):
            inner = self.not_expr()
            return lambda r: not inner(r)
        return self.atom()

    def value(self) -> Any:
        kind, val = self.next()
        if kind in ("str", "num"):
            return val
        if kind == "word" and val.upper() == "NULL":
            return None
        if kind == "word":
            return ("col", val)
        raise ContentError(f"expected a value in where clause {self.text!r}, got {val!r}")

    def atom(self) -> Predicate:
        tok = self.peek()
        if tok == ("op", "("):
            self.i += 1
            inner = self.or_expr()
            self.expect_op(")")
            return inner
        kind, col = self.next()
        if kind not in ("word", "str"):
            raise ContentError(f"expected a column name in where clause {self.text!r}, got {col!r}")
        if self.word("IS"):
            negate = self.word("NOT")
            if not self.word("NULL"):
                raise ContentError(f"expected NULL after IS in where clause {self.text!r}")
            return (lambda c, n: lambda r: (r.get(c) is None) != n)(col, negate)
        negate = self.word("NOT")
        if self.word("LIKE"):
            pattern = self.value()
            return (lambda c, p, n: lambda r: _like(r.get(c), str(p)) != n)(col, pattern, negate)
        if self.word("IN"):
            self.expect_op("(")
            values = [self.value()]
            while self.peek() == ("op", ","):
                self.i += 1
                values.append(self.value())
            self.expect_op(")")
            return (lambda c, vs, n: lambda r: any(_compare(r.get(c), "=", v) for v in vs) != n)(col, values, negate)
        if negate:
            raise ContentError(f"expected LIKE or IN after NOT in where clause {self.text!r}")
        kind, op = self.next()
        if kind != "op" or op in ("(", ")", ","):
            raise ContentError(f"expected a comparison after {col!r} in where clause {self.text!r}")
        right = self.value()
        if isinstance(right, tuple):
            other = right[1]
            return (lambda c, o, d: lambda r: _compare(r.get(c), o, r.get(d)))(col, op, other)
        return (lambda c, o, v: lambda r: _compare(r.get(c), o, v))(col, op, right)


def parse_where(where: str | None) -> Predicate:
    """A row predicate for an SQL-like where clause (None or empty: every row matches)."""
    if where is None or not where.strip():
        return lambda r: True
    return _Parser(where).parse()


def sort_rows(rows: list[Row], sort: str | None) -> list[Row]:
    """Rows ordered by ``"col [ASC|DESC], ..."`` (numbers numerically, None first)."""
    if not sort or not sort.strip():
        return rows
    keys: list[tuple[str, bool]] = []
    for part in sort.split(","):
        words = part.split()
        if not words or len(words) > 2 or (len(words) == 2 and words[1].upper() not in ("ASC", "DESC")):
            raise ContentError(f"cannot parse sort order {sort!r}")
        keys.append((words[0], len(words) == 2 and words[1].upper() == "DESC"))
    out = list(rows)
    for col, desc in reversed(keys):
        def key(r: Row, c: str = col) -> tuple[int, float, str]:
            v = r.get(c)
            n = _number(v)
            return (0, 0.0, "") if v is None else (1, n, "") if n is not None else (2, 0.0, str(v))
        out.sort(key=key, reverse=desc)
    return out


def project(rows: list[Row], projection: str | None) -> list[Row]:
    """Keep only the columns named in ``"a:b:c"`` (all when None), in that order."""
    if not projection:
        return rows
    cols = [c for c in projection.split(":") if c]
    return [{c: r.get(c) for c in cols} for r in rows]


def format_rows(rows: list[Row]) -> str:
    """Rows the way ``content query`` prints them: ``Row: 0 a=1, b=x`` (``NULL`` for None)."""
    if not rows:
        return "No result found.\n"
    lines = []
    for i, r in enumerate(rows):
        cells = ", ".join(f"{k}={'NULL' if v is None else v}" for k, v in r.items())
        lines.append(f"Row: {i} {cells}")
    return "\n".join(lines) + "\n"


_BIND_TYPES = {"s": str, "i": int, "l": int, "f": float, "d": float, "b": lambda v: v.lower() in ("1", "true")}


def parse_bind(spec: str) -> tuple[str, Any]:
    """``name:type:value`` (type s, i, l, f, d, b, or n for NULL) into (name, typed value)."""
    parts = spec.split(":", 2)
    if len(parts) == 2 and parts[1] == "n":
        return parts[0], None
    if len(parts) != 3 or parts[1] not in _BIND_TYPES:
        raise ContentError(f"bad --bind {spec!r}; expected name:type:value with type one of s,i,l,f,d,b,n")
    name, kind, raw = parts
    try:
        return name, _BIND_TYPES[kind](raw)
    except ValueError:
        raise ContentError(f"bad --bind {spec!r}: {raw!r} is not of type {kind}") from None


def split_uri(uri: str) -> tuple[str, str]:
    """(authority, path) of ``content://authority/path``."""
    if not uri.startswith("content://"):
        raise ContentError(f"uri {uri!r} must start with content://")
    rest = uri[len("content://"):]
    authority, _, path = rest.partition("/")
    if not authority:
        raise ContentError(f"uri {uri!r} has no authority")
    return authority, path
