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


ONE_WORKER_GROUP = "ports"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in _ONE_WORKER:
            item.add_marker(pytest.mark.xdist_group(ONE_WORKER_GROUP))


def one_worker_scope(nodeid: str) -> str | None:
    """The group a test's node id belongs to when its module is one of ``_ONE_WORKER`` (else None)."""
    return ONE_WORKER_GROUP if nodeid.split("::", 1)[0].rsplit("/", 1)[-1] in _ONE_WORKER else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """--dist loadgroup's scheduler, grouping ``_ONE_WORKER``'s modules by their node ids.

    pytest-xdist (3.8) groups a test by an "@group" suffix its workers append to the item's ``_nodeid``; pytest 9
    keeps node ids elsewhere (``_id``), so the suffix never reached the scheduler and every "ports" module ran on
    every worker at once: two workers' emulator pools booted on the same ports (test_emulator_pool's boot failure
    met the other worker's emulator on 5621). The controller decides the groups here from the plain node ids.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class OneWorkerGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return one_worker_scope(nodeid) or super()._split_scope(nodeid)

    return OneWorkerGroups(config, log)


@pytest.fixture(scope="session")
def realdata() -> Path:
    """Path to ../shared/realdata; tests using it skip (with the reason) when it is absent."""
    if not REALDATA.is_dir():
        pytest.skip(f"real third-party data not found at {REALDATA} (set ANDROID_COACH_REALDATA or check out shared/)")
    return REALDATA
