"""Parsing uiautomator hierarchy dumps into a typed tree (`parse_ui` -> `UITree` of `UINode`).

Accepts what real tools emit: plain ``uiautomator dump`` output (``<hierarchy><node .../>``), the Appium
variant (class names as element tags), single-quoted attributes, entities and newlines in text,
extra attributes (kept in ``UINode.attrs``, never interpreted unless listed here), multi-window dumps,
partial dumps without a ``<hierarchy>`` root, and junk printed around the XML (``UI hierchary dumped
to: ...``, shell warnings). Anything that is not well-formed XML raises `XMLParseError` with the line
and column; DTD entity declarations are refused (no dump has them, and they enable entity bombs).

Speed: a plain uiautomator dump (a ``<hierarchy>`` of ``<node>`` tags and nothing else, as text or UTF-8
bytes) is read by the optional C reader ``android_gym.xml._speedups`` when the package was built with it
(`NATIVE_READER` says; ``ANDROID_GYM_NO_SPEEDUPS=1`` in the environment turns it off). Without it, a dump
whose nodes all list the same attributes in the same order is split once at its double quotes: the
values sit at the odd positions, the tag structure at the even ones, and both are checked in bulk (see
`_fast_read`). Anything else (comments, other tags, odd encodings, errors ...) goes to the C expat
parser, and every reader gives expat's tree (tests compare them). `UINode` objects are only built when
``UITree.nodes`` is first used. On a parse error lxml re-reads the text for a precise message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any
from xml.parsers import expat

__all__ = ["NATIVE_READER", "Bounds", "UINode", "UITree", "XMLParseError", "parse_bounds", "parse_ui"]

if os.environ.get("ANDROID_GYM_NO_SPEEDUPS", "").strip() in ("", "0"):
    try:
        from android_gym.xml import _speedups
    except ImportError:  # built without a C compiler: the Python readers do the same work
        _speedups = None
else:
    _speedups = None
NATIVE_READER: bool = _speedups is not None
"""Whether plain dumps are read by the optional C reader (same trees as the Python readers, ~4x faster)."""

Bounds = tuple[int, int, int, int]
"""A rectangle as ``(x1, y1, x2, y2)`` screen pixels, x2/y2 exclusive like Android's ``Rect``."""

# The attributes read into fixed row positions (see the F_* constants); everything else stays in attrs.
FIELDS: tuple[str, ...] = (
    "bounds", "class", "text", "content-desc", "hint", "resource-id", "package",
    "clickable", "long-clickable", "scrollable", "checkable", "checked", "focusable", "focused",
    "selected", "password", "enabled", "editable", "drawing-order", "NAF", "visible-to-user", "displayed",
)  # fmt: skip
(F_BOUNDS, F_CLASS, F_TEXT, F_DESC, F_HINT, F_RID, F_PKG, F_CLICKABLE, F_LONG_CLICKABLE, F_SCROLLABLE,
 F_CHECKABLE, F_CHECKED, F_FOCUSABLE, F_FOCUSED, F_SELECTED, F_PASSWORD, F_ENABLED, F_EDITABLE,
 F_DRAWING_ORDER, F_NAF, F_VISIBLE, F_DISPLAYED) = range(len(FIELDS))  # fmt: skip

