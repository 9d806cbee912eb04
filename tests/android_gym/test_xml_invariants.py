"""The compression invariant, checked against a brute-force reference on generated and real trees.

Reference (written independently of the optimised code, straight from the rules): a node's visible
rect is its bounds intersected with every ancestor's valid bounds and the screen; a node is occluded
when some node drawn after it (later in pre-order with siblings sorted by drawing-order), not its
ancestor or descendant, whose subtree has a label, covers its visible rect and takes the touches
there: it is clickable or long-clickable, or it is the root of a later window (a later top-level
node). The surviving elements
are exactly the nodes with a non-empty visible rect, not occluded, that have a flag or a label.
In particular every clickable, editable, scrollable or checkable on-screen non-occluded node survives.
"""

from __future__ import annotations

import random
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from android_gym.xml import UITree, compress_xml, parse_ui, synthetic_dump

DATA = Path(__file__).parent / "data" / "xml"
FLAGS = ("clickable", "long-clickable", "scrollable", "checkable", "checked", "focusable", "focused", "selected",
         "password")  # fmt: skip


def valid(b) -> bool:
    return b is not None and b[2] > b[0] and b[3] > b[1]


def reference(
    tree: UITree, screen: tuple[int, int] | None, clip: bool = True
) -> dict[tuple[int, ...], tuple]:
    """index_path -> visible bounds of every node that must survive (``clip=False``: keep_offscreen)."""
    nodes = tree.nodes
    vis = {}
    for n in nodes:
        if not valid(n.bounds):
            continue
        x1, y1, x2, y2 = n.bounds
        if not clip:
            vis[n.index] = n.bounds
            continue
        for a in tree.ancestors(n):
            if valid(a.bounds):
                x1, y1, x2, y2 = (
                    max(x1, a.bounds[0]),
                    max(y1, a.bounds[1]),
                    min(x2, a.bounds[2]),
                    min(y2, a.bounds[3]),
                )
        if screen is not None:
            x1, y1, x2, y2 = max(x1, 0), max(y1, 0), min(x2, screen[0]), min(y2, screen[1])
        if x2 > x1 and y2 > y1:
            vis[n.index] = (x1, y1, x2, y2)

    # Windows (top-level nodes) stack by frame size, larger below; equal sizes keep dump order.
    tops = [n for n in nodes if n.parent is None]
    stack = sorted(
        tops,
        key=lambda n: -((n.bounds[2] - n.bounds[0]) * (n.bounds[3] - n.bounds[1]) if valid(n.bounds) else 0),
    )
    window_pos = {n.index: k for k, n in enumerate(stack)}

    def paint_key(n):
        key = []
        cur = n
        while cur is not None:
            if cur.parent is None:
                key.append((-1, window_pos[cur.index]))
            else:
                key.append((cur.drawing_order if cur.drawing_order is not None else -1, cur.index_path[-1]))
            cur = tree.parent(cur)
        return tuple(reversed(key))

    rank = {n.index: r for r, n in enumerate(sorted(nodes, key=paint_key))}
    labelled = {n.index for n in nodes if n.text.strip() or n.content_desc.strip() or n.hint.strip()}
    shows = {n.index for n in nodes if any(m.index in labelled for m in tree.subtree(n))}
    later_windows = {n.index for n in stack[1:]}
    blocking = {i for i in shows if nodes[i].clickable or nodes[i].long_clickable or i in later_windows}
    out = {}
    for e in nodes:
        v = vis.get(e.index)
        if v is None:
            continue
        keep = e.editable or e.index in labelled or any(getattr(e, f.replace("-", "_")) for f in FLAGS)
        if not keep:
            continue
        ancestors = {a.index for a in tree.ancestors(e)}
        occluded = False
        for o in nodes:
            ov = vis.get(o.index)
            if ov is None or o.index not in blocking or rank[o.index] <= rank[e.index]:
                continue
            if o.index in ancestors or e.index <= o.index < e.end:
                continue
            if ov[0] <= v[0] and ov[1] <= v[1] and ov[2] >= v[2] and ov[3] >= v[3]:
                occluded = True
                break
        if not occluded:
            out[e.index_path] = v
    return out


def check(xml: str | bytes, screen_size=None, keep_offscreen: bool = False) -> None:
    tree = parse_ui(xml)
    ui = compress_xml(tree, screen_size=screen_size, keep_offscreen=keep_offscreen)
    expected = reference(tree, screen_size or tree.screen_size, clip=not keep_offscreen)
    got = {e.index_path: e.bounds for e in ui.elements}
    assert got == expected
    # The invariant in the brief's words, stated directly on the input nodes.
    for n in tree.nodes:
        if n.index_path in expected and (n.clickable or n.editable or n.scrollable or n.checkable):
            assert n.index_path in got


