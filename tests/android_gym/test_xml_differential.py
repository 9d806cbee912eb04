"""Our compression against AndroidLab's own (vendored, ``UIXMLTree().process``), actionable node by node.

For every dump (the real ones in ../shared/realdata and tests/android_gym/data/real_dumps, the simulated
phone's screens, and generated screens with overlays, tab bars, full-screen surfaces under controls,
dialogs, keyboards and tall screens) the actionable nodes (`android_gym.xml.actionable_nodes`) that each
compression keeps are compared. Every actionable node either one drops must be dropped by a named rule
of that compression, checked here on the dump itself (`our_reason`, `androidlab_reason`); a drop no rule
explains fails the test with the dump, the node and what was checked. Since every difference between the
two kept sets is such a drop, every difference is explained. The same check is the promise "every
on-screen actionable node survives unless it is hidden" on real dumps.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from android_gym.xml import UINode, UITree, actionable_nodes, compress_xml, parse_ui

REPO = Path(__file__).resolve().parents[2]
REAL_DUMPS = Path(__file__).parent / "data" / "real_dumps"
VENDOR = REPO.parent / "shared" / "vendor" / "android_lab"


def _bench():
    spec = importlib.util.spec_from_file_location(
        "xml_compress_bench", REPO / "tools" / "bench" / "xml_compress.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


BENCH = _bench()


@pytest.fixture(scope="module")
def androidlab() -> type:
    """AndroidLab's ``UIXMLTree`` class from ../shared/vendor/android_lab (skips when it is not there)."""
    if not VENDOR.is_dir():
        pytest.skip(f"vendored AndroidLab not found at {VENDOR} (check out shared/ beside the repository)")
    pytest.importorskip(
        "xmltodict", reason="AndroidLab's compression needs xmltodict (tools/requirements-dev.txt)"
    )
    return BENCH.load_androidlab(VENDOR)


# ---------------------------------------------------------------- geometry, straight from the dump


def _valid(b) -> bool:
    return b is not None and b[2] > b[0] and b[3] > b[1]


def _covers(o, b) -> bool:
    return o[0] <= b[0] and o[1] <= b[1] and o[2] >= b[2] and o[3] >= b[3]


def _meets(a, b) -> bool:
    return a[0] < b[2] and a[2] > b[0] and a[1] < b[3] and a[3] > b[1]


