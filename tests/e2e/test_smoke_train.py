"""End to end: `coach-rl train --config smoke` runs the whole pipeline, and a run killed with SIGKILL resumes exactly."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

pytestmark = pytest.mark.slow

# Keys whose values depend on the clock, not on the computation.
_CLOCK = ("time/", "cpu/", "wall_time", "seconds", "step_time")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from coach_rl.cli import main; raise SystemExit(main())", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def _train_records(run: Path) -> dict[int, dict]:
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return {r["iteration"]: r for r in records if r.get("kind") == "train"}


def test_smoke_config_runs_the_whole_pipeline(tmp_path: Path):
    run = tmp_path / "smoke"
    started = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(_cli("train", "--config", "smoke", "-o", str(run), "--no-progress"), env=_env(),
                          capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert summary["iterations"] == 2 and summary["env_steps"] > 0 and summary["resumed_from"] is None
    assert summary["success_before"] is not None and summary["success_after"] is not None
    for name in ("config.yaml", "metrics.jsonl", "eval_before.json", "eval_after.json", "report.md",
                 "plots/success_rate.png", "plots/critic_loss.png", "checkpoints/LATEST"):
        assert (run / name).exists(), name
    records = _train_records(run)
    assert sorted(records) == [1, 2]
    for r in records.values():
        assert r["rollout/episodes"] == 4 and r["critic/steps"] >= 1 and r["actor/steps"] >= 1
        assert all(k in r for k in ("critic/loss", "actor/loss", "time/env", "time/generation", "time/actor"))
    assert "Greedy success" in (run / "report.md").read_text()
    # one torch thread: its CPU time is the wall time it takes on an otherwise idle machine
    assert cpu < 60, f"the smoke run used {cpu:.1f} s of CPU (wall {seconds:.1f} s)"
    print(f"smoke run: {seconds:.1f} s wall, {cpu:.1f} s CPU")
    # a second invocation finds the finished run and only re-reports it
    again = subprocess.run(_cli("train", "--config", "smoke", "-o", str(run), "--no-progress"), env=_env(),
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout[again.stdout.index("{"):])["resumed_from"] == 2
    assert sorted(_train_records(run)) == [1, 2]


def test_kill_9_mid_run_resumes_with_the_same_buffer_optimizer_and_rng(tmp_path: Path):
    args = ["--config", "smoke", "total_iterations=3", "eval_instances_per_task=0", "--no-progress"]
    full, killed = tmp_path / "full", tmp_path / "killed"
    proc = subprocess.run(_cli("train", *args, "-o", str(full)), env=_env(), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]

    victim = subprocess.Popen(_cli("train", *args, "-o", str(killed)), env=_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 600
        while 1 not in (_train_records(killed) if (killed / "metrics.jsonl").exists() else {}):
            assert victim.poll() is None, "the run ended before it could be killed"
            assert time.time() < deadline
            time.sleep(0.1)
        time.sleep(0.5)  # into iteration 2: its rollout is under way, its checkpoint not written
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
    finally:
        if victim.poll() is None:
            victim.kill()
    assert max(_train_records(killed)) < 3

    resumed = subprocess.run(_cli("train", *args, "-o", str(killed)), env=_env(), capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout[resumed.stdout.index("{"):])["resumed_from"] >= 1

    a, b = _train_records(full), _train_records(killed)
    assert sorted(a) == sorted(b) == [1, 2, 3]
    for it in (1, 2, 3):
        keys = [k for k in a[it] if not any(k.startswith(c) or c in k for c in _CLOCK)]
        diff = {k: (a[it][k], b[it].get(k)) for k in keys if a[it][k] != b[it].get(k)}
        assert not diff, f"iteration {it} differs after the resume: {diff}"
    # the same weights at the end: policy and critic
    for part in ("policy/model.safetensors", "algorithm/critic/critic.safetensors"):
        wa = load_file(str(full / "checkpoints" / "iter-000003" / part))
        wb = load_file(str(killed / "checkpoints" / "iter-000003" / part))
        assert wa.keys() == wb.keys()
        assert all(torch.equal(wa[k], wb[k]) for k in wa), part
    # and the same replay buffer
    shards_a = sorted(p.name.split("-")[0] for p in (full / "replay").glob("*.parquet"))
    shards_b = sorted(p.name.split("-")[0] for p in (killed / "replay").glob("*.parquet"))
    assert shards_a == shards_b


def test_kill_9_keeps_the_best_policy_by_validation_and_its_score(tmp_path: Path):
    """validation_every: a run killed between checkpoints resumes with the best-so-far iteration, score and policy
    of its checkpoint, and ends with the same validation curve, best policy and best record as an unkilled run."""
    args = ["--config", "smoke", "total_iterations=4", "checkpoint_every=2", "eval_instances_per_task=0",
            "validation_every=1", "validation_instances_per_task=1", "validation_samples_per_instance=2",
            "--no-progress"]
    full, killed = tmp_path / "full", tmp_path / "killed"
    proc = subprocess.run(_cli("train", *args, "-o", str(full)), env=_env(), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout[proc.stdout.index("{"):])["best_iteration"] is not None

    victim = subprocess.Popen(_cli("train", *args, "-o", str(killed)), env=_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 600
        while 3 not in (_train_records(killed) if (killed / "metrics.jsonl").exists() else {}):
            assert victim.poll() is None, "the run ended before it could be killed"
            assert time.time() < deadline
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)  # iteration 3 validated (best/ may be newer than checkpoint 2)
        victim.wait(timeout=30)
    finally:
        if victim.poll() is None:
            victim.kill()
    assert not (killed / "checkpoints" / "iter-000004").exists()

    resumed = subprocess.run(_cli("train", *args, "-o", str(killed)), env=_env(), capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads(resumed.stdout[resumed.stdout.index("{"):])
    assert summary["resumed_from"] == 2

    def validations(run: Path) -> list[dict]:
        records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
        return [{k: v for k, v in r.items() if not any(k.startswith(c) or c in k for c in _CLOCK)}
                for r in records if r.get("kind") in ("validation", "best")]

    assert [r["iteration"] for r in validations(full) if r["kind"] == "validation"] == [0, 1, 2, 3, 4]
    assert validations(killed) == validations(full)
    state_a = torch.load(full / "checkpoints" / "iter-000004" / "loop_state.pt", weights_only=True)["state"]
    state_b = torch.load(killed / "checkpoints" / "iter-000004" / "loop_state.pt", weights_only=True)["state"]
    for key in ("best_iteration", "best_score", "validations", "validations_since_best", "validation_env_steps"):
        assert state_a[key] == state_b[key], key
    info_a = json.loads((full / "best" / "best.json").read_text())
    info_b = json.loads((killed / "best" / "best.json").read_text())
    assert info_a["iteration"] == info_b["iteration"] == state_a["best_iteration"]
    wa, wb = load_file(str(full / "best" / "policy" / "model.safetensors")), load_file(
        str(killed / "best" / "policy" / "model.safetensors"))
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
