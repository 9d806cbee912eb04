"""Benchmark UI-tree compression: speed and size on the real dumps plus a generated 500-node dump.

Usage: python tools/bench/xml_compress.py [--realdata DIR] [--repeats N] [--nodes 500]

Prints one JSON object: for every dump its node and element counts, characters before and after
(each style), and median milliseconds over N repeats (wall clock and CPU time) for parsing alone,
for compression to text, and for compression plus building the element objects; then the generated
dump's medians. ``baseline_median_ms_bare_lxml_parse`` (lxml building its tree from the same bytes,
nothing else) puts the numbers in proportion to the machine.
Real dumps are read from ``<repo>/../shared/realdata/android_xml`` unless ``--realdata`` says otherwise.
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

from lxml import etree

from android_gym.xml import compress_xml, parse_ui, synthetic_dump
from android_gym.xml.tree import NATIVE_READER

REPO_ROOT = Path(__file__).resolve().parents[2]


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


def measure(name: str, xml: str, repeats: int) -> dict:
    """Sizes and timings of one dump."""
    ui = compress_xml(xml)
    parse_wall, parse_cpu = median_ms(lambda: parse_ui(xml), repeats)
    text_wall, text_cpu = median_ms(lambda: compress_xml(xml), repeats)
    full_wall, full_cpu = median_ms(lambda: compress_xml(xml).elements, repeats)
    data = xml.encode("utf-8")
    lxml_wall, _ = median_ms(lambda: etree.fromstring(data), repeats)
    return {
        "dump": name,
        "nodes": len(parse_ui(xml)),
        "elements": len(ui),
        "chars_before": len(xml),
        "chars_after": len(ui.text),
        "chars_after_mobilerl": len(compress_xml(xml, style="mobilerl").text),
        "chars_after_json": len(compress_xml(xml, style="json").text),
        "ratio": round(len(ui.text) / max(1, len(xml)), 4),
        "median_ms_parse": parse_wall,
        "median_ms_compress": text_wall,
        "median_ms_compress_with_elements": full_wall,
        "median_cpu_ms_parse": parse_cpu,
        "median_cpu_ms_compress": text_cpu,
        "median_cpu_ms_compress_with_elements": full_cpu,
        "baseline_median_ms_bare_lxml_parse": lxml_wall,
    }


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark, print the JSON report and return it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realdata", type=Path, default=REPO_ROOT.parent / "shared" / "realdata",
                    help="folder holding android_xml/ (default: <repo>/../shared/realdata)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=200, help="timed runs per measurement (median reported)")
    ap.add_argument("--nodes", type=int, default=500, help="size of the generated dump")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    dumps: list[tuple[str, str]] = []
    xml_dir = args.realdata / "android_xml"
    if xml_dir.is_dir():
        for path in sorted(xml_dir.glob("*.xml")):
            dumps.append((path.name, path.read_text("utf-8")))
    else:
        print(f"note: no real dumps at {xml_dir}; measuring the generated dump only", file=sys.stderr)
    generated_name = f"generated_{args.nodes}_nodes"
    dumps.append((generated_name, synthetic_dump(args.nodes, seed=0)))
    load_start = round(os.getloadavg()[0], 2)  # the machine is shared: numbers mean little without it
    results = [measure(name, xml, args.repeats) for name, xml in dumps]
    generated = results[-1]
    report = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeats": args.repeats,
        "native_reader": NATIVE_READER,
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
