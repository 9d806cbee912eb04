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
    assert "Greedy success 20.0% -> 70.0% (+50.0 points)" in text
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


def test_summarize_runs_judges_the_sampled_gain_against_twice_the_seed_spread(tmp_path: Path):
    from coach_rl.report import summarize_runs

    runs = []
    # sampled success before 40% on every seed; after 60%, 65%, 70% (gains 20, 25, 30 points)
    for i, after in enumerate((12, 13, 14)):
        run = RunDir(tmp_path / f"seed{i}")
        _fill(run, iterations=1)
        (run.path / "eval_before_sampled.json").write_text(_eval(8, 20).to_json())
        (run.path / "eval_after_sampled.json").write_text(_eval(after, 20).to_json())
        runs.append(run)
    out = summarize_runs(runs)
    assert [round(r["sampled_gain"], 12) for r in out["runs"]] == [0.2, 0.25, 0.3]
    assert abs(out["sampled_gain"]["mean"] - 0.25) < 1e-12
    # spread = max(std of the after-scores, std of the gains) = std(0.6, 0.65, 0.7) = 0.05; 0.25 > 2 x 0.05
    assert abs(out["sampled_spread"] - 0.05) < 1e-12
    assert out["sampled_gain_exceeds_twice_spread"] is True and out["sampled_gain_positive_every_run"] is True
    assert out["tasks_lost"] == []  # greedy 20% before: the warm-up solved no task on every instance
    (runs[0].path / "eval_before.json").write_text(_eval(10, 10).to_json())  # seed 0: T solved before, 70% after
    assert summarize_runs(runs)["tasks_lost"] == ["T"]
    assert list(load_evaluations(runs[0])) == ["before", "before_sampled", "after", "after_sampled"]
