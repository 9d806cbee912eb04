"""End to end on Ray: `coach-rl train collector=ray` with 3 device workers, and a driver killed with SIGKILL resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="collector=ray needs Ray: pip install 'coach-rl[ray]'")
pytestmark = pytest.mark.slow

_ARGS = ["--config", "smoke", "collector=ray", "num_workers=3", "ray_num_cpus=2", "eval_instances_per_task=0",
         "checkpoint_every=1"]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from coach_rl.cli import main; raise SystemExit(main())", "train", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def _train_records(run: Path) -> list[dict]:
    path = run / "metrics.jsonl"
    if not path.is_file():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("kind") == "train"]


def test_training_on_three_ray_workers_survives_a_killed_driver(tmp_path: Path):
    run = tmp_path / "ray-run"
    args = [*_ARGS, f"output_dir={run}", "total_iterations=4", "--no-progress"]
    proc = subprocess.Popen(_cli(*args), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 420
    try:
        while len(_train_records(run)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert proc.poll() is None, f"the run ended early: {proc.stderr.read()[-3000:] if proc.stderr else ''}"
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and the Ray cluster it started, at once
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done_before = len(_train_records(run))
    assert done_before >= 2
    again = subprocess.run(_cli(*args), env=_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    summary = json.loads(again.stdout[again.stdout.index("{"):])
    assert summary["iterations"] == 4 and summary["resumed_from"] >= 2
    records = _train_records(run)
    assert [r["iteration"] for r in records] == [1, 2, 3, 4]  # redone iterations replace the lost ones
    for record in records:  # three workers played every iteration's episodes; staleness is reported
        assert record["collector/workers_alive"] == 3.0 and record["rollout/episodes"] == 4
        assert "collector/staleness_mean" in record
    from coach_rl.replay import ReplayBuffer

    replay = ReplayBuffer(run / "replay")
    assert replay.num_trajectories == sum(r["rollout/episodes"] for r in records)