_BOUNDS_RE = re.compile(r"\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]")
_NO_DIGITS = str.maketrans("", "", "0123456789-")
_BOUNDS_SHAPE = "[,][,]|"
_BRACKETS_TO_COMMAS = str.maketrans({"[": None, "]": ",", "|": None})
_SMALL_INTS = {str(i): i for i in range(-4096, 8192)}  # dict lookups beat int() on the usual coordinates
_START_RE = re.compile(rb"<(?:\?xml|!--|!DOCTYPE|[A-Za-z_])")
_ROOT_TAG_RE = re.compile(
    rb"\s*(?:<\?xml[^>]*\?>)?\s*(?:(?:<!--.*?-->|<!DOCTYPE[^>]*>)\s*)*<([A-Za-z_][\w.\-:$]*)", re.S
)
_DECL_RE = re.compile(rb"\s*<\?xml[^>]*\?>")
_ENCODING_RE = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
# Encodings expat reads itself. Others (even the alias "utf8") go through Python's codecs first: expat's
# fallback for names it does not know handles single-byte encodings only.
_EXPAT_ENCODINGS = frozenset(("utf-8", "utf-16", "us-ascii", "ascii", "iso-8859-1", "latin-1", "latin1"))
# Characters XML 1.0 forbids (C0 controls except tab/newline/return), raw or as character references.
_BAD_CHARS_RE = re.compile(
    rb"[\x00-\x08\x0b\x0c\x0e-\x1f]|&#(?:0*(?:[0-8]|1[1-2]|1[4-9]|2\d|3[01])|[xX]0*(?:[0-8]|[bBcCeEfF]|1[0-9a-fA-F]));"
)
_EDITABLE_CLASS_RE = re.compile(r"(?:EditText|AutoCompleteTextView|SearchAutoComplete)$")
TRUE_VALUES = frozenset(("true", "True", "TRUE", "1"))
"""Attribute values read as true."""
_TRUE = TRUE_VALUES
FALSE_VALUES = frozenset(("false", "False", "FALSE", "0"))
"""Attribute values read as false."""
_FALSE = FALSE_VALUES


