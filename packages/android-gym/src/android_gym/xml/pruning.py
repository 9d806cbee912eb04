"""Which nodes of a dump survive compression, and where they are visible.

Rules (AndroidLab's, with its weaknesses fixed):

* A node becomes an element when its visible bounds are non-empty and it is clickable, long-clickable,
  scrollable, checkable, checked, editable, focusable, focused, selected or a password field, or has
  text, content-desc or hint. Other nodes are dropped and their children move up to the nearest element.
* Visible bounds are the node's bounds clipped to its ancestors and the screen. A node whose visible
  bounds are empty is hidden with its whole subtree (off-screen, or outside its parent), as is a node
  the dump marks invisible (``visible-to-user="false"``, Appium's ``displayed="false"``); a node with
  missing or zero-size bounds is not an element but does not hide its children. With
  ``keep_offscreen`` nothing is clipped or hidden and every node with valid bounds counts, at its raw
  bounds.
* Occlusion: a node is drawn over everything drawn before it that is not its ancestor, in dump order,
  or ``drawing-order`` where the dump has it. An element is occluded, and dropped, only when a node
  drawn after it covers its visible bounds completely *and takes the touches there*:
  the root of a window above (a dialog, popup, the soft keyboard or a system bar in a multi-window
  dump; a window receives every touch inside its frame; windows are stacked by size, smaller on top,
  as dumps list them in no reliable order), or a clickable or long-clickable node (a
  modal scrim, a page or a card drawn over the old one). Either must show something (a node in its
  subtree has text, content-desc or hint): empty windows and bare decorations (a background image, a
  transparent touch catcher) hide nothing. Everything else is see-through: a later container that is
  not itself a touch target (a full-screen layout holding a feed's buttons, a page whose content lies
  elsewhere, a view that only carries an accessibility description) draws nothing but its children,
  and Android hands a tap it does not take to the views below, so what lies under it stays. Scrollable
  containers are not counted either: lists and pagers routinely extend under toolbars and tab bars
  that elevation draws above them, which a dump does not record. Partly covered elements stay.
* Invariant: every clickable, long-clickable, editable, scrollable or checkable node that is on screen
  and not occluded survives, with its visible bounds (`android_gym.xml.actionable_nodes`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress
from operator import itemgetter
from typing import NamedTuple

from android_gym.xml.tree import (
    F_CLICKABLE,
    F_DESC,
    F_DISPLAYED,
    F_DRAWING_ORDER,
    F_HINT,
    F_LONG_CLICKABLE,
    F_PASSWORD,
    F_RID,
    F_TEXT,
    F_VISIBLE,
    FALSE_VALUES,
    TRUE_VALUES,
    Bounds,
    UITree,
)

__all__ = ["Selection", "select_elements"]

_TRUE = TRUE_VALUES
_FALSE = FALSE_VALUES


class Selection(NamedTuple):
    """The surviving nodes of one dump, position by position (dump order)."""

    nodes: list[int]
    """Node indices into the tree."""
    bounds: list[Bounds]
    """Visible bounds of each."""
    parents: list[int]
    """Position (in this selection) of the nearest surviving ancestor; -1 at the top."""
    depths: list[int]
    """How many surviving ancestors each has."""
    ancestry: list[str]
    """The resource-id/class chain above each node, for ids."""
    paint_ranks: list[int] | None
    """Rank of each in drawing order, or None when drawing order is dump order."""


def select_elements(tree: UITree, screen: tuple[int, int] | None, keep_offscreen: bool = False) -> Selection:
    """Pick the nodes that survive compression, in dump order (rules in the module docstring)."""
    rows, bounds, kids, parents, ends = tree.rows, tree.bounds, tree.child_lists, tree.parents, tree.ends
    classes, editable = tree.classes, tree.editable
    n = len(rows)
    clip_on = not keep_offscreen
    # Labelled: text, content-desc or hint holds more than whitespace (one strip of the three joined).
    labelled = list(map(bool, map(str.strip, map("".join, map(_LABEL_OF, rows)))))
    quiet = list(map(_TRUE.isdisjoint, map(_FLAGS_OF, rows)))  # no action or state flag set
    # shows[i]: some node in i's subtree has a label.
    shows = labelled[:]
    for i in compress(range(n), labelled):
        p = parents[i]
        while p >= 0 and not shows[p]:
            shows[p] = True
            p = parents[p]
    # blocks[i]: node i takes the touches over its area and shows something, so it hides what it covers
    # completely (a later window's root, or a clickable / long-clickable node); hides[i]: some node in
    # i's subtree blocks (only such subtrees can occlude what was drawn before them).
    blocks = [False] * n
    for i in compress(range(n), shows):  # only flagged rows can take touches: most are neither
        if not quiet[i]:
            r = rows[i]
            blocks[i] = r[F_CLICKABLE] in _TRUE or r[F_LONG_CLICKABLE] in _TRUE
    windows = _window_order(tree)
    window = None
    if len(windows) > 1:
        window = set(windows[1:])
        for c in windows[1:]:
            blocks[c] = shows[c]
    hides = blocks[:]
    for i in compress(range(n), blocks):
        p = parents[i]
        while p >= 0 and not hides[p]:
            hides[p] = True
            p = parents[p]
    # span[i]: bounding box of the valid rects in i's subtree (where the subtree can draw at most). When
    # clipping, only nodes without valid bounds read it: skip the pass when there are none.
    valid: list[Bounds | None] = [
        b if b is not None and b[2] > b[0] and b[3] > b[1] else None for b in bounds
    ]
    span = valid
    if not clip_on or None in valid:
        span = valid[:]
        for i in range(n - 1, 0, -1):
            p = parents[i]
            si = span[i]
            if p >= 0 and si is not None:
                sp = span[p]
                if sp is None:
                    span[p] = si
                elif not (sp[0] <= si[0] and sp[1] <= si[1] and sp[2] >= si[2] and sp[3] >= si[3]):
                    span[p] = (min(sp[0], si[0]), min(sp[1], si[1]), max(sp[2], si[2]), max(sp[3], si[3]))
    invisible = (
        {i for i, r in enumerate(rows) if r[F_VISIBLE] in _FALSE or r[F_DISPLAYED] in _FALSE}
        if clip_on
        and not (_FALSE.isdisjoint(map(_VISIBLE_OF, rows)) and _FALSE.isdisjoint(map(_DISPLAYED_OF, rows)))
        else None
    )
    vis: list[Bounds | None] = [None] * n  # visible rect; None for nodes without valid bounds
    clip_in: list[Bounds | None] = [None] * n  # clip handed down to a node without valid bounds
    occ: list[list[Bounds]] = [_NO_RECTS] * n  # rects drawn over the node's area by later nodes
    anc: list[str] = [""] * n
    epar = [-1] * n
    edep = [0] * n
    skip = bytearray(n)
    reordered = [False]
    any_order = any(map(_ORDER_OF, rows))  # most dumps carry no drawing-order at all

    def area(c: int, v: Bounds | None, clip: Bounds | None) -> Bounds | None:
        """Where node c's subtree can draw: its visible rect when clipping, else its subtree's span."""
        if clip_on and v is not None:
            return v
        s = span[c]
        if s is None or clip is None:
            return s
        s = (max(s[0], clip[0]), max(s[1], clip[1]), min(s[2], clip[2]), min(s[3], clip[3]))
        return s if s[2] > s[0] and s[3] > s[1] else None

    def drawn_rects(c: int, v: Bounds | None, clip: Bounds | None) -> list[Bounds]:
        """Rects where node c's subtree takes the touches over what came before (see ``blocks``)."""
        if invisible and c in invisible:
            return []  # not shown, so it hides nothing
        if clip_on and window is not None and c in window and blocks[c] and v is not None:
            return [v]  # the window's frame (what it holds is clipped inside)
        if not clip_on:  # nothing is clipped: every blocking node's own rect, a window's frame among them
            return [valid[j] for j in range(c, ends[c]) if blocks[j] and valid[j] is not None]  # type: ignore[misc]
        out = []
        todo = [(c, clip)]
        while todo:
            j, cl = todo.pop()
            if invisible and j in invisible:
                continue
            b = valid[j]
            if b is not None and cl is not None:
                b = (max(b[0], cl[0]), max(b[1], cl[1]), min(b[2], cl[2]), min(b[3], cl[3]))
                if b[2] <= b[0] or b[3] <= b[1]:
                    continue  # clipped away with its subtree
            if b is not None and blocks[j]:
                out.append(b)  # what it holds lies inside it
                continue
            inner = b if b is not None else cl
            todo.extend((k, inner) for k in kids[j] if hides[k])
        return out

    def group(
        cs: list[int], clip: Bounds | None, above: list[Bounds], a: str, ep: int, ed: int, top: bool = False
    ) -> None:
        """Hand the children ``cs`` of one node (``top``: the windows, bottom first) their visible rects,
        clip, occluders and ancestry."""
        if not top and any_order and len(cs) > 1 and any(rows[c][F_DRAWING_ORDER] for c in cs):
            ordered = sorted(cs, key=lambda c: (_int_or(rows[c][F_DRAWING_ORDER], -1), c))
            if ordered != cs:
                reordered[0] = True
                cs = ordered
        boxes: list[Bounds | None] = []
        if clip is not None:
            cx1, cy1, cx2, cy2 = clip
        for c in cs:
            anc[c] = a
            epar[c] = ep
            edep[c] = ed
            if invisible and c in invisible:
                skip[c] = 1  # the dump says it is not shown
                boxes.append(None)
                continue
            b = valid[c]
            if b is None:
                clip_in[c] = clip
                boxes.append(area(c, None, clip))
                continue
            if clip is not None:
                x1, y1, x2, y2 = b
                if x1 < cx1 or y1 < cy1 or x2 > cx2 or y2 > cy2:  # the rect sticks out: clip it
                    if x1 < cx1:
                        x1 = cx1
                    if y1 < cy1:
                        y1 = cy1
                    if x2 > cx2:
                        x2 = cx2
                    if y2 > cy2:
                        y2 = cy2
                    if x2 <= x1 or y2 <= y1:
                        skip[c] = 1
                        boxes.append(None)
                        continue
                    b = (x1, y1, x2, y2)
            vis[c] = b
            boxes.append(b if clip_on else span[c])
        if len(cs) == 1:
            box = boxes[0]
            if above and box is not None:
                x1, y1, x2, y2 = box
                occ[cs[0]] = [o for o in above if o[0] < x2 and o[2] > x1 and o[1] < y2 and o[3] > y1]
            return
        extra = _later_overlaps(cs, boxes, hides, lambda c: drawn_rects(c, vis[c], clip))
        for i, c in enumerate(cs):
            box = boxes[i]
            if box is None:  # hidden, or nothing inside can draw
                continue
            more = extra[i]
            cand = above + more if more else above
            if cand:
                x1, y1, x2, y2 = box
                occ[c] = [o for o in cand if o[0] < x2 and o[2] > x1 and o[1] < y2 and o[3] > y1]

    root_clip: Bounds | None = (0, 0, screen[0], screen[1]) if (screen is not None and clip_on) else None
    if windows != tree.roots:
        reordered[0] = True
    group(windows, root_clip, _NO_RECTS, "", -1, 0, top=True)
    picked: list[int] = []
    i = 0
    while i < n:
        if skip[i]:
            i = ends[i]
            continue
        cs = kids[i]
        r = vis[i]
        if r is None:  # no valid bounds: draws nothing, children get the clip and occluders above it
            if cs:
                group(cs, clip_in[i], occ[i], f"{anc[i]}/{rows[i][F_RID] or classes[i]}", epar[i], edep[i])
            i += 1
            continue
        above = occ[i]
        if above:
            x1, y1, x2, y2 = r
            hidden = False
            for o in above:
                if o[0] <= x1 and o[1] <= y1 and o[2] >= x2 and o[3] >= y2:
                    hidden = True
                    break
            if hidden:
                if clip_on:  # descendants are clipped to this node, so they are covered too
                    i = ends[i]
                    continue
                if cs:
                    group(cs, None, above, f"{anc[i]}/{rows[i][F_RID] or classes[i]}", epar[i], edep[i])
                i += 1
                continue
        if not quiet[i] or labelled[i] or editable[i]:
            picked.append(i)
            ep, ed = len(picked) - 1, edep[i] + 1
        else:
            ep, ed = epar[i], edep[i]
        if cs:
            group(cs, r if clip_on else None, above, f"{anc[i]}/{rows[i][F_RID] or classes[i]}", ep, ed)
        i += 1
    ranks = _paint_ranks(tree, picked, windows) if reordered[0] else None
    at = [vis, epar, edep, anc]
    picked_vis, picked_par, picked_dep, picked_anc = (list(map(col.__getitem__, picked)) for col in at)
    return Selection(picked, picked_vis, picked_par, picked_dep, picked_anc, ranks)