class Geometry:
    """Visible rects, drawing ranks and the occluders of one dump, computed the slow, obvious way."""

    def __init__(self, tree: UITree, screen: tuple[int, int] | None):
        self.tree = tree
        nodes = tree.nodes
        self.vis: dict[int, tuple[int, int, int, int]] = {}
        for n in nodes:
            if not _valid(n.bounds):
                continue
            x1, y1, x2, y2 = n.bounds
            for a in tree.ancestors(n):
                if _valid(a.bounds):
                    x1, y1 = max(x1, a.bounds[0]), max(y1, a.bounds[1])
                    x2, y2 = min(x2, a.bounds[2]), min(y2, a.bounds[3])
            if screen is not None:
                x1, y1, x2, y2 = max(x1, 0), max(y1, 0), min(x2, screen[0]), min(y2, screen[1])
            if x2 > x1 and y2 > y1:
                self.vis[n.index] = (x1, y1, x2, y2)

        # Windows (top-level nodes) stack by frame size, larger below; equal sizes keep dump order.
        tops = [n for n in nodes if n.parent is None]
        stack = sorted(tops, key=lambda n: -((n.bounds[2] - n.bounds[0]) * (n.bounds[3] - n.bounds[1])
                                             if _valid(n.bounds) else 0))  # fmt: skip
        window_pos = {n.index: k for k, n in enumerate(stack)}

        def paint_key(n: UINode):
            key = []
            cur: UINode | None = n
            while cur is not None:
                if cur.parent is None:
                    key.append((-1, window_pos[cur.index]))
                else:
                    key.append(
                        (cur.drawing_order if cur.drawing_order is not None else -1, cur.index_path[-1])
                    )
                cur = tree.parent(cur)
            return tuple(reversed(key))

        self.rank = {n.index: r for r, n in enumerate(sorted(nodes, key=paint_key))}
        labelled = {n.index for n in nodes if n.text.strip() or n.content_desc.strip() or n.hint.strip()}
        shows = {n.index for n in nodes if any(m.index in labelled for m in tree.subtree(n))}
        self.windows = {n.index for n in stack[1:] if n.index in shows}  # every window but the bottom one
        self.touch = {n.index for n in nodes if n.index in shows and (n.clickable or n.long_clickable)}

    def hidden_by_flag(self, n: UINode) -> UINode | None:
        """The node (itself or an ancestor) the dump marks as not shown, if any."""
        for m in (n, *self.tree.ancestors(n)):
            if m.visible is False:
                return m
        return None

    def occluder(self, n: UINode) -> tuple[UINode, str] | None:
        """A node drawn after ``n`` (not its ancestor or descendant) that covers its visible rect and takes
        the touches there, with the rule's name; None when there is none."""
        v = self.vis[n.index]
        ancestors = {a.index for a in self.tree.ancestors(n)}
        for o in self.tree.nodes:
            ov = self.vis.get(o.index)
            if ov is None or self.rank[o.index] <= self.rank[n.index] or o.index in ancestors:
                continue
            if self.hidden_by_flag(o) is not None:  # not shown, so it hides nothing
                continue
            if n.index <= o.index < n.end or not _covers(ov, v):
                continue
            if o.index in self.windows:
                return o, "occluded by a window above (a smaller one, or a later one of the same size)"
            if o.index in self.touch:
                return o, "occluded by a later clickable node that shows something"
        return None


def describe(n: UINode) -> str:
    return (f"#{n.index} {n.short_class} id={n.resource_id.rsplit('/', 1)[-1]!r} text={n.text[:30]!r} "
            f"desc={n.content_desc[:30]!r} bounds={n.bounds}")  # fmt: skip


def our_reason(geo: Geometry, n: UINode) -> str | None:
    """Why our compression drops actionable node ``n``, by its documented rules; None if none applies."""
    m = geo.hidden_by_flag(n)
    if m is not None:
        return f"marked not shown by the dump (visible-to-user/displayed false on {describe(m)})"
    if n.index not in geo.vis:
        return "outside an ancestor's bounds (its visible part is empty once clipped to its ancestors)"
    occ = geo.occluder(n)
    if occ is not None:
        return f"{occ[1]}: {describe(occ[0])}"
    return None


AL_FLAGS = (
    "checkable",
    "checked",
    "clickable",
    "focusable",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
)
AL_APP_RULES = ("com.autonavi.minimap", "com.tencent.mm", "com.sankuai.meituan")  # its SpecialCheck table


