"""Which nodes of a dump an agent can act on: the one definition tests and benchmarks count with.

A node is *actionable* when it is clickable, long-clickable, scrollable or checkable (by its flags) or
editable (an ``editable="true"`` flag or an editable class: EditText, AutoCompleteTextView, the search
box), and its bounds are valid (positive width and height) and intersect the screen. The bounds are the
dump's own, before any clipping to ancestors. Compression keeps every actionable node whose visible
part is not hidden (see `android_gym.xml.pruning`); this set is what that promise is checked against.
"""

from __future__ import annotations

from android_gym.xml.tree import (
    F_CHECKABLE,
    F_CLICKABLE,
    F_LONG_CLICKABLE,
    F_SCROLLABLE,
    TRUE_VALUES,
    UITree,
)

__all__ = ["actionable_nodes"]


def actionable_nodes(tree: UITree, screen_size: tuple[int, int] | None = None) -> list[int]:
    """Indices (into ``tree.nodes``, dump order) of the actionable nodes of ``tree``.

    ``screen_size`` (width, height) defaults to the tree's own (its root bounds); with neither, every
    node with valid bounds counts as on screen.
    """
    screen = screen_size or tree.screen_size
    w, h = screen if screen is not None else (1 << 62, 1 << 62)
    t = TRUE_VALUES
    out = []
    for i, (r, b, editable) in enumerate(zip(tree.rows, tree.bounds, tree.editable)):
        if not (
            editable
            or r[F_CLICKABLE] in t
            or r[F_LONG_CLICKABLE] in t
            or r[F_SCROLLABLE] in t
            or r[F_CHECKABLE] in t
        ):
            continue
        if b is None:
            continue
        x1, y1, x2, y2 = b
        if x2 > x1 and y2 > y1 and x1 < w and x2 > 0 and y1 < h and y2 > 0:
            out.append(i)
    return out
