"""``android-gym sim-adbd``: run the simulated phone as an adb device (and emulator console) until Ctrl-C or SIGTERM.

Wire it into a CLI with :func:`add_sim_adbd_parser`; ``python -m android_gym.adbd`` runs it alone.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from android_gym.sim.faults import FAULT_KINDS, FaultPlan
from android_gym.sim.latency import PRESETS as LATENCY_PRESETS

BOOT_SNAPSHOT = "boot"
TASK_SNAPSHOT = "task_start"


def parse_faults(spec: str, seed: int = 0) -> FaultPlan:
    """A ``FaultPlan`` from ``"crash=0.01,hang=0.002"`` (per-call rates) and/or ``"crash@5,disconnect@9"`` (call numbers)."""
    rates: dict[str, float] = {}
    schedule: list[tuple[int, str]] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        if "=" in item:
            kind, _, value = item.partition("=")
            try:
                rates[kind.strip()] = float(value)
            except ValueError:
                raise ValueError(f"fault rate {item!r}: {value!r} is not a number") from None
        elif "@" in item:
            kind, _, value = item.partition("@")
            try:
                schedule.append((int(value), kind.strip()))
            except ValueError:
                raise ValueError(f"scheduled fault {item!r}: {value!r} is not a call number") from None
        else:
            raise ValueError(f"fault {item!r}: write KIND=RATE or KIND@CALL with KIND one of {', '.join(FAULT_KINDS)}")
    return FaultPlan(rates=rates, schedule=schedule, seed=seed)


def add_sim_adbd_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``sim-adbd`` subcommand to an argparse subparsers object; returns its parser."""
    parser = subparsers.add_parser(
        "sim-adbd", help="serve the simulated phone to the real adb tool (adb connect / emulator-NNNN)",
        description=__doc__)
    _add_arguments(parser)
    parser.set_defaults(func=run_sim_adbd)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5555, help="adb transport port (default 5555; 0: any free)")
    parser.add_argument("--console-port", type=int, default=None,
                        help="emulator console port; PORT-1 makes it an emulator pair (serial emulator-CONSOLE)")
    parser.add_argument("--task", default=None, help="initialise this task on the phone (see android-gym tasks)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the phone and of the task's parameters")
    parser.add_argument("--latency", default=None, choices=sorted(LATENCY_PRESETS),
                        help="latency model preset (default: zero, no delay)")
    parser.add_argument("--faults", default=None,
                        help="fault injection: KIND=RATE per call and/or KIND@CALL, comma separated "
                             f"(kinds: {', '.join(FAULT_KINDS)})")
    parser.add_argument("--android-world-emulator", action="store_true",
                        help="stand in for AndroidWorld's emulator: its apps as that emulator shows them (Google "
                             "Clock, the home screen at its bounds), as an in-process AndroidWorld run gets them")
    parser.add_argument("--width", type=int, default=1080, help="screen width in pixels")
    parser.add_argument("--height", type=int, default=2400, help="screen height in pixels")
    parser.add_argument("--adb-server-port", type=int, default=None,
                        help="adb server to register an emulator pair with (default $ANDROID_ADB_SERVER_PORT or 5037)")
    parser.add_argument("--no-announce", action="store_true",
                        help="do not register with the adb server even for an emulator port pair")
    parser.add_argument("--auth-token-path", default=None,
                        help="console auth token file (default ~/.emulator_console_auth_token)")


def build_device(args: argparse.Namespace) -> tuple[Any, Any]:
    """The SimDevice for these arguments and the initialised task (or None)."""
    from android_gym.sim import SimDevice, SimPhone

    faults = parse_faults(args.faults, seed=args.seed) if args.faults else None
    phone = SimPhone(width=args.width, height=args.height, seed=args.seed)
    phone.android_world_emulator = bool(getattr(args, "android_world_emulator", False))
    device = SimDevice(phone, latency=args.latency, faults=faults, seed=args.seed)
    task = None
    phone.snapshot_save(BOOT_SNAPSHOT)
    if args.task:
        from android_gym.tasks import get_task_class

        task = get_task_class(args.task)(seed=args.seed)
        task.initialize(device)
        phone.snapshot_save(TASK_SNAPSHOT)
    return device, task


def run_sim_adbd(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """Serve until SIGINT/SIGTERM (or until ``stop`` is set, or the console's ``kill``); returns the exit status."""
    from android_gym.adbd.server import SimAdbd

    device, task = build_device(args)
    adbd = SimAdbd(device, host=args.host, port=args.port, console_port=args.console_port,
                   announce=False if args.no_announce else None, adb_server_port=args.adb_server_port,
                   auth_token_path=args.auth_token_path)
    stop = stop or threading.Event()
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handlers[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        try:
            adbd.start()
        except OSError as exc:
            print(f"sim-adbd: error: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"serial: {adbd.serial}", flush=True)
        if adbd.emulator_mode and adbd.announce_enabled:
            if adbd.announced:
                print(f"  registered with the adb server on port {adbd.adb_server_port} as {adbd.serial}; "
                      f"try: adb -s {adbd.serial} emu avd snapshot list", flush=True)
            else:
                print(f"  no adb server on port {adbd.adb_server_port} to register with: start adb first "
                      f"(adb finds emulator pairs on ports 5554-5585 by itself when it starts), "
                      f"or adb connect {adbd.host}:{adbd.port}", flush=True)
        else:
            print(f"  adb connect {adbd.serial}", flush=True)
        if adbd.console_port is not None:
            print(f"  console: 127.0.0.1:{adbd.console_port} (token in {adbd.console.token_path})", flush=True)
        if task is not None:
            print(f"  task: {task.name}: {task.goal}", flush=True)
            print(f"  snapshots: {BOOT_SNAPSHOT} (before the task), {TASK_SNAPSHOT} (after initialize)", flush=True)
        while not stop.wait(0.2):
            if adbd.killed:
                break
    finally:
        adbd.stop()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    print("sim-adbd stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m android_gym.adbd``: the sim-adbd command on its own."""
    parser = argparse.ArgumentParser(prog="python -m android_gym.adbd", description=__doc__)
    _add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_sim_adbd(args)
    except (KeyError, ValueError, OSError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"sim-adbd: error: {message}", file=sys.stderr)
        return 2
