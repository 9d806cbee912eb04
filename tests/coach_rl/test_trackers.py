"""report_to: the run's metric records mirrored to TensorBoard (read back with TensorBoard's own reader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coach_rl.trackers import TrackerError, open_trackers, resolve_report_to, scalars_of


def _event_scalars(log_dir: Path) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_report_to_names_are_checked():
    assert resolve_report_to("none") == [] and resolve_report_to(None) == [] and resolve_report_to([]) == []
    assert resolve_report_to(["tensorboard", "TensorBoard"]) == ["tensorboard"]
    assert "tensorboard" in resolve_report_to("all")
    with pytest.raises(TrackerError, match="comet.*one of none, all, tensorboard, wandb"):
        resolve_report_to("comet")


def test_records_map_to_scalars_at_their_iteration():
    scalars, step = scalars_of({"kind": "train", "iteration": 3, "actor/loss": 0.5, "rollout/successes": 2,
                                "note": "text", "flag": True, "bad": float("nan")})
    assert step == 3 and scalars == {"actor/loss": 0.5, "rollout/successes": 2.0}
    scalars, step = scalars_of({"kind": "eval", "label": "after", "at_iteration": 5, "success_rate": 0.25})
    assert step == 5 and scalars == {"eval/success_rate": 0.25}
    assert scalars_of({"kind": "checkpoint"}) is None
    # validation_every: the starting policy's validation at step 0; later ones ride on their iteration's train record
    scalars, step = scalars_of({"kind": "validation", "iteration": 0, "validation/success_rate": 0.5,
                                "validation/stopped_early": False})
    assert step == 0 and scalars == {"validation/success_rate": 0.5}
    assert scalars_of({"kind": "validation", "iteration": 2, "validation/success_rate": 0.5}) is None


def test_tensorboard_gets_every_record_and_a_resume_purges_redone_iterations(tmp_path: Path):
    first = open_trackers("tensorboard", tmp_path)
    for i in (1, 2, 3):
        first.log({"kind": "train", "iteration": i, "actor/loss": float(i)})
    first.close()
    # the run was killed after the checkpoint of iteration 2; the resumed run redoes iteration 3 differently
    resumed = open_trackers(["tensorboard"], tmp_path, resumed_from=2)
    resumed.log({"kind": "train", "iteration": 3, "actor/loss": 30.0})
    resumed.log({"kind": "eval", "label": "after", "at_iteration": 3, "success_rate": 0.5})
    resumed.close()
    got = _event_scalars(tmp_path / "tensorboard")
    assert got["actor/loss"] == [(1, 1.0), (2, 2.0), (3, 30.0)]
    assert got["eval/success_rate"] == [(3, 0.5)]


@pytest.mark.slow
def test_a_training_run_with_report_to_tensorboard(tmp_path: Path, monkeypatch):
    from coach_rl.configs import load_config
    from coach_rl.loop import train

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = train(load_config("smoke", [f"output_dir={tmp_path / 'run'}", "total_iterations=1",
                                         "report_to=tensorboard", "eval_instances_per_task=1"]), progress=False)
    assert list(work.iterdir()) == []  # nothing in the working folder (TRL's callbacks wrote runs/<date>_<host>)
    got = _event_scalars(result.run_dir / "tensorboard")
    assert [step for step, _ in got["rollout/success_rate"]] == [1]
    assert {"critic/loss", "actor/loss", "time/env", "env_steps", "eval/success_rate"} <= set(got)
    assert [step for step, _ in got["eval/success_rate"]] == [0, 1]  # before and after training


def test_wandb_offline_run_keeps_one_run_id_across_a_resume(tmp_path: Path, monkeypatch):
    pytest.importorskip("wandb", reason="wandb is optional (pip install wandb); not part of the dev requirements")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.chdir(tmp_path)
    first = open_trackers("wandb", tmp_path, config={"algorithm": "coach"})
    first.log({"kind": "train", "iteration": 1, "actor/loss": 0.5})
    first.close()
    run_id = (tmp_path / "wandb_run_id").read_text()
    resumed = open_trackers("wandb", tmp_path, resumed_from=1)
    resumed.log({"kind": "train", "iteration": 2, "actor/loss": 0.4})
    resumed.close()
    assert (tmp_path / "wandb_run_id").read_text() == run_id
    runs = sorted((tmp_path / "wandb").glob(f"offline-run-*-{run_id}"))
    assert len(runs) == 2 and all((r / f"run-{run_id}.wandb").stat().st_size > 0 for r in runs)
