"""Per-step cost of the adb path against the in-process simulated phone: screenshot, hierarchy, action.

Both sides drive the same simulated phone state (Settings open, zero latency model): in process
through ``SimDevice``, and over adb through ``AdbDevice`` -> Debian's adb server -> the simulated
adbd (``SimAdbd``) on loopback. Before every measured call an unmeasured scroll changes the screen,
so no side reuses a cached render or dump. Reports median and p95 milliseconds per operation, the
adb/in-process ratio, a bare ``echo`` through AdbDevice and through adbutils' ``shell()``, and
``uiautomator dump`` against uiautomator2's dump where uiautomator2 can run (it cannot against the
simulated adbd: its on-device server needs ``app_process``; the reason is reported). One JSON object.

    .venv/bin/python tools/bench/device_overhead.py [--reps 200] [--adb /usr/bin/adb]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from android_gym.actions import Click, OpenApp, Scroll
from android_gym.adbd import HostAdb, SimAdbd
from android_gym.drivers import AdbDevice, UiAutomator2Unavailable
from android_gym.sim import SimDevice, SimPhone


def summarize(samples: list[float]) -> dict[str, float]:
    """Median and p95 (nearest rank) in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {"median_ms": round(statistics.median(ordered) * 1000, 3), "p95_ms": round(p95 * 1000, 3)}


def measure(op: Callable[[], Any], reps: int, disturb: Callable[[int], Any] | None = None) -> dict[str, float]:
    """Time ``op`` ``reps`` times; ``disturb(i)`` runs untimed before each call (changes the screen)."""
    op()  # warm-up
    samples = []
    for i in range(reps):
        if disturb is not None:
            disturb(i)
        t0 = time.perf_counter()
        op()
        samples.append(time.perf_counter() - t0)
    return summarize(samples)


def scroll(device: Any) -> Callable[[int], None]:
    """Alternate scrolling down and up so consecutive screens differ."""
    return lambda i: device.execute(Scroll("down" if i % 2 == 0 else "up"))


def bench_side(device: Any, screenshot: Callable[[], Any], reps: int) -> dict[str, dict[str, float]]:
    """The per-operation costs on one side (in process or over adb)."""
    device.execute(OpenApp("Settings"))
    disturb = scroll(device)
    results = {
        "screenshot": measure(screenshot, reps, disturb),
        "hierarchy": measure(lambda: device.observe(screenshot=False), reps, disturb),
        "action_tap": measure(lambda: device.execute(Click(540, 1600)) or device.execute(Scroll("up")), reps),
        "action_scroll": measure(lambda: device.execute(Scroll("down")), reps),
    }

    def step() -> None:
        device.execute(Scroll("down"))
        device.observe(screenshot=False)

    results["step_scroll_observe"] = measure(step, reps)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="measured calls per operation")
    parser.add_argument("--adb", default="/usr/bin/adb", help="the adb binary (its server runs on a private port)")
    args = parser.parse_args()
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    os.environ.setdefault("ADBUTILS_ADB_PATH", args.adb)

    sim_phone = SimPhone()
    sim = SimDevice(sim_phone)
    report: dict[str, Any] = {"reps": args.reps, "machine": platform.platform(), "python": platform.python_version(),
                              "note": "action_tap is a tap on Settings plus the scroll that undoes its effect"}
    report["in_process"] = bench_side(sim, sim_phone.screenshot, args.reps)
    # what the adb screenshot makes the device do first: render and PNG-encode (``screencap -p``)
    report["in_process_screencap_png"] = measure(lambda: sim.exec_out("screencap -p"), args.reps, scroll(sim))

    home = tempfile.mkdtemp(prefix="device_overhead_")
    token = os.path.join(home, ".emulator_console_auth_token")
    host = HostAdb(adb=args.adb, home=home)
    host.start_server()
    try:
        adbd = SimAdbd(SimPhone(), port=0, console_port=0, adb_server_port=host.server_port,
                       auth_token_path=token).start()
        try:
            device = AdbDevice(adbd.serial, adb_port=host.server_port, console_token_path=token,
                               use_uiautomator2=False)
            report["adb"] = bench_side(device, device.screenshot, args.reps)
            report["adb_over_in_process"] = {
                op: round(report["adb"][op]["median_ms"] / max(report["in_process"][op]["median_ms"], 1e-6), 2)
                for op in report["adb"]}
            report["shell_echo"] = {"AdbDevice.shell": measure(lambda: device.shell("echo hi"), args.reps)}
            try:
                import adbutils

                raw = adbutils.AdbClient(port=host.server_port).device(adbd.serial)
                report["shell_echo"]["adbutils.shell"] = measure(lambda: raw.shell("echo hi"), args.reps)
            except ImportError as exc:  # the adb extra is optional
                report["shell_echo"]["adbutils.shell"] = f"n/a: {exc}"
            report["dump"] = {"uiautomator dump": measure(device.dump_hierarchy, args.reps, scroll(device))}
            u2_device = AdbDevice(adbd.serial, adb_port=host.server_port, console_token_path=token,
                                  use_uiautomator2="auto")
            u2_device.dump_hierarchy()
            if u2_device.uiautomator2_active:
                report["dump"]["uiautomator2"] = measure(u2_device.dump_hierarchy, args.reps, scroll(u2_device))
            else:
                forced = AdbDevice(adbd.serial, adb_port=host.server_port, console_token_path=token,
                                   use_uiautomator2=True)
                try:
                    forced.dump_hierarchy()
                except UiAutomator2Unavailable as exc:
                    report["dump"]["uiautomator2_forced"] = f"n/a: {exc}"
                report["dump"]["uiautomator2"] = f"n/a: {u2_device.uiautomator2_reason}"
        finally:
            adbd.stop()
    finally:
        host.kill_server()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
