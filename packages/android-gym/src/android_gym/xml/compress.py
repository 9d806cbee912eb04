"""Compressing a hierarchy dump into the short element list a model reads (`compress_xml` -> `CompressedUI`).

The steps live in their own modules: `android_gym.xml.tree` parses, `android_gym.xml.pruning` decides
which nodes survive (AndroidLab's rules plus clipping, off-screen and occlusion handling),
`android_gym.xml.identity` gives stable ids and `android_gym.xml.render` writes the text. The
`UIElement` objects are built on first use, so a caller that only needs the text pays nothing for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from android_gym.xml.elements import UIElement, UnknownElementError
from android_gym.xml.identity import assign_ids
from android_gym.xml.pruning import Selection, select_elements
from android_gym.xml.render import STYLES, render
from android_gym.xml.tree import (
    F_CHECKABLE,
    F_CHECKED,
    F_CLICKABLE,
    F_DESC,
    F_ENABLED,
    F_FOCUSABLE,
    F_FOCUSED,
    F_HINT,
    F_LONG_CLICKABLE,
    F_PASSWORD,
    F_PKG,
    F_RID,
    F_SCROLLABLE,
    F_SELECTED,
    F_TEXT,
    FALSE_VALUES,
    TRUE_VALUES,
    UITree,
    parse_ui,
)

__all__ = ["STYLES", "CompressedUI", "compress_xml"]

Style = Literal["androidlab", "mobilerl", "json"]


class CompressedUI:
    """A compressed screen: ``text`` for the model, ``elements`` (dump order) for code, and lookups.

    ``screen_size`` is the size used for off-screen clipping (None when unknown); ``tree`` is the
    parsed dump it came from.
    """

    __slots__ = ("text", "style", "screen_size", "tree", "_sel", "_ids", "_pos", "_elements")

    def __init__(self, text: str, style: str, screen_size: tuple[int, int] | None, tree: UITree,
                 selection: Selection, ids: list[str]):  # fmt: skip
        self.text = text
        self.style = style
        self.screen_size = screen_size
        self.tree = tree
        self._sel = selection
        self._ids = ids
        self._pos = dict(zip(ids, range(len(ids))))
        self._elements: list[UIElement] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[UIElement]:
        return iter(self.elements)

    def __contains__(self, element_id: object) -> bool:
        return element_id in self._pos

    def __repr__(self) -> str:
        return f"CompressedUI(style={self.style!r}, elements={len(self._ids)}, chars={len(self.text)})"

    @property
    def ids(self) -> list[str]:
        """All element ids, in dump order."""
        return list(self._ids)

    @property
    def node_indices(self) -> list[int]:
        """For each element (dump order), the index of its node in ``tree.nodes``."""
        return list(self._sel.nodes)

    @property
    def elements(self) -> list[UIElement]:
        """The surviving elements in dump order (parents before children)."""
        if self._elements is None:
            self._elements = _make_elements(self.tree, self._sel, self._ids)
        return self._elements

    def element(self, element_id: str) -> UIElement:
        """The element with this id (surrounding brackets and spaces are ignored: ``"[n3f2a]"`` works).

        Raises `UnknownElementError` (a KeyError) naming the id and listing the ones on screen.
        """
        key = element_id.strip().strip("[]").strip() if isinstance(element_id, str) else element_id
        pos = self._pos.get(key) if isinstance(key, str) else None
        if pos is None:
            raise UnknownElementError(str(element_id), self._ids)
        return self.elements[pos]

    def element_at(self, x: float, y: float, *, actionable: bool = False) -> UIElement | None:
        """The top-most element whose visible bounds contain the point (the one drawn last), or None.

        With ``actionable=True`` only elements that can be clicked, long-clicked, scrolled, checked or
        typed into count.
        """
        sel = self._sel
        order = range(len(sel.nodes) - 1, -1, -1)
        if sel.paint_ranks is not None:
            ranks = sel.paint_ranks
            order = sorted(order, key=lambda p: ranks[p], reverse=True)  # type: ignore[assignment]
        for p in order:
            x1, y1, x2, y2 = sel.bounds[p]
            if x1 <= x < x2 and y1 <= y < y2:
                e = self.elements[p]
                if actionable and not (
                    e.clickable or e.long_clickable or e.scrollable or e.checkable or e.editable
                ):
                    continue
                return e
        return None

    def find(
        self,
        text: str | None = None,
        *,
        content_desc: str | None = None,
        label: str | None = None,
        resource_id: str | None = None,
        class_name: str | None = None,
        hint: str | None = None,
        package: str | None = None,
        exact: bool = False,
        case_sensitive: bool = False,
        clickable: bool | None = None,
        long_clickable: bool | None = None,
        scrollable: bool | None = None,
        checkable: bool | None = None,
        checked: bool | None = None,
        editable: bool | None = None,
        focusable: bool | None = None,
        focused: bool | None = None,
        selected: bool | None = None,
        enabled: bool | None = None,
        password: bool | None = None,
    ) -> list[UIElement]:
        """Elements matching every given criterion, in dump order.

        String criteria match as substrings ignoring case, unless ``exact`` / ``case_sensitive``.
        ``label`` matches text or content-desc. ``resource_id`` matches the full id
        (``com.app:id/send``) or its short form (``send``); ``class_name`` the full or the short class
        (``Switch``). Flag criteria (``clickable=True`` ...) compare exactly; None means "any".
        """

        def norm(s: str) -> str:
            return s if case_sensitive else s.casefold()

        def match(value: str, wanted: str) -> bool:
            return norm(value) == wanted if exact else wanted in norm(value)

        strings: list[tuple[str, str]] = []
        for name, wanted in (
            ("text", text),
            ("content_desc", content_desc),
            ("label", label),
            ("resource_id", resource_id),
            ("class_name", class_name),
            ("hint", hint),
            ("package", package),
        ):
            if wanted is not None:
                if not isinstance(wanted, str):
                    raise TypeError(f"find({name}=...) expects a string, got {type(wanted).__name__}")
                strings.append((name, norm(wanted)))
        flags = [
            (name, bool(wanted))
            for name, wanted in (
                ("clickable", clickable),
                ("long_clickable", long_clickable),
                ("scrollable", scrollable),
                ("checkable", checkable),
                ("checked", checked),
                ("editable", editable),
                ("focusable", focusable),
                ("focused", focused),
                ("selected", selected),
                ("enabled", enabled),
                ("password", password),
            )
            if wanted is not None
        ]
        out = []
        for e in self.elements:
            if any(getattr(e, name) != wanted for name, wanted in flags):
                continue
            ok = True
            for name, wanted in strings:
                if name == "label":
                    ok = match(e.text, wanted) or match(e.content_desc, wanted)
                elif name == "resource_id":
                    ok = match(e.resource_id, wanted) or match(e.short_resource_id, wanted)
                elif name == "class_name":
                    ok = match(e.class_name, wanted) or match(e.short_class, wanted)
                else:
                    ok = match(getattr(e, name), wanted)
                if not ok:
                    break
            if ok:
                out.append(e)
        return out


def compress_xml(
    xml: str | bytes | UITree,
    style: Style | str = "androidlab",
    keep_offscreen: bool = False,
    screen_size: tuple[int, int] | None = None,
) -> CompressedUI:
    """Compress a hierarchy dump (XML text or a `UITree` from `parse_ui`) into a `CompressedUI`.

    ``style`` picks the text layout (see `android_gym.xml.render`): ``"androidlab"`` indented
    ``[id] Class ;actions ; states ;extra;label: bounds: [x1,y1][x2,y2]`` lines, ``"mobilerl"`` flat
    ``[id] Class; actions; label; [x1,y1] [x2,y2]`` lines, or ``"json"``. Elements off the screen
    (size from the root bounds, or ``screen_size=(width, height)``) are dropped unless
    ``keep_offscreen``. Raises `XMLParseError` for malformed XML and ValueError for an unknown style or
    a bad screen size.
    """
    if style not in STYLES:
        raise ValueError(f"unknown compression style {style!r}; expected one of {', '.join(STYLES)}")
    if screen_size is not None:
        try:
            w, h = screen_size
        except (TypeError, ValueError):
            raise ValueError(f"screen_size must be (width, height), got {screen_size!r}") from None
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (w, h)):
            raise ValueError(f"screen_size must be two positive ints (width, height), got {screen_size!r}")
        screen_size = (w, h)
    tree = xml if isinstance(xml, UITree) else parse_ui(xml)
    screen = screen_size or tree.screen_size
    sel = select_elements(tree, screen, keep_offscreen)
    ids = assign_ids(tree, sel.nodes, sel.ancestry)
    return CompressedUI(render(style, tree, sel, ids), style, screen, tree, sel, ids)


def _make_elements(tree: UITree, sel: Selection, ids: list[str]) -> list[UIElement]:
    """`UIElement`s for a selection (frozen dataclasses filled directly: this runs for every screen)."""
    rows, classes, editable = tree.rows, tree.classes, tree.editable
    paths = _index_paths(tree, sel.nodes)
    t, f = TRUE_VALUES, FALSE_VALUES
    new, setattr_ = object.__new__, object.__setattr__
    out = []
    for p, i, b, parent, depth, path in zip(
        range(len(ids)), sel.nodes, sel.bounds, sel.parents, sel.depths, paths
    ):
        r = rows[i]
        e = new(UIElement)
        # A dict display with constant keys builds fastest; the keys are UIElement's fields, in order.
        setattr_(e, "__dict__", {
            "id": ids[p], "bounds": b, "text": r[F_TEXT], "content_desc": r[F_DESC], "hint": r[F_HINT],
            "class_name": classes[i], "resource_id": r[F_RID], "package": r[F_PKG],
            "clickable": r[F_CLICKABLE] in t, "long_clickable": r[F_LONG_CLICKABLE] in t,
            "scrollable": r[F_SCROLLABLE] in t, "checkable": r[F_CHECKABLE] in t, "checked": r[F_CHECKED] in t,
            "editable": editable[i], "focusable": r[F_FOCUSABLE] in t, "focused": r[F_FOCUSED] in t,
            "selected": r[F_SELECTED] in t, "enabled": r[F_ENABLED] not in f, "password": r[F_PASSWORD] in t,
            "parent_id": ids[parent] if parent >= 0 else None, "depth": depth, "index_path": path,
        })  # fmt: skip
        out.append(e)
    return out


def _index_paths(tree: UITree, nodes: list[int]) -> list[tuple[int, ...]]:
    """Child-position paths from the top for the given nodes (dump order)."""
    if not nodes:
        return []
    parents = tree.parents
    pos = [0] * len(parents)  # position among siblings; an only child is at 0
    for kids in (tree.roots, *tree.child_lists):
        if len(kids) > 1:
            for k, c in enumerate(kids):
                pos[c] = k
    # Pre-order puts every parent before its children: one pass builds each path from its parent's.
    paths: list[tuple[int, ...]] = []
    last = max(nodes) + 1
    for p, k in zip(parents[:last], pos[:last]):
        paths.append((*paths[p], k) if p >= 0 else (k,))
    return list(map(paths.__getitem__, nodes))