_NO_RECTS: list[Bounds] = []
_FLAGS_OF = itemgetter(slice(F_CLICKABLE, F_PASSWORD + 1))
_LABEL_OF = itemgetter(F_TEXT, F_DESC, F_HINT)
_VISIBLE_OF = itemgetter(F_VISIBLE)
_DISPLAYED_OF = itemgetter(F_DISPLAYED)
_ORDER_OF = itemgetter(F_DRAWING_ORDER)


def _later_overlaps(
    cs: list[int],
    boxes: list[Bounds | None],
    hides: list[bool],
    drawn: Callable[[int], list[Bounds]],
) -> list[list[Bounds] | None]:
    """For siblings ``cs`` in drawing order with drawing areas ``boxes``: the rects where later siblings
    take the touches over each one (None where there are none); ``hides`` says which subtrees can."""
    k = len(cs)
    extra: list[list[Bounds] | None] = [None] * k
    if k == 2:  # the usual case, directly: the first gets the second's rects when they overlap
        a, b = boxes
        if a is not None and b is not None and hides[cs[1]]:
            if b[0] < a[2] and b[2] > a[0] and b[1] < a[3] and b[3] > a[1]:
                rects = drawn(cs[1])
                if rects:
                    extra[0] = list(rects)
        return extra
    # Rows of a list (each below the one before) or the parts of a row (each right of the one before)
    # never overlap: one pass tells, and most groups are one or the other.
    prev = None
    down = across = True
    for b in boxes:
        if b is not None:
            if prev is not None:
                if b[1] < prev[3]:
                    down = False
                if b[0] < prev[2]:
                    across = False
                if not (down or across):
                    break
            prev = b
    else:
        return extra
    live = [j for j in range(k) if boxes[j] is not None]
    # Sweep top to bottom: only overlapping pairs matter, and the rows of a list never overlap.
    live.sort(key=lambda j: boxes[j][1])  # type: ignore[index]
    cache: dict[int, list[Bounds]] = {}
    for pos, ia in enumerate(live):
        ax1, _, ax2, ay2 = boxes[ia]  # type: ignore[misc]
        for ib in live[pos + 1 :]:
            v = boxes[ib]
            if v[1] >= ay2:  # type: ignore[index]
                break
            if v[0] < ax2 and v[2] > ax1:  # type: ignore[index]
                lo, hi = (ia, ib) if ia < ib else (ib, ia)
                if hides[cs[hi]]:
                    rects = cache.get(hi)
                    if rects is None:
                        rects = cache[hi] = drawn(cs[hi])
                    if rects:
                        if extra[lo] is None:
                            extra[lo] = list(rects)
                        else:
                            extra[lo].extend(rects)  # type: ignore[union-attr]
    return extra


