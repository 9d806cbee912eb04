"""Benchmark the simulated phone: env steps per second (issue target), the phone alone, screenshots, snapshots.

``env_steps_per_s``: ``AndroidSim-v0``'s ``env.step`` (action executed through shell commands, hierarchy
dump, UI-tree compression, observation dict), pinned to one core; targets: >= 500 steps/s without
screenshots, >= 50 with 1080x2400 screenshots. ``phone_steps_per_s``: ``SimDevice.execute`` +
``observe`` alone (no compression). The action mix walks Settings: scroll the long main list down and
up, open a page, toggle a switch, go back, type into search. Prints one JSON object.

    .venv/bin/python tools/bench/sim_throughput.py [--steps 2000] [--shots 100]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable

import gymnasium as gym

import android_gym  # noqa: F401  (registers the env ids)
from android_gym.actions import Action, Click, OpenApp, PressBack, Scroll, Type
from android_gym.sim import SimDevice


def _tap_text(device: SimDevice, text: str) -> Action:
    """A click on the visible node showing ``text`` (looked up on the current screen)."""
    for e in device.phone.frame.entries:
        if e.text == text:
            x1, y1, x2, y2 = e.bounds
            return Click((x1 + x2) // 2, (y1 + y2) // 2)
    raise RuntimeError(f"{text!r} not on screen")


# One lap from the Settings main list back to it: each entry builds its action from the current screen.
LAP: list[Callable[[SimDevice], Action]] = [
    lambda d: Scroll("down"), lambda d: Scroll("down"), lambda d: Scroll("up"), lambda d: Scroll("up"),
    lambda d: _tap_text(d, "Network & internet"), lambda d: _tap_text(d, "Internet"),
    lambda d: _tap_text(d, "Wi\u2011Fi"), lambda d: _tap_text(d, "Wi\u2011Fi"),
    lambda d: PressBack(), lambda d: PressBack(),
    lambda d: _tap_text(d, "Search settings"), lambda d: Type("wifi"), lambda d: PressBack(), lambda d: PressBack(),
]


def bench_steps(steps: int, screenshot: bool) -> float:
    """Steps per second of execute + observe over Settings laps."""
    device = SimDevice()
    device.execute(OpenApp("Settings"))
    done = 0
    t0 = time.perf_counter()
    while done < steps:
        for make in LAP:
            device.execute(make(device))
            device.observe(screenshot=screenshot)
            done += 1
    return done / (time.perf_counter() - t0)


def bench_env(steps: int, screenshot: bool) -> float:
    """``env.step`` per second on AndroidSim-v0 over the same Settings laps (observation included)."""
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", screenshot=screenshot, max_steps=10**9)
    env.reset(seed=0)
    device = env.unwrapped.device
    env.step(OpenApp("Settings"))
    done = 0
    t0 = time.perf_counter()
    while done < steps:
        for make in LAP:
            env.step(make(device))
            done += 1
    rate = done / (time.perf_counter() - t0)
    env.close()
    return rate


def bench_screenshots(n: int) -> dict[str, float]:
    """Full-frame renders per second (state changes between shots) and PNG encodes per second."""
    device = SimDevice()
    device.execute(OpenApp("Settings"))
    phone = device.phone
    phone.screenshot()
    t0 = time.perf_counter()
    for i in range(n):
        phone.swipe(540, 1800, 540, 1200 if i % 2 else 2200, 300)
        phone.screenshot()
    shots = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    m = max(5, n // 10)
    for i in range(m):
        phone.swipe(540, 1800, 540, 1200 if i % 2 else 2200, 300)
        phone.screenshot_png()
    return {"screenshots_per_s": round(shots, 1), "png_per_s": round(m / (time.perf_counter() - t0), 1)}


def bench_snapshots(n: int) -> dict[str, float]:
    """Mean milliseconds to save and to load a whole-phone snapshot, and its size in bytes."""
    device = SimDevice()
    device.execute(OpenApp("Settings"))
    t0 = time.perf_counter()
    for i in range(n):
        device.snapshot_save(f"s{i % 4}")
    save_ms = (time.perf_counter() - t0) / n * 1000
    t0 = time.perf_counter()
    for i in range(n):
        device.snapshot_load(f"s{i % 4}")
    load_ms = (time.perf_counter() - t0) / n * 1000
    return {"snapshot_save_ms": round(save_ms, 3), "snapshot_load_ms": round(load_ms, 3),
            "snapshot_bytes": len(device.phone.snapshots["s0"])}


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmarks and print (and return) the JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="steps for the no-screenshot run")
    parser.add_argument("--shots", type=int, default=100, help="steps/screenshots for the pixel runs")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.shots < 1:
        parser.error("--steps and --shots must be positive")
    pinned = False
    if hasattr(os, "sched_setaffinity"):  # the target is per core
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        pinned = True
    bench_steps(100, False)  # warm caches (fonts, imports)
    bench_env(100, False)
    result = {
        "python": platform.python_version(),
        "screen": "1080x2400@420dpi",
        "one_core": pinned,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "env_steps_per_s": round(bench_env(args.steps, False), 1),
        "env_steps_per_s_with_screenshot": round(bench_env(args.shots, True), 1),
        "phone_steps_per_s": round(bench_steps(args.steps, False), 1),
        "phone_steps_per_s_with_screenshot": round(bench_steps(args.shots, True), 1),
        **bench_screenshots(args.shots),
        **bench_snapshots(200),
        "load_average_1m_end": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
