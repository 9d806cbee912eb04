"""Benchmark UI-tree compression: speed and size on the real dumps plus a generated 500-node dump.

Usage: python tools/bench/xml_compress.py [--realdata DIR] [--dumps DIR] [--androidlab DIR] [--repeats N]
[--androidlab-repeats N] [--nodes 500]

Prints one JSON object: for every dump its node and element counts, characters before and after
(each style), and median milliseconds over N repeats (wall clock and CPU time) for parsing alone,
for compression to text, and for compression plus building the element objects; then the generated
dump's medians. ``baseline_median_ms_bare_lxml_parse`` (lxml building its tree from the same bytes,
nothing else) puts the numbers in proportion to the machine.
Real dumps are read from ``<repo>/../shared/realdata/android_xml`` unless ``--realdata`` says otherwise,
and from ``tests/android_gym/data/real_dumps`` (``--dumps``).

AndroidLab's own compression (``UIXMLTree().process``, imported by path from
``<repo>/../shared/vendor/android_lab`` or ``--androidlab``; it needs lxml and xmltodict) runs on the
same dumps in the same process: each dump's ``androidlab`` entry gives its median milliseconds, whether
it failed (and why), its output size and how many actionable nodes it kept, beside ``actionable`` (the
dump's actionable nodes, `android_gym.xml.actionable_nodes`) and ``actionable_kept`` (how many of them
ours keeps). ``androidlab_available`` is false, with the reason, when its code cannot be loaded.
``native_reader`` says whether android-gym's optional C reader did the parsing; run with
``ANDROID_GYM_NO_SPEEDUPS=1`` in the environment to measure the pure-Python readers instead.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from lxml import etree

from android_gym.xml import actionable_nodes, compress_xml, parse_ui, synthetic_dump
from android_gym.xml.tree import NATIVE_READER

REPO_ROOT = Path(__file__).resolve().parents[2]
ANDROIDLAB_DIR = REPO_ROOT.parent / "shared" / "vendor" / "android_lab"
MARK = "bench-node"  # attribute that tags every node with its dump index for AndroidLab's run


def load_androidlab(root: Path = ANDROIDLAB_DIR) -> type:
    """AndroidLab's ``UIXMLTree`` class, imported from its checkout at ``root`` (its own imports are
    relative to that folder). Raises ImportError naming what is missing."""
    if not (root / "utils_mobile" / "xml_tool.py").is_file():
        raise ImportError(f"AndroidLab's utils_mobile/xml_tool.py not found under {root}")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from utils_mobile.xml_tool import UIXMLTree  # type: ignore[import-not-found]

    return UIXMLTree


def androidlab_process(tool: type, xml: str) -> str:
    """AndroidLab's compressed text for a dump, called the way its agent calls it (level 1, json)."""
    return tool().process(xml, level=1, str_type="json")


class AndroidLabRun(NamedTuple):
    """What AndroidLab's compression kept of one dump, by dump index (pre-order, as in `parse_ui`)."""

    kept: set[int]
    """Nodes in its final output."""
    pruned_parent: dict[int, int]
    """After its first step (dropping nodes without flags or label, with invalid bounds or outside their
    parent) and before its overlap removal: each remaining node's parent there (-1 at the top)."""


def androidlab_run(tool: type, xml: str | bytes) -> AndroidLabRun:
    """Run AndroidLab's compression on a dump and report which nodes it kept (see `AndroidLabRun`).

    Every element gets a ``bench-node`` attribute with its index before AndroidLab runs; AndroidLab
    leaves unknown attributes on the nodes it keeps, so its processed tree names them. Raises what
    AndroidLab raises on a dump it cannot process."""
    root = etree.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    for k, el in enumerate(root.iterdescendants()):
        el.set(MARK, str(k))
    tagged = etree.tostring(root, encoding="unicode")
    pruned: dict[int, int] = {}

    class Recording(tool):  # type: ignore[misc, valid-type]
        def special_check(self) -> None:  # runs right after the first step, then removes overlaps
            for el in self.root.iter():
                v = el.get(MARK)
                if v is not None:
                    parent = el.getparent()
                    pv = parent.get(MARK) if parent is not None else None
                    pruned[int(v)] = int(pv) if pv is not None else -1
            super().special_check()

    t = Recording()
    t.process(tagged, level=1, str_type="json")
    kept = {int(v) for el in t.root.iter() if (v := el.get(MARK)) is not None}
    return AndroidLabRun(kept, pruned)