class XMLParseError(ValueError):
    """A hierarchy dump is not well-formed XML (or holds no XML at all); the message gives line and column."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.reason = message
        self.line = line
        self.column = column
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"malformed UI hierarchy XML: {message}{where}")


@dataclass(slots=True)
class UINode:
    """One view of the hierarchy with the attributes agents use; ``attrs`` keeps every raw attribute.

    ``index`` is the node's position in `UITree.nodes` (document pre-order); ``index_path`` is the
    chain of child positions from the top (position in the dump, not the ``index`` attribute, which
    skips invisible children). ``bounds`` is None when the node has no parseable bounds. ``end`` is one
    past the last node of its subtree (pre-order keeps a subtree contiguous). ``visible`` is False only
    when the dump says so (``visible-to-user="false"`` or Appium's ``displayed="false"``).
    """

    index: int
    index_path: tuple[int, ...]
    parent: int | None
    children: list[int]
    end: int
    depth: int
    class_name: str
    package: str
    resource_id: str
    text: str
    content_desc: str
    hint: str
    bounds: Bounds | None
    checkable: bool
    checked: bool
    clickable: bool
    enabled: bool
    focusable: bool
    focused: bool
    scrollable: bool
    long_clickable: bool
    password: bool
    selected: bool
    editable: bool
    naf: bool
    drawing_order: int | None
    visible: bool
    attrs: dict[str, str]

    @property
    def short_class(self) -> str:
        """The last dotted segment of the class name (``android.widget.Switch`` -> ``Switch``)."""
        return self.class_name.rpartition(".")[2]

    @property
    def label(self) -> str:
        """Text and content-desc merged (each once), what a user would read for this node."""
        if self.text and self.content_desc and self.text != self.content_desc:
            return f"{self.text} {self.content_desc}"
        return self.text or self.content_desc


class UITree:
    """A parsed dump (made by `parse_ui`): nodes in document pre-order plus dump-level facts.

    ``screen_size`` is ``(width, height)`` from the union of the top-level nodes' bounds (else from
    Appium's ``<hierarchy width= height=>``, else None); ``rotation`` is ``<hierarchy rotation=...>`` (0 when absent); ``attrs``
    holds the ``<hierarchy>`` attributes. The per-node columns (``parents``, ``rows``, ``bounds`` ...)
    are what the compressor reads; ``nodes`` gives the same data as `UINode` objects.
    """

    __slots__ = (
        "roots", "rotation", "screen_size", "attrs", "parents", "child_lists", "ends", "rows", "bounds",
        "classes", "editable", "_raw", "_raw_keys", "_nodes",
    )  # fmt: skip

    def __init__(self, rows: list[tuple[str, ...]], parents: list[int], attrs: dict[str, str], raw: Sequence[Any],
                 raw_keys: tuple[str, ...] | None = None, *, tags: list[str] | None = None,
                 columns: list[list[str]] | None = None,
                 links: tuple[list[int], list[list[int]], list[int]] | None = None,
                 bounds: list[Bounds | None] | None = None):  # fmt: skip
        # raw: per node its flat [name, value, ..., ""] list (expat reader), or (fast reader, ``raw_keys``
        # given) all values in one flat sequence, ``len(raw_keys)`` per node. ``tags`` (None: all "node") give
        # the class of nodes without a class attribute; ``columns`` are the rows' columns and ``links``
        # (roots, child_lists, ends) the structure and ``bounds`` the parsed bounds, when the reader has them.
        self.attrs = attrs
        self.parents = parents
        self.rows = rows
        self._raw: Sequence[Any] = raw
        self._raw_keys = raw_keys
        self._nodes: list[UINode] | None = None
        if links is None:
            links = _links(parents)
        self.roots, self.child_lists, self.ends = links
        if columns is None:
            classes = [r[F_CLASS] for r in rows]
            editable_col: list[str] | tuple[str, ...] = [r[F_EDITABLE] for r in rows]
            bounds_col: list[str] | tuple[str, ...] = [r[F_BOUNDS] for r in rows]
        else:
            classes, editable_col, bounds_col = columns[F_CLASS], columns[F_EDITABLE], columns[F_BOUNDS]
        if tags is not None:
            classes = [c or ("" if t == "node" else t) for c, t in zip(classes, tags)]
        self.classes = classes
        by_class = {c: _EDITABLE_CLASS_RE.search(c) is not None for c in set(classes)}
        if any(editable_col):
            self.editable = [by_class[c] or e in _TRUE for c, e in zip(classes, editable_col)]
        else:
            self.editable = list(map(by_class.__getitem__, classes))
        self.bounds = _parse_all_bounds(bounds_col) if bounds is None else bounds
        self.rotation = _int_or_none(attrs.get("rotation")) or 0
        w = h = 0
        for i in self.roots:
            b = self.bounds[i]
            if b is not None and b[2] > b[0] and b[3] > b[1]:
                w = max(w, b[2])
                h = max(h, b[3])
        if not (w > 0 and h > 0):  # no top-level bounds: Appium's <hierarchy width= height=> may say
            w, h = _int_or_none(attrs.get("width")) or 0, _int_or_none(attrs.get("height")) or 0
        self.screen_size: tuple[int, int] | None = (w, h) if w > 0 and h > 0 else None

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[UINode]:
        return iter(self.nodes)

    def __getitem__(self, index: int) -> UINode:
        return self.nodes[index]

    def __repr__(self) -> str:
        return f"UITree(nodes={len(self.rows)}, roots={len(self.roots)}, screen_size={self.screen_size})"

    @property
    def nodes(self) -> list[UINode]:
        """All nodes as `UINode` objects, in document pre-order (built on first use)."""
        if self._nodes is None:
            self._nodes = self._build_nodes()
        return self._nodes

    def children(self, node: UINode) -> list[UINode]:
        """The node's direct children, in dump order."""
        nodes = self.nodes
        return [nodes[i] for i in node.children]

    def parent(self, node: UINode) -> UINode | None:
        """The node's parent, or None for a top-level node."""
        return None if node.parent is None else self.nodes[node.parent]

    def ancestors(self, node: UINode) -> Iterator[UINode]:
        """The node's ancestors, nearest first."""
        i = node.parent
        while i is not None:
            n = self.nodes[i]
            yield n
            i = n.parent

    def subtree(self, node: UINode) -> list[UINode]:
        """The node and all its descendants, in pre-order."""
        return self.nodes[node.index : node.end]

    def _build_nodes(self) -> list[UINode]:
        out: list[UINode] = []
        positions = [0] * len(self.rows)
        for kids in [self.roots, *self.child_lists]:
            for pos, c in enumerate(kids):
                positions[c] = pos
        keys, raw = self._raw_keys, self._raw
        k = len(keys) if keys is not None else 0
        for i, r in enumerate(self.rows):
            p = self.parents[i]
            parent_node = out[p] if p >= 0 else None
            path = (*parent_node.index_path, positions[i]) if parent_node is not None else (positions[i],)
            out.append(
                UINode(
                    index=i,
                    index_path=path,
                    parent=p if p >= 0 else None,
                    children=list(self.child_lists[i]),
                    end=self.ends[i],
                    depth=parent_node.depth + 1 if parent_node is not None else 0,
                    class_name=self.classes[i],
                    package=r[F_PKG],
                    resource_id=r[F_RID],
                    text=r[F_TEXT],
                    content_desc=r[F_DESC],
                    hint=r[F_HINT],
                    bounds=self.bounds[i],
                    checkable=r[F_CHECKABLE] in _TRUE,
                    checked=r[F_CHECKED] in _TRUE,
                    clickable=r[F_CLICKABLE] in _TRUE,
                    enabled=r[F_ENABLED] not in _FALSE,
                    focusable=r[F_FOCUSABLE] in _TRUE,
                    focused=r[F_FOCUSED] in _TRUE,
                    scrollable=r[F_SCROLLABLE] in _TRUE,
                    long_clickable=r[F_LONG_CLICKABLE] in _TRUE,
                    password=r[F_PASSWORD] in _TRUE,
                    selected=r[F_SELECTED] in _TRUE,
                    editable=self.editable[i],
                    naf=r[F_NAF] in _TRUE,
                    drawing_order=_int_or_none(r[F_DRAWING_ORDER]),
                    visible=r[F_VISIBLE] not in _FALSE and r[F_DISPLAYED] not in _FALSE,
                    attrs=(
                        dict(zip(raw[i][0:-1:2], raw[i][1::2]))
                        if keys is None
                        else dict(zip(keys, raw[i * k : i * k + k]))
                    ),  # fmt: skip
                )
            )
        return out


def parse_bounds(value: str | None) -> Bounds | None:
    """Read ``[x1,y1][x2,y2]`` into a tuple; None when absent or not in that shape."""
    if not value:
        return None
    m = _BOUNDS_RE.search(value)
    if m is None:
        return None
    return (int(m[1]), int(m[2]), int(m[3]), int(m[4]))


def _parse_all_bounds(raw: list[str] | tuple[str, ...]) -> list[Bounds | None]:
    """Bounds of every node; read in bulk when every value is in the usual compact ``[x1,y1][x2,y2]`` shape."""
    n = len(raw)
    joined = "|".join(raw)
    # Without its ASCII digits and '-', each value must read "[,][,]"; int() then checks each number.
    if n and joined.translate(_NO_DIGITS) == _BOUNDS_SHAPE * (n - 1) + "[,][,]":
        parts = joined.translate(_BRACKETS_TO_COMMAS).split(",")
        del parts[-1]
        try:
            nums = list(map(_SMALL_INTS.__getitem__, parts))
        except KeyError:
            try:
                nums = list(map(int, parts))
            except ValueError:  # a number such as "" or "1-2": read each value on its own
                nums = None
        if nums is not None:
            it = iter(nums)
            return list(zip(it, it, it, it))
    return [parse_bounds(v) for v in raw]


def _links(parents: list[int]) -> tuple[list[int], list[list[int]], list[int]]:
    """(roots, child lists, subtree ends) from the parent list of a pre-order node list."""
    n = len(parents)
    kids: list[list[int]] = [[] for _ in range(n + 1)]  # kids[-1] collects the roots (parent -1)
    for i, p in enumerate(parents):
        kids[p].append(i)
    roots = kids.pop()
    ends = list(range(1, n + 1))
    for i in range(n - 1, 0, -1):
        p = parents[i]
        if p >= 0 and ends[i] > ends[p]:
            ends[p] = ends[i]
    return roots, kids, ends


def _int_or_none(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _to_bytes(xml: str | bytes) -> tuple[bytes, bool]:
    """The dump as bytes, and whether they were re-encoded to UTF-8 here (then the declared encoding is moot)."""
    if isinstance(xml, str):
        return xml.encode("utf-8", "surrogatepass"), True
    if isinstance(xml, (bytes, bytearray, memoryview)):
        data = bytes(xml)
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with a byte-order mark
            return data.decode("utf-16").encode("utf-8", "surrogatepass"), True
        m = _ENCODING_RE.match(data)
        if m is not None and m.group(1).decode().lower() not in _EXPAT_ENCODINGS:
            # expat reads only UTF-8/16, ASCII and Latin-1; let Python decode the rest (GBK, Shift_JIS ...).
            name = m.group(1).decode()
            try:
                return data.decode(name).encode("utf-8", "surrogatepass"), True
            except LookupError:
                raise XMLParseError(f"unknown encoding {name!r} in the XML declaration") from None
            except UnicodeDecodeError as err:
                raise XMLParseError(
                    f"the bytes are not valid {name}: {err.reason} at byte {err.start}"
                ) from None
        return data, False
    raise TypeError(f"parse_ui expects str or bytes, got {type(xml).__name__}")


def _strip_junk(data: bytes) -> tuple[bytes, int]:
    """Cut the XML document out of surrounding text; returns it and how many lines were cut before it."""
    head = data[:64].lstrip()
    if head.startswith((b"<?xml", b"<hierarchy", b"<node")) and data.rstrip().endswith(b">"):
        start = 0
    else:
        m = _START_RE.search(data)
        if m is None:
            raise XMLParseError("no XML element found in the input" + _preview(data))
        start = m.start()
    tag_m = _ROOT_TAG_RE.match(data, start)
    end = len(data)
    if tag_m is not None:
        close = b"</" + tag_m.group(1) + b">"
        pos = data.rfind(close)
        if pos >= start:
            end = pos + len(close)
        else:
            last = data.rfind(b">")
            if last >= start:
                end = last + 1
    if start == 0 and end == len(data):
        return data, 0
    return data[start:end], data.count(b"\n", 0, start)


def _preview(data: bytes) -> str:
    text = data[:60].decode("utf-8", "replace").strip()
    return f": {text!r}" if text else " (empty input)"


class _Collector:
    """expat callbacks that record, per element, its tag, attribute list, the needed fields and parent."""

    def __init__(self) -> None:
        self.tags: list[str] = []
        self.raw: list[list[str]] = []
        self.rows: list[tuple[str, ...]] = []
        self.parents: list[int] = []
        self.hierarchy_attrs: dict[str, str] = {}

    def run(self, doc: bytes) -> None:
        p = expat.ParserCreate()
        p.ordered_attributes = True
        p.buffer_text = True
        tags, raw, rows, parents = self.tags, self.raw, self.rows, self.parents
        tags_append, raw_append, rows_append, parents_append = (
            tags.append,
            raw.append,
            rows.append,
            parents.append,
        )
        stack = [-1]
        stack_append, stack_pop = stack.append, stack.pop
        cache: list[Any] = [None, None]  # attribute-name list seen last, and its itemgetter

        def start(name: str, a: list[str]) -> None:
            keys = a[0::2]
            if keys != cache[0]:
                cache[0] = keys
                pos = {k: 2 * j + 1 for j, k in enumerate(keys)}
                cache[1] = itemgetter(*(pos.get(f, -1) for f in FIELDS))
            a.append("")  # what a missing attribute (position -1) reads as
            idx = len(tags)
            tags_append(name)
            raw_append(a)
            rows_append(cache[1](a))
            parents_append(stack[-1])
            stack_append(idx)

        def end(name: str) -> None:
            stack_pop()

        def first(name: str, a: list[str]) -> None:
            p.StartElementHandler = start
            if name == "hierarchy":
                self.hierarchy_attrs = dict(zip(a[0::2], a[1::2]))
                stack_append(-1)
            else:
                start(name, a)

        def refuse_entities(*_: object) -> None:
            raise XMLParseError("entity declarations are not allowed in a UI dump")

        p.StartElementHandler = first
        p.EndElementHandler = end
        p.EntityDeclHandler = refuse_entities
        p.Parse(doc, True)


def _parse_error(doc: bytes, err: expat.ExpatError, lines_cut: int) -> XMLParseError:
    """A precise error for a document expat refused: lxml's wording where it agrees, expat's otherwise."""
    from lxml import etree  # only needed on this path; keeps the import of this module light

    try:
        etree.fromstring(doc, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))
    except etree.XMLSyntaxError as lx:
        if lx.position and lx.position[0]:
            msg = re.sub(r",? line \d+, column \d+$", "", (lx.msg or str(lx)).strip())
            return XMLParseError(msg, lx.position[0] + lines_cut, lx.position[1])
    except Exception:  # noqa: S110 - lxml is only asked for a nicer message; expat's is the fallback
        pass
    return XMLParseError(expat.errors.messages[err.code], err.lineno + lines_cut, err.offset + 1)


class _NotSimple(Exception):
    """The fast reader met something it does not handle; the expat reader takes the dump instead."""


_FAST_DECL_RE = re.compile(r"[ \t\n]*(?:<\?xml[^>]*\?>)?[ \t\n]*")
_FAST_HEAD_RE = re.compile(
    r'<hierarchy((?:[ \t\n]+[A-Za-z_:][A-Za-z0-9_.:-]*="[^"<&\t\n\r\x00-\x1f\ud800-\udfff\ufffe\uffff]*")*)[ \t\n]*>'
)
_FAST_PAIR_RE = re.compile(r'([A-Za-z_:][A-Za-z0-9_.:-]*)="([^"]*)"')
# The pieces between the double quotes of a plain dump: the first node's opening up to its first attribute
# name, one attribute name, and what follows a node's last value (the end of its tag, closing tags, and
# the next node's opening up to its first attribute name, or nothing at the end).
_FAST_OPEN_RE = re.compile(r"[ \t\n]*<node ([A-Za-z_:][A-Za-z0-9_.:-]*)=")
_FAST_NAME_RE = re.compile(r" ([A-Za-z_:][A-Za-z0-9_.:-]*)=")
_FAST_STEP_RE = re.compile(r"[ \t\n]*(/?)>((?:[ \t\n]*</node>)*)[ \t\n]*(.*)", re.S)
# A character no value may hold raw on the fast path: '<', carriage return, or one XML forbids.
_FAST_BAD_BYTES = bytes((*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), ord("<"), ord("\r")))
_FAST_REF_RE = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));")
_FAST_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def _fast_unescape(value: str) -> str:
    """An attribute value as expat reports it: literal tabs and newlines become spaces, references expand."""
    if "\t" in value or "\n" in value:
        value = value.replace("\t", " ").replace("\n", " ")
    if "&" not in value:
        return value

    def expand(m: re.Match[str]) -> str:
        if m[1]:
            return _FAST_NAMED[m[1]]
        c = int(m[2]) if m[2] else int(m[3], 16)
        if not (c in (9, 10, 13) or 0x20 <= c <= 0xD7FF or 0xE000 <= c <= 0xFFFD or 0x10000 <= c <= 0x10FFFF):
            raise _NotSimple
        return chr(c)

    out, refs = _FAST_REF_RE.subn(expand, value)
    if refs != value.count("&"):  # a bare '&' or an entity XML does not predefine
        raise _NotSimple
    return out