def androidlab_reason(tree: UITree, run, n: UINode) -> str | None:
    """Why AndroidLab's compression drops actionable node ``n``, by the rules its code applies (checked
    on the dump and on the tree after its first step, ``run.pruned_parent``); None if none applies."""
    nodes = tree.nodes
    b = n.bounds
    if tree.roots and nodes[tree.roots[0]].package in AL_APP_RULES:
        return "AndroidLab's app-specific rules (SpecialCheck) replace its overlap removal for this package"
    if n.index not in run.pruned_parent:  # dropped by the first step
        if b[0] < 0 or b[1] < 0:
            return "AndroidLab's bounds check: a negative left or top edge counts as invalid (it is partly on screen)"
        kept_above = next((a for a in tree.ancestors(n) if a.index in run.pruned_parent), None)
        if kept_above is not None and _valid(kept_above.bounds) and not _covers(kept_above.bounds, b):
            return f"AndroidLab drops a node not inside its parent (after lifting): {describe(kept_above)}"
        if not any(n.attrs.get(f) == "true" for f in AL_FLAGS) and not n.text and not n.content_desc:
            return "AndroidLab keeps a node only for its flags or a label: an editable class alone does not count"
        return None
    # Dropped by the overlap removal: it, or a node above it there, has a later sibling there that
    # overlaps it (AndroidLab drops anything overlapping a later sibling, even partly or under a
    # see-through container), or it was dropped with such an ancestor: AndroidLab lifts the ancestor's
    # children that miss the overlap, but its loop removes from the list it walks and skips every
    # other one.
    parent = run.pruned_parent
    children: dict[int, list[int]] = {}
    for k in sorted(parent):
        children.setdefault(parent[k], []).append(k)
    chain = [n.index]
    while parent.get(chain[-1], -1) >= 0:
        chain.append(parent[chain[-1]])
    for x in chain:
        sibs = children[parent[x]]
        for s in sibs[sibs.index(x) + 1 :]:
            sb = nodes[s].bounds
            if sb is not None and _meets(sb, b):
                return f"AndroidLab drops what overlaps a later sibling: {describe(nodes[s])}"
    for x in chain[1:]:
        sibs = children[parent[x]]
        xb = nodes[x].bounds
        for s in sibs[sibs.index(x) + 1 :]:
            sb = nodes[s].bounds
            if sb is not None and xb is not None and _meets(sb, xb):
                return (f"AndroidLab dropped it with its ancestor {describe(nodes[x])}, which overlaps the later "
                        f"{describe(nodes[s])}: it lifts only every other child that misses the overlap")  # fmt: skip
    return None


def compare(name: str, xml: str, androidlab: type, *, screen_size=None) -> dict:
    """Kept actionable sets of both compressions on one dump; fails on any drop no rule explains."""
    tree = parse_ui(xml)
    ui = compress_xml(tree, screen_size=screen_size)
    screen = ui.screen_size
    run = BENCH.androidlab_run(androidlab, xml)
    actionable = actionable_nodes(tree, screen)
    ours = set(ui.node_indices)
    geo = Geometry(tree, screen)
    unexplained = []
    diff = {"actionable": len(actionable), "ours": 0, "androidlab": 0, "only_ours": {}, "only_androidlab": {}}
    for i in actionable:
        n = tree.nodes[i]
        in_ours, in_al = i in ours, i in run.kept
        diff["ours"] += in_ours
        diff["androidlab"] += in_al
        if not in_ours:
            why = our_reason(geo, n)
            if why is None:
                unexplained.append(f"{name}: ours drops {describe(n)} and none of its rules applies")
            elif in_al:
                diff["only_androidlab"][i] = why
        if not in_al:
            why = androidlab_reason(tree, run, n)
            if why is None:
                unexplained.append(f"{name}: AndroidLab drops {describe(n)} and none of its rules applies")
            elif in_ours:
                diff["only_ours"][i] = why
    assert not unexplained, "\n".join(unexplained)
    return diff


# ---------------------------------------------------------------- real dumps


def real_dumps() -> list[Path]:
    shared = REPO.parent / "shared" / "realdata" / "android_xml"
    return sorted(shared.glob("*.xml")) + sorted(REAL_DUMPS.glob("*.xml"))


def test_repository_dumps_have_provenance():
    listed = (REAL_DUMPS / "PROVENANCE.md").read_text("utf-8")
    files = sorted(p.name for p in REAL_DUMPS.glob("*.xml"))
    assert len(files) >= 10
    for f in files:
        row = next((line for line in listed.splitlines() if line.startswith(f"| `{f}`")), None)
        assert row is not None, f"{f} has no row in PROVENANCE.md"
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 8 and len(cells[3].strip("`")) == 40, row  # repository, path, commit, license...
        assert cells[4].startswith(("MIT", "Apache-2.0", "BSD", "CC-BY")), row
        w, h = map(int, cells[6].split("x"))
        assert parse_ui((REAL_DUMPS / f).read_bytes()).screen_size == (w, h), f


