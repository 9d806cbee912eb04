"""From laid-out windows to what uiautomator shows: visible nodes with clipped bounds, and the XML dump.

A window is a root :class:`~android_gym.sim.view.View` with a package and a clip rectangle. Nodes
outside their parent's (clipped) bounds are dropped, the rest are reported with bounds clipped to
the parent, as Android reports visible bounds. The XML matches ``uiautomator dump`` on Android 13:
one line, attributes in the dumper's order, ``&#10;`` for newlines. ``hint`` (a text field's hint,
"" on other nodes) comes right after ``bounds``, where AndroidX UiAutomator's dumper writes it
(API 26+); an empty field also reports its hint as ``text``, as Android's accessibility tree does.
"""

from __future__ import annotations

from dataclasses import dataclass

from android_gym.sim.view import Bounds, View

XML_HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
XML_FOOTER = "</hierarchy>"

_ESCAPE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;",
                         "\n": "&#10;", "\r": "&#13;", "\t": "&#9;",
                         **{chr(c): "" for c in range(32) if c not in (9, 10, 13)}})
_BOOL = ("false", "true")


@dataclass(slots=True)
class Window:
    """A top-level window: its root view, owning package and the screen rectangle it may draw in."""

    root: View
    package: str
    clip: Bounds
    kind: str = "app"


@dataclass(slots=True)
class Entry:
    """One visible node: the view, its clipped screen bounds, nesting depth, package, sibling index and window kind.

    ``hidden`` marks a layout-only view: drawn and hit-tested, but left out of the dump (its children carry its
    depth and are listed as its parent's)."""

    view: View
    bounds: Bounds
    depth: int
    package: str
    index: int
    window: str
    text: str
    resource_id: str
    hidden: bool = False


def _collect(view: View, package: str, clip: Bounds, depth: int, index: int, window: str,
             out: list[Entry]) -> int:
    """Append ``view``'s visible subtree; returns how many sibling slots it takes in the dump (0 when clipped
    away, its shown children's count for a layout-only view, else 1)."""
    x1, y1, x2, y2 = view.bounds
    cx1, cy1, cx2, cy2 = clip
    if x1 < cx1:
        x1 = cx1
    if y1 < cy1:
        y1 = cy1
    if x2 > cx2:
        x2 = cx2
    if y2 > cy2:
        y2 = cy2
    if x2 <= x1 or y2 <= y1:
        return 0
    text = view.text
    if view.on_text is not None or view.cls == "android.widget.EditText":
        if not text:
            text = view.hint
        elif view.password:
            text = "\u2022" * len(text)
    rid = view.resource_id
    if rid and ":" not in rid:
        rid = f"{package}:id/{rid}"
    box = (x1, y1, x2, y2)
    hidden = view.layout_only
    out.append(Entry(view, box, depth, package, index, window, text, rid, hidden))
    i = index if hidden else 0
    child_depth = depth if hidden else depth + 1
    children = view.children
    if children and any(c.dump_rank for c in children):
        children = sorted(children, key=_rank)
    at = len(out)
    for child in children:
        i += _collect(child, package, box, child_depth, i, window, out)
    if children and len(out) == at and not hidden and not (text or view.content_desc or view.scrollable):
        # a container (a list row's edge) whose content is all scrolled out of view: on the emulator its children
        # are still in the tree, so it is no leaf that AndroidWorld lists; the sim leaves out the sliver
        out.pop()
        return 0
    return i - index if hidden else 1


def _rank(view: View) -> int:
    return view.dump_rank


def collect(windows: list[Window]) -> list[Entry]:
    """Visible nodes of ``windows`` in dump (pre-)order; later entries are drawn over earlier ones."""
    out: list[Entry] = []
    for w in windows:
        _collect(w.root, w.package, w.clip, 0, 0, w.kind, out)
    return out


def to_xml(entries: list[Entry]) -> str:
    """The uiautomator hierarchy XML for ``entries`` (as produced by :func:`collect`)."""
    return XML_HEADER + xml_nodes(entries) + XML_FOOTER


def xml_nodes(entries: list[Entry]) -> str:
    """The ``<node>`` elements of ``entries``, all closed, without the hierarchy header and footer.

    For lists that start at depth 0 (whole windows), the nodes of a concatenation are the
    concatenation of the nodes, so the XML of a window that did not change can be reused.
    """
    if any(e.hidden for e in entries):
        entries = [e for e in entries if not e.hidden]
    parts: list[str] = []
    append = parts.append
    esc = _ESCAPE
    flag_text = _flag_text
    escaped = _escaped
    if len(escaped) > 20_000:  # typed text makes new strings; stay bounded
        escaped.clear()
    n = len(entries)
    open_depths: list[int] = []
    for k, e in enumerate(entries):
        v = e.view
        d = e.depth
        while open_depths and open_depths[-1] >= d:
            open_depths.pop()
            append("</node>")
        x1, y1, x2, y2 = e.bounds
        text, rid, desc, hint = e.text, e.resource_id, v.content_desc, v.hint
        # Labels repeat frame after frame: escape each distinct string once.
        if text:
            t = escaped.get(text)
            if t is None:
                t = escaped[text] = text.translate(esc)
            text = t
        if rid:
            t = escaped.get(rid)
            if t is None:
                t = escaped[rid] = rid.translate(esc)
            rid = t
        if desc:
            t = escaped.get(desc)
            if t is None:
                t = escaped[desc] = desc.translate(esc)
            desc = t
        if hint:
            t = escaped.get(hint)
            if t is None:
                t = escaped[hint] = hint.translate(esc)
            hint = t
        # The ten flags read as one cached run of attributes (screens use a handful of combinations).
        key = (v.checkable, v.checked, v.clickable, v.enabled, v.focusable, v.focused, v.scrollable,
               v.long_clickable, v.password, v.selected)
        flags = flag_text.get(key)
        if flags is None:
            flags = flag_text[key] = _flags_attrs(key)
        append(
            f'<node index="{e.index}" text="{text}" resource-id="{rid}" class="{v.cls}" package="{e.package}" '
            f'content-desc="{desc}" {flags} bounds="[{x1},{y1}][{x2},{y2}]" hint="{hint}"'
        )
        if k + 1 < n and entries[k + 1].depth > d:
            append(">")
            open_depths.append(d)
        else:
            append(" />")
    append("</node>" * len(open_depths))
    return "".join(parts)


_FLAG_NAMES = ("checkable", "checked", "clickable", "enabled", "focusable", "focused", "scrollable",
               "long-clickable", "password", "selected")
_flag_text: dict[tuple[bool, ...], str] = {}
_escaped: dict[str, str] = {}


def _flags_attrs(values: tuple[bool, ...]) -> str:
    """The dumper's run of boolean attributes (``checkable="false" ... selected="false"``) for these values."""
    return " ".join(f'{name}="{_BOOL[value]}"' for name, value in zip(_FLAG_NAMES, values))