def _int_or(value: str, default: int) -> int:
    try:
        return int(value)
    except ValueError:
        return default


def _window_order(tree: UITree) -> list[int]:
    """The top-level nodes (windows) from the bottom one up.

    Dumps list windows in no reliable order (uiautomator2 may put the status bar before the app under
    it), but a window lies on top of a larger one: bars, the keyboard, dialogs and popups over the
    full-screen app. So larger frames go below; windows of the same size (or without bounds, size 0)
    keep their dump order, later on top. ``drawing-order`` means nothing between windows.
    """
    roots = tree.roots
    if len(roots) < 2:
        return roots
    bounds = tree.bounds

    def area(c: int) -> int:
        b = bounds[c]
        return (b[2] - b[0]) * (b[3] - b[1]) if b is not None and b[2] > b[0] and b[3] > b[1] else 0

    return sorted(roots, key=lambda c: -area(c))


def _paint_ranks(tree: UITree, picked: list[int], windows: list[int]) -> list[int]:
    """Each picked node's rank in drawing order (windows in `_window_order`; siblings below them sorted by
    drawing-order, then dump order)."""
    rows, parents = tree.rows, tree.parents
    pos_in_parent: dict[int, int] = {}
    for kids in tree.child_lists:
        for pos, c in enumerate(kids):
            pos_in_parent[c] = pos
    for pos, c in enumerate(windows):
        pos_in_parent[c] = pos

    def key(i: int) -> tuple[tuple[int, int], ...]:
        path = []
        while i >= 0:
            p = parents[i]
            path.append((_int_or(rows[i][F_DRAWING_ORDER], -1) if p >= 0 else -1, pos_in_parent[i]))
            i = p
        return tuple(reversed(path))

    order = sorted(range(len(picked)), key=lambda p: key(picked[p]))
    ranks = [0] * len(picked)
    for rank, p in enumerate(order):
        ranks[p] = rank
    return ranks