def _fast_read(xml: str) -> UITree | None:
    """Read a plain uiautomator dump (``<hierarchy>`` of ``<node>`` tags that all list the same attributes
    in the same order, one space apart, double-quoted) by splitting it at its quotes; None for anything else.

    Values sit at the odd positions of the split, the tag structure at the even ones: attribute names are
    checked in bulk, and the few distinct pieces between one node's last value and the next node's first
    drive the parent stack. What it accepts, expat accepts too, and the tree is the same (tests compare
    the two readers).
    """
    m = _FAST_DECL_RE.match(xml)
    head = _FAST_HEAD_RE.match(xml, m.end()) if m is not None else None
    if head is None:
        return None
    end = xml.rfind("</hierarchy>")
    if end < head.end() or xml[end + 12 :].strip(" \t\n"):
        return None
    pairs = _FAST_PAIR_RE.findall(head[1])
    hierarchy_attrs = dict(pairs)
    if len(hierarchy_attrs) != len(pairs):
        return None
    flat = xml[head.end() : end].rstrip(" \t\n").split('"')
    first = _FAST_OPEN_RE.fullmatch(flat[0])
    if first is None or len(flat) < 3:
        return None
    keys = [first[1]]
    pos = 2
    while True:  # the first node's attribute names, up to the piece that ends its tag
        name = _FAST_NAME_RE.fullmatch(flat[pos])
        if name is None:
            break
        keys.append(name[1])
        pos += 2
        if pos >= len(flat):
            return None
    k = len(keys)
    if len(set(keys)) != k or (len(flat) - 1) % (2 * k):
        return None
    n = (len(flat) - 1) // (2 * k)
    inner = flat[2::2]  # k pieces per node: k - 1 attribute names, then the step to the next node
    steps = inner[k - 1 :: k]
    # Every node names the first node's attributes: with the steps blanked, the pieces joined must read as
    # the first node's names n times (the names hold no NUL, so equal joins mean equal pieces).
    inner[k - 1 :: k] = [""] * n
    block = "\0".join(inner[:k]) + "\0"
    if "\0".join(inner) != (block * n)[:-1]:
        return None
    # Each distinct step, once: -1 when the node opens (children follow), else how many open tags it closes
    # after the node ends (``<node ...></node>`` counts as a node that ends at once). Every step but the
    # last must lead into the next node exactly as the first node opens; the last must end the body.
    next_open = flat[0].lstrip(" \t\n")
    kinds: dict[str, int] = {}
    middle = set(steps[:-1])
    if steps[-1] in middle:
        return None
    for piece, then in (*((p, next_open) for p in middle), (steps[-1], "")):
        s = _FAST_STEP_RE.fullmatch(piece)
        if s is None or s[3] != then:
            return None
        closes = s[2].count("</node>")
        kinds[piece] = closes if s[1] else closes - 1
    values = flat[1::2]
    joined = '"'.join(values)
    try:
        data = joined.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    if (
        len(data.translate(None, _FAST_BAD_BYTES)) != len(data)
        or b"\xef\xbf\xbe" in data
        or b"\xef\xbf\xbf" in data
    ):
        return None  # '<', a carriage return, or a character XML forbids (U+FFFE, U+FFFF, C0 controls)
    if "&" in joined or "\t" in joined or "\n" in joined:
        try:
            for j in _special_values(joined):
                values[j] = _fast_unescape(values[j])
        except _NotSimple:
            return None
    # The tree's structure: parent, children and subtree end of each node, from the steps.
    parents: list[int] = []
    parents_append = parents.append
    kids: list[list[int]] = [[] for _ in range(n + 1)]  # kids[-1] collects the roots (parent -1)
    ends = list(range(1, n + 1))
    stack = [-1]
    for i, closes in enumerate(map(kinds.__getitem__, steps)):
        p = stack[-1]
        parents_append(p)
        kids[p].append(i)
        if closes:
            if closes < 0:
                stack.append(i)
                continue
            if closes >= len(stack):  # a closing tag with no open one
                return None
            for j in stack[-closes:]:
                ends[j] = i + 1
            del stack[-closes:]
    if len(stack) != 1:
        return None
    roots = kids.pop()
    keys_t = tuple(keys)
    empty = [""] * n
    at = {name: j for j, name in enumerate(keys_t)}
    columns = [values[at[f] :: k] if f in at else empty for f in FIELDS]
    rows = list(zip(*columns))
    return UITree(rows, parents, hierarchy_attrs, values, keys_t, columns=columns, links=(roots, kids, ends))