def test_every_on_screen_actionable_node_of_a_real_dump_survives_unless_hidden():
    """The promise, checked on real dumps without AndroidLab: each dropped actionable node has a rule."""
    paths = real_dumps()
    assert len(paths) >= 10
    failures = []
    kept = total = 0
    for path in paths:
        tree = parse_ui(path.read_bytes())
        ui = compress_xml(tree)
        geo = Geometry(tree, ui.screen_size)
        ours = set(ui.node_indices)
        for i in actionable_nodes(tree):
            total += 1
            kept += i in ours
            if i not in ours and our_reason(geo, tree.nodes[i]) is None:
                failures.append(f"{path.name}: {describe(tree.nodes[i])}")
            if i in ours:  # and it keeps its visible bounds
                e = ui.elements[ui.node_indices.index(i)]
                assert e.bounds == geo.vis[i], (path.name, describe(tree.nodes[i]))
    assert not failures, "dropped without a rule:\n" + "\n".join(failures)
    assert kept / total > 0.95, f"only {kept} of {total} actionable nodes kept"


def load_real(name: str):
    return compress_xml((REAL_DUMPS / name).read_bytes())


def test_real_short_video_feed_keeps_its_surface_tabs_and_controls():
    # Facebook Reels: the full-screen video surface (long-clickable, described) lies under a see-through
    # layer of controls and under the For you / Explore tab bar drawn later; all of them can be acted on.
    ui = load_real("kdiitg__ui_finder__dump.xml")
    surface = ui.find(content_desc="Video details", long_clickable=True)
    assert len(surface) == 1 and surface[0].bounds == (0, 6, 1080, 2102)
    for desc in ("For you button", "Explore button", "Search", "Comment", "Share, 1 share", "More", "Back"):
        assert ui.find(content_desc=desc, clickable=True), desc
    assert ui.element_at(540, 600).content_desc == "Video details"
    assert ui.element_at(200, 200).content_desc.startswith("For you")


def test_real_app_drawer_under_a_description_only_view_is_kept():
    # Nova launcher's drawer: a full-screen, non-clickable view described "홈" (home) comes last in the
    # dump. It takes no touches, so every icon under it is still there to tap.
    ui = load_real("iMasterProX__UltraNavbar__uidump_drawer.xml")
    assert len(ui.find(resource_id="icon", clickable=True)) == 49
    assert ui.find(content_desc="홈") and ui.find(scrollable=True)


def test_real_status_bar_listed_before_the_app_window_stays_on_top():
    # uiautomator2 listed the status bar window before the full-screen app window; the smaller window is
    # the one on top, so its clock and icons stay and nothing of the app is hidden.
    ui = load_real("docer1990__visiontest__hierarchy.xml")
    assert ui.find(resource_id="clock") and ui.find(content_desc="Battery 100 percent.")
    assert ui.find(content_desc="Log In", clickable=True) and ui.find(content_desc="Privacy Policy")
    assert ui.element_at(100, 60).resource_id.endswith("clock")


def test_real_dumps_against_androidlab(androidlab):
    report = {}
    for path in real_dumps():
        report[path.name] = compare(path.name, path.read_text("utf-8"), androidlab)
    ours = sum(d["ours"] for d in report.values())
    theirs = sum(d["androidlab"] for d in report.values())
    total = sum(d["actionable"] for d in report.values())
    assert ours >= theirs and ours == total, report
    # The named cases: the app drawers under a description-only or see-through full-screen view, and
    # the launcher dock under its background, are kept by ours and dropped by AndroidLab's overlap rule.
    drawer = report["iMasterProX__UltraNavbar__uidump_drawer.xml"]
    assert drawer["ours"] == drawer["actionable"] == 53 and drawer["androidlab"] == 0
    assert all("later sibling" in why for why in drawer["only_ours"].values())


# ---------------------------------------------------------------- the simulated phone


