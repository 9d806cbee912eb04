"""The run report: plots and report.md from a run folder's metrics.jsonl and evaluation JSON files."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from android_gym.actions import Finished, OpenApp
from android_gym.trajectory import Step, Trajectory
from coach_rl.evaluation import evaluate_trajectories
from coach_rl.report import load_evaluations, plot_metrics, write_report
from coach_rl.run import RunDir


def _eval(successes: int, n: int):
    trajs = [Trajectory(task="T", instruction="x", steps=[Step(ui="a", action=OpenApp("Clock")),
                                                          Step(ui="b", action=Finished())],
                        success=float(i < successes), seed=i) for i in range(n)]
    return evaluate_trajectories(trajs, meta={"seeds": list(range(n))})


def _fill(run: RunDir, iterations: int = 3) -> None:
    run.write_config({"algorithm": "coach", "tasks": ["T"], "num_generations": 4, "seed": 1})
    for i in range(1, iterations + 1):
        run.log_metrics({"kind": "train", "iteration": i, "env_steps": 10 * i, "episodes": 4 * i,
                         "rollout/success_rate": 0.2 * i, "rollout/return_mean": 0.1 * i,
                         "critic/loss": 1.0 / i, "actor/loss": 0.01, "time/env": 1.0, "time/generation": 2.0,
                         "time/critic": 0.5, "time/actor": 1.5, "time/iteration": 5.0, "wall_time": 5.0 * i})
    (run.path / "eval_before.json").write_text(_eval(2, 10).to_json())
    (run.path / "eval_after.json").write_text(_eval(7, 10).to_json())


def test_write_report_makes_markdown_and_pngs(tmp_path: Path):
    run = RunDir(tmp_path / "run")
    _fill(run)
    path = write_report(run)
    text = path.read_text()
    assert "## Evaluation" in text and "### before" in text and "### after" in text
    assert "Success rate 20.0% -> 70.0% (+50.0 points)" in text
    assert "3 iteration(s), 30 environment steps" in text
    for stem in ("success_rate", "returns", "critic_loss", "env_steps", "wall_time"):
        png = run.path / "plots" / f"{stem}.png"
        assert f"plots/{stem}.png" in text
        with Image.open(png) as img:
            assert img.format == "PNG" and img.size[0] > 100
    assert list(load_evaluations(run)) == ["before", "after"]


def test_plots_skip_missing_metrics_and_torn_lines(tmp_path: Path):
    run = RunDir(tmp_path / "run")
    run.log_metrics({"kind": "train", "iteration": 1, "env_steps": 5})
    with open(run.metrics_path, "a") as fh:
        fh.write('{"kind": "train", "iteration": 2, "env_st')  # a line cut by kill -9
    assert len(run.read_metrics()) == 1
    written = plot_metrics(run.read_metrics(), tmp_path / "plots")
    assert [p.stem for p in written] == ["env_steps"]
    # a report of a run that has no config or evaluation yet still renders
    assert "1 iteration(s)" in write_report(run).read_text()