def _native_read(xml: str) -> UITree | None:
    """Read a plain dump with the C reader; None when it is not one (see ``_speedups.c``)."""
    res = _speedups.read_dump(xml, FIELDS)  # type: ignore[union-attr]
    if res is None:
        return None
    attrs, keys, raw, rows, parents, roots, kids, ends, bounds, undecided = res
    if undecided:  # bounds the C reader leaves to Python (non-ASCII, huge numbers)
        bounds = [parse_bounds(b) if isinstance(b, str) else b for b in bounds]
    return UITree(rows, parents, attrs, raw, keys, links=(roots, kids, ends), bounds=bounds)


def _special_values(joined: str) -> list[int]:
    """Positions of the values holding '&', a tab or a newline, given the values joined with '"'."""
    hits = []
    for ch in "&\t\n":
        p = joined.find(ch)
        while p >= 0:
            hits.append(p)
            p = joined.find(ch, p + 1)
    hits.sort()
    out: list[int] = []
    index = prev = 0
    for p in hits:
        index += joined.count('"', prev, p)
        prev = p
        if not out or out[-1] != index:
            out.append(index)
    return out


def _utf8_text(data: object) -> str | None:
    """Bytes that are UTF-8 by the XML rules (no byte-order mark, no other declared encoding) as text, for
    the fast readers; None for anything else, which the expat path reads (and judges) as bytes."""
    if not isinstance(data, bytes) or data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return None
    m = _ENCODING_RE.match(data)
    if m is not None and m.group(1).lower() not in (b"utf-8", b"utf8"):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def parse_ui(xml: str | bytes) -> UITree:
    """Parse a uiautomator (or Appium) hierarchy dump into a `UITree`.

    Raises `XMLParseError` (a ValueError) naming line and column when the XML is malformed, and
    TypeError for input that is neither str nor bytes.
    """
    text = xml if isinstance(xml, str) else _utf8_text(xml)
    if text is not None and "\r" not in text:
        tree = _native_read(text) if _speedups is not None else _fast_read(text)
        if tree is not None:
            return tree
    data, from_str = _to_bytes(xml)
    doc, lines_cut = _strip_junk(data)
    if from_str:
        m = _DECL_RE.match(doc)
        if m is not None:  # the text is UTF-8 now whatever the declaration says
            doc = doc[: m.start()] + b"\n" * doc.count(b"\n", 0, m.end()) + doc[m.end() :]
    col = _Collector()
    try:
        col.run(doc)
    except expat.ExpatError as err:
        # Real dumps sometimes carry control characters that XML 1.0 forbids; retry without them.
        cleaned = _BAD_CHARS_RE.sub(b"", doc)
        if cleaned == doc:
            raise _parse_error(doc, err, lines_cut) from None
        col = _Collector()
        try:
            col.run(cleaned)
        except expat.ExpatError:
            raise _parse_error(doc, err, lines_cut) from None
    return UITree(col.rows, col.parents, col.hierarchy_attrs, col.raw, tags=col.tags)