def sim_screens():
    from android_gym import AndroidEnv
    from android_gym.sim import SimPhone

    out = []
    phone = SimPhone()
    out.append(("home", phone.dump(), (phone.width, phone.height)))
    phone.swipe(540, 1600, 540, 500)
    out.append(("drawer", phone.dump(), (phone.width, phone.height)))
    for package in sorted(SimPhone().apps):
        phone = SimPhone()
        phone.launch(package)
        out.append((package, phone.dump(), (phone.width, phone.height)))
        phone.swipe(phone.width // 2, phone.height * 3 // 4, phone.width // 2, phone.height // 3)
        out.append((package + " scrolled", phone.dump(), (phone.width, phone.height)))
    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("search")
    out.append(("settings search with keyboard", phone.dump(), (phone.width, phone.height)))
    # Every screen of a few expert episodes that pass through dialogs, pickers and the keyboard.
    env = AndroidEnv(suite="sim")
    seen = set()
    for task in ("SimpleCalendarDeleteOneEvent", "SimpleCalendarAddOneEvent", "ContactsDeleteContact",
                 "MarkorDeleteNote", "ClockDeleteAlarm", "ExpenseDeleteSingle"):  # fmt: skip
        env.reset(seed=0, options={"task": task})
        for step in range(60):
            phone = env.device.phone
            xml = phone.dump()
            if xml not in seen:
                seen.add(xml)
                out.append((f"{task} step {step}", xml, (phone.width, phone.height)))
            _, _, terminated, truncated, _ = env.step(env.expert_action())
            if terminated or truncated:
                break
    env.close()
    return out


def test_sim_screens_against_androidlab(androidlab):
    screens = sim_screens()
    assert len(screens) > 30
    assert sum("android:id/button1" in xml for _, xml, _ in screens) >= 3, "some screens show a dialog"
    for name, xml, size in screens:
        d = compare(f"sim {name}", xml, androidlab, screen_size=size)
        assert d["ours"] >= d["androidlab"], (name, d)


# ---------------------------------------------------------------- generated screens


def _attrs(cls: str, bounds, **kw) -> str:
    base = {"index": "0", "text": "", "resource-id": "", "class": cls, "package": "com.gen", "content-desc": "",
            "checkable": "false", "checked": "false", "clickable": "false", "enabled": "true", "focusable": "false",
            "focused": "false", "scrollable": "false", "long-clickable": "false", "password": "false",
            "selected": "false", "bounds": "[{},{}][{},{}]".format(*bounds)}  # fmt: skip
    base.update({k.replace("_", "-"): v for k, v in kw.items()})
    return " ".join(f'{k}="{v}"' for k, v in base.items())


def leaf(cls: str, bounds, **kw) -> str:
    return f"<node {_attrs(cls, bounds, **kw)} />"


def box(cls: str, bounds, inner: list[str], **kw) -> str:
    return f"<node {_attrs(cls, bounds, **kw)}>{''.join(inner)}</node>"


def generated_screen(rng: random.Random) -> str:
    """A screen of the shapes that matter, picked by ``rng``: a top bar of tabs and icons, a list or a
    full-screen surface under an overlay of controls, a bottom bar, and sometimes a see-through page,
    a dialog (in the window with a scrim, or as its own window), a keyboard window, a drawer."""
    w = rng.choice([720, 1080, 1440])
    h = rng.choice([1280, 1483, 2400, 3120, 3200])
    top, bottom = rng.randint(60, 200), h - rng.randint(120, 260)
    # top bar: a title tab with text and icons beside it
    tabs = [leaf("android.widget.TextView", (40 + k * 260, top - 50, 280 + k * 260, top), text=f"Tab{k}",
                 clickable="true", selected=str(k == 0).lower()) for k in range(rng.randint(1, 3))]  # fmt: skip
    icons = [leaf("android.widget.ImageView", (w - 120 * (k + 1), top - 50, w - 120 * k, top), content_desc=f"Icon{k}",
                  clickable="true") for k in range(rng.randint(0, 3))]  # fmt: skip
    bar = box("android.widget.LinearLayout", (0, 0, w, top), tabs + icons)
    if rng.random() < 0.5:  # a video feed: a full-screen clickable surface under an overlay of controls
        surface = leaf("android.view.View", (0, 0, w, h), content_desc="Video", clickable="true")
        controls = [leaf("android.widget.ImageView", (w - 150, 400 + 200 * k, w - 30, 520 + 200 * k),
                         content_desc=f"Like{k}", clickable="true") for k in range(rng.randint(1, 4))]  # fmt: skip
        caption = leaf("android.widget.TextView", (30, bottom - 200, w - 200, bottom - 100), text="@author")
        overlay = box("android.widget.FrameLayout", (0, 0, w, h), controls + [caption],
                      clickable=rng.choice(["false", "false", "true"]))  # fmt: skip
        content = [surface, overlay, bar] if rng.random() < 0.5 else [bar, surface, overlay]
    else:  # a list under the bar, in a pager that may reach under the bar
        rows = [box("android.widget.LinearLayout", (0, y, w, min(y + 200, bottom)),
                    [leaf("android.widget.TextView", (40, y + 20, w // 2, y + 120), text=f"Row{y}")],
                    clickable="true") for y in range(top, bottom, 200)]  # fmt: skip
        pager_top = rng.choice([0, top])
        lst = box("androidx.recyclerview.widget.RecyclerView", (0, top, w, bottom), rows, scrollable="true")
        pager = box("androidx.viewpager.widget.ViewPager", (0, pager_top, w, h), [lst], scrollable="true")
        content = [bar, pager] if rng.random() < 0.6 else [pager, bar]
    nav = box("android.widget.LinearLayout", (0, bottom, w, h),
              [leaf("android.widget.TextView", (k * w // 4, bottom, (k + 1) * w // 4, h), text=f"Nav{k}",
                    clickable="true") for k in range(4)])  # fmt: skip
    content.append(nav)
    extra = rng.choice(["none", "page", "scrim_dialog", "drawer", "none"])
    if extra == "page":  # a full-screen page added over the old one, opaque or not
        inner = [
            leaf(
                "android.widget.Button",
                (100, h // 2, w - 100, h // 2 + 150),
                text="Continue",
                clickable="true",
            )
        ]
        content.append(
            box("android.widget.FrameLayout", (0, 0, w, h), inner, clickable=rng.choice(["true", "false"]))
        )
    elif extra == "scrim_dialog":
        panel = box("android.widget.LinearLayout", (80, h // 3, w - 80, h // 3 + 600),
                    [leaf("android.widget.TextView", (120, h // 3 + 40, w - 120, h // 3 + 140), text="Delete?"),
                     leaf("android.widget.Button", (w - 400, h // 3 + 450, w - 120, h // 3 + 560), text="OK",
                          clickable="true")])  # fmt: skip
        content.append(
            box("android.widget.FrameLayout", (0, 0, w, h), [panel], clickable="true", resource_id="scrim")
        )
    elif extra == "drawer":
        items = [leaf("android.widget.CheckedTextView", (0, 200 + 150 * k, w * 3 // 4, 350 + 150 * k), text=f"Item{k}",
                      clickable="true", checkable="true") for k in range(5)]  # fmt: skip
        content.append(leaf("android.view.View", (0, 0, w, h), content_desc="Close drawer", clickable="true"))
        content.append(box("android.widget.FrameLayout", (0, 0, w * 3 // 4, h), items))
    root = box("android.widget.FrameLayout", (0, 0, w, h), content)
    windows = [root]
    if rng.random() < 0.4:  # the status bar, its own window, listed before or after the app (dumps differ)
        clock = leaf("android.widget.TextView", (30, 10, 150, top // 2), text="12:00", resource_id="clock")
        bar_window = box(
            "android.widget.FrameLayout", (0, 0, w, top // 2), [clock], package="com.android.systemui"
        )
        windows.insert(rng.choice([0, 1]), bar_window)
    if rng.random() < 0.3:  # the soft keyboard, its own window
        ky = h - h // 3
        keys = [leaf("android.widget.FrameLayout", (k * w // 10, ky + 40, (k + 1) * w // 10, ky + 200),
                     content_desc="qwertyuiop"[k], clickable="true") for k in range(10)]  # fmt: skip
        ime = box("android.widget.FrameLayout", (0, ky, w, h), keys, package="com.ime")
        windows.insert(rng.choice([0, len(windows)]), ime)
    if rng.random() < 0.2:  # a dialog window
        windows.append(box("android.widget.FrameLayout", (80, h // 3, w - 80, h // 3 + 500),
                           [leaf("android.widget.Button", (120, h // 3 + 300, w - 120, h // 3 + 450), text="Allow",
                                 clickable="true")]))  # fmt: skip
    return f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">{"".join(windows)}</hierarchy>'


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_generated_screens_against_androidlab(androidlab, seed):
    xml = generated_screen(random.Random(seed))
    compare(f"generated seed={seed}", xml, androidlab)


def test_named_shapes_survive(androidlab):
    """The two shapes of the report: a top bar under a later full-screen pager, and a video surface under
    a see-through overlay of controls: ours keeps the tabs, icons and the surface; AndroidLab's overlap
    rule drops what its later siblings overlap."""
    bar = box("android.widget.LinearLayout", (0, 0, 1080, 200),
              [leaf("android.widget.TextView", (40, 100, 300, 200), text="Chats", clickable="true"),
               leaf("android.widget.ImageView", (900, 100, 1000, 200), content_desc="Search", clickable="true")])  # fmt: skip
    rows = [box("android.widget.LinearLayout", (0, y, 1080, y + 200),
                [leaf("android.widget.TextView", (40, y + 20, 600, y + 120), text=f"Friend {y}")], clickable="true")
            for y in range(200, 2200, 200)]  # fmt: skip
    pager = box("androidx.viewpager.widget.ViewPager", (0, 0, 1080, 2400),
                [box("androidx.recyclerview.widget.RecyclerView", (0, 200, 1080, 2200), rows, scrollable="true")],
                scrollable="true")  # fmt: skip
    xml = f'<hierarchy rotation="0">{box("android.widget.FrameLayout", (0, 0, 1080, 2400), [bar, pager])}</hierarchy>'
    ui = compress_xml(xml)
    assert ui.find(text="Chats", clickable=True) and ui.find(content_desc="Search", clickable=True)
    assert len(ui.find(text="Friend")) == 10
    compare("top bar under a pager", xml, androidlab)

    def feed(overlay_clickable: str) -> str:
        surface = leaf(
            "android.view.View", (0, 0, 1080, 2400), content_desc="Video by @author", clickable="true"
        )
        overlay = box("android.widget.FrameLayout", (0, 0, 1080, 2400),
                      [leaf("android.widget.ImageView", (930, 1000, 1060, 1130), content_desc="Like", clickable="true"),
                       leaf("android.widget.TextView", (30, 2000, 800, 2100), text="@author")],
                      clickable=overlay_clickable)  # fmt: skip
        screen = box("android.widget.FrameLayout", (0, 0, 1080, 2400), [surface, overlay])
        return f'<hierarchy rotation="0">{screen}</hierarchy>'

    ui = compress_xml(feed("false"))
    assert ui.find(content_desc="Video by @author", clickable=True), (
        "the surface stays: the overlay takes no taps"
    )
    assert compare("video surface under controls", feed("false"), androidlab)["ours"] == 2
    # With a clickable overlay (it takes every tap) the surface below is hidden.
    assert not compress_xml(feed("true")).find(content_desc="Video by @author")
    compare("video surface under a clickable overlay", feed("true"), androidlab)
