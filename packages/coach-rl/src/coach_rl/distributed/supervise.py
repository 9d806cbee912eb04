"""``coach-rl train`` on an existing Ray cluster: the driver runs in a child process, so a lost head is reported.

When the head node dies, Ray may end the driver process itself, without a Python exception: a driver attached to
the head's raylet (any driver started on the head machine, where Ray picks the head's raylet) is ended the
moment it next uses the object store (``The connection to the plasma store is failed. Terminate the process.``,
in its Ray log only), and any driver after 60 s without the GCS. :class:`coach_rl.distributed.RayCollector`
reports the loss after ``ray_head_lost_s`` (15 s) when it gets the chance (:class:`RayHeadLost`); when Ray ends
the process first, the parent process started here sees the child end, finds the GCS gone and prints the same
error. Either way ``coach-rl train`` exits with :data:`EXIT_HEAD_LOST` and one error line, and the run folder keeps
its checkpoint and spool for the next driver.

The parent imports neither Ray nor torch; the child writes what the parent needs (GCS address, Ray log folder,
run and spool folders) to the file named by ``COACH_RL_DRIVER_STATE`` once it is connected.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["EXIT_HEAD_LOST", "STATE_ENV", "head_lost_advice", "record_driver", "run_state", "supervise"]

STATE_ENV = "COACH_RL_DRIVER_STATE"
"""Set in the child: where it writes its driver state (JSON)."""
EXIT_HEAD_LOST = 3
"""Exit status of ``coach-rl train`` when the Ray head node was lost."""
_RAY_REASONS = ("Terminate the process", "Failed to connect to GCS", "The program will terminate")


def head_lost_advice() -> str:
    """What to do after the head node is lost (the same words from the collector and from ``coach-rl train``)."""
    return ("Start a new head (`ray start --head ...`, with the same RAY_AUTH_MODE/RAY_AUTH_TOKEN) and the device "
            "nodes, then run the same command again, with ray_address=<new head host:port> if it moved: the run "
            "resumes from its checkpoint and spool")


def record_driver(run_dir: str | os.PathLike[str], spool_dir: str | os.PathLike[str] | None, gcs_address: str) -> None:
    """In a supervised child (``COACH_RL_DRIVER_STATE`` set): note where this driver's run and Ray logs are."""
    path = os.environ.get(STATE_ENV)
    if not path:
        return
    logs = ""
    try:
        import ray

        logs = str(ray._private.worker.global_worker.node.get_logs_dir_path())
    except Exception:  # noqa: BLE001 - only the error message's detail depends on it
        pass
    state = {"pid": os.getpid(), "gcs_address": gcs_address, "logs_dir": logs, "run_dir": str(run_dir),
             "spool_dir": str(spool_dir) if spool_dir else ""}
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(state))
    tmp.replace(path)


def run_state(run_dir: str | os.PathLike[str], spool_dir: str | os.PathLike[str] | None = None) -> str:
    """'The run folder R keeps checkpoint N and K spooled episodes', read from the folders alone."""
    from coach_rl.run import RunDir

    run = Path(run_dir)
    checkpoint = RunDir(run).latest_checkpoint() if run.is_dir() else None
    spool = Path(spool_dir) if spool_dir else run / "spool"
    spooled = len(list(spool.glob("*.pkl"))) if spool.is_dir() else 0
    kept = f"checkpoint {checkpoint.name}" if checkpoint is not None else "no checkpoint yet"
    return f"The run folder {run} keeps {kept} and {spooled} spooled episodes (delivered on resume)."


def _gcs_answers(address: str) -> bool:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return True
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=3).close()
    except OSError:
        return False
    return True


def _ray_reason(logs_dir: str, pid: int) -> str:
    """The line of the driver's Ray log that says why Ray ended it, if there is one."""
    for log in sorted(Path(logs_dir).glob(f"python-core-driver-*_{pid}.log")) if logs_dir else []:
        lines = [line for line in log.read_text(errors="replace").splitlines() if any(r in line for r in _RAY_REASONS)]
        if lines:
            return lines[-1].split("] ", 1)[-1].strip()
    return ""


def _post_mortem(state: dict[str, Any], returncode: int) -> str | None:
    """The error to print when the child ended because the head is gone, else None."""
    address = str(state.get("gcs_address") or "")
    if not address or _gcs_answers(address):
        return None
    how = f"exit status {returncode}" if returncode >= 0 else f"signal {-returncode}"
    reason = _ray_reason(str(state.get("logs_dir") or ""), int(state.get("pid") or 0))
    said = f": {reason!r}" if reason else ""
    return (f"lost the Ray head node: its GCS at {address} refuses connections, so the cluster is gone (workers, "
            f"objects), and Ray ended the driver ({how}{said}). "
            f"{run_state(state.get('run_dir') or '.', state.get('spool_dir') or None)} {head_lost_advice()}")


def supervise(argv: Sequence[str], command: str = "train", *, program: Sequence[str] | None = None) -> int:
    """Run ``coach-rl <argv>`` in a child process and wait for it; report a lost head if Ray ended the child.

    ``program``: the child's command line instead (tests). SIGTERM and SIGHUP are passed on to the child; SIGINT
    is ignored here (Ctrl-C reaches the child itself, which is in the same process group). The child dies with
    this process (``PR_SET_PDEATHSIG`` on Linux).
    """
    if program is None:
        program = [sys.executable, "-c", "from coach_rl.cli import main; raise SystemExit(main())", *argv]
    with tempfile.TemporaryDirectory(prefix="coach-rl-driver-") as tmp:
        state_path = Path(tmp) / "driver.json"
        env = {**os.environ, STATE_ENV: str(state_path)}
        child = subprocess.Popen(list(program), env=env, preexec_fn=_die_with_parent)

        def forward(signum: int, _frame: Any) -> None:
            if child.poll() is None:
                child.send_signal(signum)

        previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGHUP)}
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            returncode = child.wait()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if returncode in (0, 2, EXIT_HEAD_LOST) or not state_path.is_file():
            return returncode if returncode >= 0 else 128 - returncode
        message = _post_mortem(json.loads(state_path.read_text()), returncode)
    if message is None:
        return returncode if returncode >= 0 else 128 - returncode
    print(f"coach-rl {command}: error: {message}", file=sys.stderr, flush=True)
    return EXIT_HEAD_LOST


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    """The child gets SIGKILL when the parent dies (a supervisor killed with SIGKILL leaves no orphan driver)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
