"""Shared fixtures: where the third-party real data lives, and skipping cleanly when it does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tiny models on a 2-core machine: more torch threads than cores spin-wait and slow tests ~30x
# when anything else runs (measured); set before torch is first imported.
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
REALDATA = Path(os.environ.get("ANDROID_COACH_REALDATA", REPO_ROOT.parent / "shared" / "realdata"))


# tools/test.sh runs the suite on several pytest-xdist workers with --dist loadgroup. These modules start emulator
# pools (console/adbd ports picked from 5554 up), an adb server or Ray clusters (a session-wide ray.init, `ray start`
# nodes): they share one worker, so two of them never race for a port or for each other's Ray processes.
_ONE_WORKER = {"test_emulator_pool.py", "test_adb_device.py", "test_distributed.py", "test_ray_multinode.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in _ONE_WORKER:
            item.add_marker(pytest.mark.xdist_group("ports"))


@pytest.fixture(scope="session")
def realdata() -> Path:
    """Path to ../shared/realdata; tests using it skip (with the reason) when it is absent."""
    if not REALDATA.is_dir():
        pytest.skip(f"real third-party data not found at {REALDATA} (set ANDROID_COACH_REALDATA or check out shared/)")
    return REALDATA