def median_ms(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall time and median CPU time of ``fn`` in milliseconds over ``repeats`` runs (after two
    warm-up runs). CPU time is the steadier number on a shared machine; wall time is what a caller waits."""
    fn()
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return round(statistics.median(wall) * 1000, 3), round(statistics.median(cpu) * 1000, 3)


def measure(name: str, xml: str, repeats: int, tool: type | None = None, al_repeats: int = 20) -> dict:
    """Sizes and timings of one dump, ours and (when ``tool`` is AndroidLab's class) AndroidLab's."""
    ui = compress_xml(xml)
    parse_wall, parse_cpu = median_ms(lambda: parse_ui(xml), repeats)
    text_wall, text_cpu = median_ms(lambda: compress_xml(xml), repeats)
    full_wall, full_cpu = median_ms(lambda: compress_xml(xml).elements, repeats)
    data = xml.encode("utf-8")
    lxml_wall, _ = median_ms(lambda: etree.fromstring(data), repeats)
    actionable = set(actionable_nodes(ui.tree, ui.screen_size))
    out = {
        "dump": name,
        "nodes": len(ui.tree),
        "elements": len(ui),
        "chars_before": len(xml),
        "chars_after": len(ui.text),
        "chars_after_mobilerl": len(compress_xml(xml, style="mobilerl").text),
        "chars_after_json": len(compress_xml(xml, style="json").text),
        "ratio": round(len(ui.text) / max(1, len(xml)), 4),
        "median_ms_parse": parse_wall,
        "median_ms_compress": text_wall,
        "median_ms_compress_with_elements": full_wall,
        "median_cpu_ms_compress": text_cpu,
        "median_cpu_ms_parse": parse_cpu,
        "median_cpu_ms_compress_with_elements": full_cpu,
        "baseline_median_ms_bare_lxml_parse": lxml_wall,
        "actionable": len(actionable),
        "actionable_kept": len(actionable.intersection(ui.node_indices)),
    }
    if tool is not None:
        try:
            text = androidlab_process(tool, xml)
            kept = androidlab_run(tool, xml).kept
            al_wall, al_cpu = median_ms(lambda: androidlab_process(tool, xml), al_repeats)
            out["androidlab"] = {
                "failed": None,
                "median_ms_compress": al_wall,
                "median_cpu_ms_compress": al_cpu,
                "chars_after": len(text),
                "elements": len(kept),
                "actionable_kept": len(actionable & kept),
            }
        except Exception as err:  # AndroidLab raises KeyError & co. on dumps it does not handle
            out["androidlab"] = {"failed": f"{type(err).__name__}: {err}"}
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark, print the JSON report and return it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realdata", type=Path, default=REPO_ROOT.parent / "shared" / "realdata",
                    help="folder holding android_xml/ (default: <repo>/../shared/realdata)")  # fmt: skip
    ap.add_argument(
        "--dumps",
        type=Path,
        default=REPO_ROOT / "tests" / "android_gym" / "data" / "real_dumps",
        help="more real dumps (*.xml) to measure (default: the repository's tests/android_gym/data/real_dumps)",
    )
    ap.add_argument(
        "--androidlab",
        type=Path,
        default=ANDROIDLAB_DIR,
        help="AndroidLab checkout to compare with (default: <repo>/../shared/vendor/android_lab)",
    )
    ap.add_argument("--repeats", type=int, default=200, help="timed runs per measurement (median reported)")
    ap.add_argument(
        "--androidlab-repeats", type=int, default=20, help="timed runs of AndroidLab's compression"
    )
    ap.add_argument("--nodes", type=int, default=500, help="size of the generated dump")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.androidlab_repeats < 1:
        ap.error("--repeats and --androidlab-repeats must be at least 1")
    dumps: list[tuple[str, str]] = []
    xml_dir = args.realdata / "android_xml"
    if xml_dir.is_dir():
        for path in sorted(xml_dir.glob("*.xml")):
            dumps.append((path.name, path.read_text("utf-8")))
    else:
        print(f"note: no real dumps at {xml_dir}", file=sys.stderr)
    if args.dumps.is_dir():
        for path in sorted(args.dumps.glob("*.xml")):
            dumps.append((path.name, path.read_text("utf-8")))
    try:
        tool: type | None = load_androidlab(args.androidlab)
        al_missing = None
    except ImportError as err:
        tool, al_missing = None, str(err)
    generated_name = f"generated_{args.nodes}_nodes"
    dumps.append((generated_name, synthetic_dump(args.nodes, seed=0)))
    load_start = round(os.getloadavg()[0], 2)  # the machine is shared: numbers mean little without it
    results = [measure(name, xml, args.repeats, tool, args.androidlab_repeats) for name, xml in dumps]
    generated = results[-1]
    report = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeats": args.repeats,
        "native_reader": NATIVE_READER,
        "androidlab_available": tool is not None,
        "androidlab_missing": al_missing,
        "androidlab_failures": sum(1 for r in results if r.get("androidlab", {}).get("failed")),
        "actionable_total": sum(r["actionable"] for r in results),
        "actionable_kept_total": sum(r["actionable_kept"] for r in results),
        "androidlab_actionable_kept_total": sum(
            r["androidlab"]["actionable_kept"]
            for r in results
            if r.get("androidlab", {}).get("failed") is None and "androidlab" in r
        ),
        "load_average_1m_start": load_start,
        "load_average_1m_end": round(os.getloadavg()[0], 2),
        "dumps": results,
        f"generated_{args.nodes}_median_ms_compress": generated["median_ms_compress"],
        f"generated_{args.nodes}_median_ms_compress_with_elements": generated[
            "median_ms_compress_with_elements"
        ],
        f"generated_{args.nodes}_median_ms_parse": generated["median_ms_parse"],
        f"generated_{args.nodes}_median_cpu_ms_compress": generated["median_cpu_ms_compress"],
        f"generated_{args.nodes}_baseline_median_ms_bare_lxml_parse": generated[
            "baseline_median_ms_bare_lxml_parse"
        ],
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return report


if __name__ == "__main__":
    main()