# ---------------------------------------------------------------- generated trees

WORDS = ["", "", "", "OK", "Cancel", "  ", "Wi-Fi", "中文"]
CLASSES = ["android.widget.TextView", "android.widget.FrameLayout", "android.widget.EditText",
           "android.widget.Switch", "android.view.View"]  # fmt: skip


def random_node(rng: random.Random, depth: int, parent: tuple[int, int, int, int], budget: list[int]) -> str:
    """One random node (and subtree): bounds inside, over, across or outside the parent, or broken."""
    budget[0] -= 1
    px1, py1, px2, py2 = parent
    kind = rng.randrange(20)
    if kind == 0:
        bounds = None  # no bounds attribute at all
    elif kind == 1:
        x = rng.randint(px1, max(px1, px2))
        bounds = (x, py1, x, py2)  # zero width
    elif kind in (2, 3):
        bounds = (px1, py1, px2, py2)  # covers the parent: overlays, dialogs
    else:  # mostly inside the parent, sometimes spilling over it or off the screen
        x1, y1 = rng.randint(px1 - 20, px2), rng.randint(py1 - 20, py2)
        bounds = (
            x1,
            y1,
            rng.randint(x1, x1 + max(1, px2 - px1) + 10),
            rng.randint(y1, y1 + max(1, py2 - py1) + 10),
        )
    attrs = {"class": rng.choice(CLASSES), "text": rng.choice(WORDS), "content-desc": rng.choice(WORDS),
             "resource-id": rng.choice(["", "com.a:id/x"])}  # fmt: skip
    for f in FLAGS:
        if rng.randrange(6) == 0:
            attrs[f] = "true"
    if rng.randrange(7) == 0:
        attrs["hint"] = "Search"
    if rng.randrange(5) == 0:
        attrs["drawing-order"] = str(rng.randrange(5))
    if bounds is not None:
        attrs["bounds"] = "[{},{}][{},{}]".format(*bounds)
    head = "<node " + " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
    n_children = 0 if depth >= 4 or budget[0] <= 0 else rng.randrange(5)
    if not n_children:
        return head + "/>"
    inner = bounds if valid(bounds) else parent
    return (
        head
        + ">"
        + "".join(random_node(rng, depth + 1, inner, budget) for _ in range(n_children))
        + "</node>"
    )


@st.composite
def gen_dump(draw) -> str:
    """A random dump of up to 60 nodes on a 200x400 screen (hypothesis picks the seed and size)."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    budget = [draw(st.integers(1, 60))]
    roots = "".join(random_node(rng, 0, (0, 0, 200, 400), budget) for _ in range(draw(st.integers(1, 3))))
    return f'<hierarchy rotation="0">{roots}</hierarchy>'


@settings(max_examples=400, deadline=None)
@given(gen_dump())
def test_generated_trees_match_the_reference(xml):
    check(xml)
    check(xml, screen_size=(150, 300))


@settings(max_examples=200, deadline=None)
@given(gen_dump())
def test_keep_offscreen_matches_the_reference(xml):
    check(xml, keep_offscreen=True)


@settings(max_examples=100, deadline=None)
@given(gen_dump())
def test_without_labels_nothing_occludes_and_every_interactive_node_survives(xml):
    for word in ("OK", "Cancel", "Wi-Fi", "中文", "Search", "  "):
        xml = xml.replace(quoteattr(word), '""')
    tree = parse_ui(xml)
    got = {e.index_path: e.bounds for e in compress_xml(tree, keep_offscreen=True).elements}
    for n in tree.nodes:
        if (n.clickable or n.editable or n.scrollable or n.checkable) and valid(n.bounds):
            assert got.get(n.index_path) == n.bounds


# ---------------------------------------------------------------- fixtures and real dumps


def test_fixtures_match_the_reference():
    for path in sorted(DATA.iterdir()):
        check(path.read_bytes())
        check(path.read_bytes(), keep_offscreen=True)


def test_synthetic_dumps_match_the_reference():
    for kw in ({}, {"dialog": True}, {"keyboard": True}, {"extra_attrs": True, "keyboard": True}):
        check(synthetic_dump(150, seed=7, **kw))
        check(synthetic_dump(150, seed=7, **kw), keep_offscreen=True)


@pytest.mark.realdata
def test_realdata_matches_the_reference(realdata):
    paths = sorted((realdata / "android_xml").glob("*.xml"))
    assert paths
    for path in paths:
        check(path.read_bytes())
        check(path.read_bytes(), keep_offscreen=True)
