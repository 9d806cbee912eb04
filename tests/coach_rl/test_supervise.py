"""`coach-rl train` on an existing Ray cluster runs its driver in a child process: a lost head is reported even
when Ray ends the driver itself (``_exit``, nothing on stderr), as it does to a driver attached to the head's raylet.

The child here is a small Python process that does what such a driver does: it notes its state (as the training
loop does once connected), writes Ray's line to its core-driver log and leaves with ``os._exit(1)``. The real
thing, on a real cluster whose head dies, is in test_ray_multinode.py.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from coach_rl.distributed.local_cluster import free_ports
from coach_rl.distributed.supervise import EXIT_HEAD_LOST, supervise
from coach_rl.run import RunDir

_CHILD = """
import json, os, sys
from pathlib import Path
logs, run, address = sys.argv[1:4]
Path(os.environ["COACH_RL_DRIVER_STATE"]).write_text(json.dumps(
    {"pid": os.getpid(), "gcs_address": address, "logs_dir": logs, "run_dir": run, "spool_dir": ""}))
Path(logs, f"python-core-driver-01000000ffffffff_{os.getpid()}.log").write_text(
    "[2026-11-26 15:13:17,851 W 1 1] connection.cc:216: The connection to the plasma store is failed. "
    "Terminate the process. Status: IOError: Broken pipe\\n")
os._exit(1)
"""


def _run_folder(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    with RunDir(run).checkpoint(3, {"algorithm": "grpo"}):
        pass
    (run / "spool").mkdir()
    for name in ("a-w0-e1.pkl", "a-w1-e2.pkl"):
        (run / "spool" / name).write_bytes(b"")
    return run


def test_a_driver_ended_by_ray_while_the_head_is_gone_gets_one_error_line(tmp_path: Path, capfd) -> None:
    run = _run_folder(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    address = f"127.0.0.1:{free_ports(1)[0]}"  # nothing listens: the GCS is gone
    rc = supervise([], program=[sys.executable, "-c", _CHILD, str(logs), str(run), address])
    assert rc == EXIT_HEAD_LOST
    error = capfd.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"coach-rl train: error: lost the Ray head node: its GCS at {address} refuses "
                            "connections"), error
    assert "Ray ended the driver (exit status 1: 'connection.cc:216: The connection to the plasma store is failed. " \
           "Terminate the process." in error
    assert f"The run folder {run} keeps checkpoint iter-000003 and 2 spooled episodes" in error
    assert "run the same command again, with ray_address=<new head host:port> if it moved" in error


def test_a_driver_that_fails_while_the_head_answers_keeps_its_own_exit_status(tmp_path: Path, capfd) -> None:
    run = _run_folder(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    with socket.socket() as gcs:  # the head answers: whatever ended the driver, it was not the head's loss
        gcs.bind(("127.0.0.1", 0))
        gcs.listen()
        address = f"127.0.0.1:{gcs.getsockname()[1]}"
        rc = supervise([], program=[sys.executable, "-c", _CHILD, str(logs), str(run), address])
    assert rc == 1
    assert "lost the Ray head node" not in capfd.readouterr().err


def test_the_exit_status_of_a_driver_that_ends_normally_passes_through(capfd) -> None:
    assert supervise([], program=[sys.executable, "-c", "print('trained')"]) == 0
    assert supervise([], program=[sys.executable, "-c", "raise SystemExit(2)"]) == 2
    assert capfd.readouterr().out == "trained\n"
