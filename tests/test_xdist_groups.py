"""tools/test.sh's --dist loadgroup really keeps tests/conftest.py's one-worker modules on one worker.

pytest-xdist 3.8 groups by an "@group" suffix of the item's ``_nodeid``, which pytest 9 no longer reads: the
"ports" modules ran on every worker at once, and test_emulator_pool's boot-failure check met another worker's
emulator on its port. This runs a real two-worker session and reads which worker ran what.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("xdist", reason="pytest-xdist not installed (tools/requirements-dev.txt)")


def test_one_worker_scope_names_the_ports_modules(pytestconfig):
    conftest = next(p for p in pytestconfig.pluginmanager.get_plugins() if hasattr(p, "one_worker_scope"))
    one_worker_scope = conftest.one_worker_scope
    assert one_worker_scope("tests/android_gym/test_emulator_pool.py::test_x") == "ports"
    assert one_worker_scope("tests/coach_rl/test_distributed.py::T::test_y[a/b]") == "ports"
    assert one_worker_scope("tests/android_gym/test_actions_format.py::test_exact_strings[a]") is None


@pytest.mark.slow
def test_ports_modules_run_on_one_worker_under_loadgroup():
    # four quick tests of a "ports" module (no adb, no emulator) and one other module's many for the second worker
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-v",
               "tests/android_gym/test_emulator_pool.py", "tests/android_gym/test_actions_format.py",
               "-k", "headless_flags or find_port_pair or arguments_are_checked or listening_sessions or exact_strings"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = re.findall(r"^\[(gw\d+)\] .*? PASSED (\S+?)::", done.stdout, flags=re.M)
    pool_workers = {worker for worker, path in ran if path.endswith("test_emulator_pool.py")}
    assert sum(path.endswith("test_emulator_pool.py") for _, path in ran) == 4
    assert len(pool_workers) == 1, f"the 'ports' module ran on {sorted(pool_workers)}"
    assert {worker for worker, _ in ran} == {"gw0", "gw1"}  # the other module still spreads
