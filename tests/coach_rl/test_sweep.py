"""The fair comparison: an exact env-step budget in the collector and the loop, and `coach-rl sweep` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import android_gym  # noqa: F401  (registers the env ids)
from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.policy import HFPolicy, PolicyFormat
from coach_rl.rollout import RolloutCollector
from coach_rl.sweep import (
    ALGORITHMS,
    Sweep,
    SweepPlan,
    check_equal_budgets,
    curve_points,
    markdown,
    steps_to_reach,
    write_tuned_configs,
)

TASKS = ["SystemWifiTurnOn", "SystemBluetoothTurnOff"]


@pytest.fixture(scope="module")
def policy():
    model, tokenizer = build_tiny_causal_lm(seed=0)
    fmt = PolicyFormat(action_format="index", max_history=1, action_space=())
    return HFPolicy(model, tokenizer, format=fmt, max_new_tokens=6)


def _envs(n: int):
    return [gym.make("AndroidSim-v0", task=TASKS, max_steps=4) for _ in range(n)]


@pytest.mark.parametrize("budget", [1, 5, 7, 9])
def test_collect_spends_exactly_the_step_budget(policy, budget: int):
    """Episodes under way at the budget end there, truncated and marked; none is started or stepped past it."""
    envs = _envs(3)
    try:
        batch = RolloutCollector(envs, policy).collect(8, seeds=100, max_steps=budget)
    finally:
        for env in envs:
            env.close()
    steps = sum(len(t.steps) for t in batch.trajectories)
    assert batch.stats.env_steps == steps == len(batch.records) == budget
    assert all(t.steps for t in batch.trajectories)  # an env reset but never stepped gives no episode
    cut = [t for t in batch.trajectories if t.info.get("budget_cut")]
    assert cut and all(t.truncated and t.success == 0.0 for t in cut)
    # 3 envs, 4 steps an episode at most: no more than 3 episodes can be under way when the budget runs out
    assert len(cut) <= 3


def test_a_budget_the_episodes_do_not_reach_changes_nothing(policy):
    envs = _envs(2)
    try:
        free = RolloutCollector(envs, policy).collect(2, seeds=7, greedy=True)
        capped = RolloutCollector(envs, policy).collect(2, seeds=7, greedy=True, max_steps=1000)
    finally:
        for env in envs:
            env.close()
    assert [len(t.steps) for t in free.trajectories] == [len(t.steps) for t in capped.trajectories]
    assert not any(t.info.get("budget_cut") for t in capped.trajectories)


def test_collect_rejects_a_budget_that_is_not_a_positive_integer(policy):
    envs = _envs(1)
    try:
        with pytest.raises(ValueError, match="max_steps must be a positive integer"):
            RolloutCollector(envs, policy).collect(1, max_steps=0)
    finally:
        envs[0].close()


def test_curve_points_are_spaced_by_the_ratio_below_the_budget():
    # 100 / 1.25 = 80, / 1.25^2 = 64, / 1.25^3 = 51.2
    assert curve_points(100, 3) == [51, 64, 80]
    assert curve_points(4, 10) == [1, 2, 3]  # rounded duplicates collapse; never the budget itself


def test_steps_to_reach_takes_the_steps_actually_spent_at_the_first_point_reaching_the_target():
    curve = [{"env_steps": 0, "sampled": {"mean": 0.40}},
             {"env_steps": 64, "actual_env_steps": 70, "sampled": {"mean": 0.55}},
             {"env_steps": 80, "actual_env_steps": 83, "sampled": {"mean": 0.61}},
             {"env_steps": 100, "actual_env_steps": 100, "sampled": {"mean": 0.60}}]
    assert steps_to_reach(curve, 0.60) == 83
    assert steps_to_reach(curve, 0.40) == 0
    assert steps_to_reach(curve, 0.62) is None


def test_unequal_budgets_are_refused():
    runs = {"coach": [{"run": "a", "env_steps": 96}], "grpo": [{"run": "b", "env_steps": 96}, {"run": "c",
                                                                                             "env_steps": 104}]}
    with pytest.raises(RuntimeError, match=r"unequal env-step budgets .* grpo c: 104"):
        check_equal_budgets(runs, 96)
    check_equal_budgets({"coach": runs["coach"]}, 96)


def test_a_plan_that_tunes_on_a_final_seed_or_overrides_a_swept_key_is_refused():
    with pytest.raises(ValueError, match="tuning seed 0 is one of the final seeds"):
        SweepPlan("smoke", "x", "out", 10, tune_seeds=[100, 0]).check()
    with pytest.raises(ValueError, match="learning_rate is set by the sweep itself"):
        SweepPlan("smoke", "x", "out", 10, overrides=["learning_rate=0.1"]).check()
    warnings = SweepPlan("smoke", "x", "out", 10, learning_rates=[1e-4, 2e-4], seeds=[0]).check()
    assert any("fewer than 4 values" in w for w in warnings) and any("at least 3" in w for w in warnings)


def test_a_later_stage_trying_the_configs_own_value_reuses_the_earlier_stages_run(tmp_path: Path):
    sweep = Sweep(SweepPlan("smoke", "x", str(tmp_path), 10))
    own = sweep.base("coach")["critic_learning_rate"]  # smoke's 0.0005
    first = sweep.job("tune", "coach", {"learning_rate": 1e-4}, 100).path
    assert sweep.job("tune", "coach", {"learning_rate": 1e-4, "critic_learning_rate": own}, 100).path == first
    other = sweep.job("tune", "coach", {"learning_rate": 1e-4, "critic_learning_rate": own / 2}, 100)
    assert other.path != first and f"critic_learning_rate={own / 2!r}" in " ".join(other.overrides)
    assert "learning_rate=0.0001" in other.overrides and "max_env_steps=10" in other.overrides


def test_a_finished_run_trained_with_another_config_is_not_reused(tmp_path: Path):
    """Run folders are named by the settings that differ from the swept config: after the config (or an override)
    changed, the same folder holds another run, and reusing it would score the wrong setting."""
    from coach_rl.configs import load_config
    from coach_rl.run import RunDir

    sweep = Sweep(SweepPlan("smoke", "x", str(tmp_path), 10, overrides=["critic_batch_size=4"]))
    assert "critic_batch_size=4" not in sweep.job("tune", "grpo", {"learning_rate": 1e-4}, 100).overrides  # no critic
    job = sweep.job("tune", "ppo", {"learning_rate": 1e-4}, 100)
    job.path.mkdir(parents=True)
    RunDir(job.path).write_config(load_config("smoke", job.overrides).to_dict())
    (job.path / "sweep_done.json").write_text(json.dumps({"seconds": 1.0, "settings": job.settings, "seed": 100}))
    sweep.run_jobs([job])  # the same configuration: reused, nothing runs
    # a TRL field written out at its default where the sweep leaves it implicit is the same configuration
    RunDir(job.path).write_config({**load_config("smoke", job.overrides).to_dict(), "num_iterations": 1})
    sweep.run_jobs([job])
    # nor does the folder it was written in (a sweep folder moved or linked elsewhere)
    elsewhere = load_config("smoke", [*job.overrides, "output_dir=/somewhere/else"]).to_dict()
    RunDir(job.path).write_config(elsewhere)
    sweep.run_jobs([job])
    changed = Sweep(SweepPlan("smoke", "x", str(tmp_path), 10, overrides=["critic_batch_size=2"]))
    again = changed.job("tune", "ppo", {"learning_rate": 1e-4}, 100)
    assert again.path == job.path
    with pytest.raises(ValueError, match=r"critic_batch_size \(this sweep: 2, the run: 4\).*use a new --out"):
        changed.run_jobs([again])


class _ScoredSweep(Sweep):
    """The sweep's search alone: each tuning run's validation score is read from a table instead of trained for."""

    def __init__(self, plan: SweepPlan, table: dict[float, float]) -> None:
        super().__init__(plan, echo=lambda line: None)
        self.table, self.ran = table, []

    def run_jobs(self, jobs):
        self.ran += [j.settings["learning_rate"] for j in jobs]

    def score(self, job):
        return self.table[round(job.settings["learning_rate"], 12)]


def test_a_best_learning_rate_at_the_grids_edge_is_tried_one_step_further(tmp_path: Path):
    plan = SweepPlan("smoke", "x", str(tmp_path), 10, algorithms=["grpo"], learning_rates=[1e-4, 2e-4, 4e-4])
    # the validation score still rises at the top edge (4e-4), then falls one step further (8e-4)
    sweep = _ScoredSweep(plan, {1e-4: 0.5, 2e-4: 0.6, 4e-4: 0.7, 8e-4: 0.65})
    result = sweep.tune("grpo")
    assert sweep.ran == pytest.approx([1e-4, 2e-4, 4e-4, 8e-4]) and result["best"] == {"learning_rate": 4e-4}
    # rising on past two extensions: stops there (extend_edges = 2) with the last tried
    sweep = _ScoredSweep(plan, {1e-4: 0.5, 2e-4: 0.6, 4e-4: 0.7, 8e-4: 0.75, 1.6e-3: 0.8})
    assert sweep.tune("grpo")["best"]["learning_rate"] == pytest.approx(1.6e-3)
    # the bottom edge extends downwards by the grid's ratio there; an interior best extends nothing
    sweep = _ScoredSweep(plan, {5e-5: 0.4, 1e-4: 0.7, 2e-4: 0.6, 4e-4: 0.5})
    assert sweep.tune("grpo")["best"]["learning_rate"] == pytest.approx(1e-4)
    assert sweep.ran == pytest.approx([1e-4, 2e-4, 4e-4, 5e-5])
    sweep = _ScoredSweep(SweepPlan("smoke", "x", str(tmp_path), 10, learning_rates=[1e-4, 2e-4, 4e-4],
                                   extend_edges=0), {1e-4: 0.5, 2e-4: 0.6, 4e-4: 0.7})
    assert sweep.tune("grpo")["best"] == {"learning_rate": 4e-4} and len(sweep.ran) == 3


class _KeyScoredSweep(Sweep):
    """The search alone, each tuning run scored by a function of its settings."""

    def __init__(self, plan: SweepPlan, score) -> None:
        super().__init__(plan, echo=lambda line: None)
        self.by, self.ran = score, []

    def run_jobs(self, jobs):
        self.ran += [dict(j.settings) for j in jobs]

    def score(self, job):
        return self.by(job.settings)


def test_further_stages_try_any_field_at_the_best_so_far_and_may_revisit_the_learning_rate(tmp_path: Path):
    plan = SweepPlan("smoke", "x", str(tmp_path), 10, algorithms=["coach", "grpo"], learning_rates=[1e-4, 2e-4],
                     critic_learning_rates=[], w_p=[], extend_edges=0,
                     stages=["coach:actor_states_per_iteration=8,32", "coach:learning_rate=5e-5,1e-4",
                             "grpo:num_iterations=1,2"])
    # coach: 2e-4 best at the config's states; 32 states beat 8; then at 32 states the smaller rate wins
    table = {(1e-4, None): 0.5, (2e-4, None): 0.6, (2e-4, 8): 0.55, (2e-4, 32): 0.7, (5e-5, 32): 0.65,
             (1e-4, 32): 0.75}
    sweep = _KeyScoredSweep(plan, lambda st: table[(st["learning_rate"], st.get("actor_states_per_iteration"))])
    result = sweep.tune("coach")
    assert result["best"] == {"learning_rate": 1e-4, "actor_states_per_iteration": 32}
    # the revisited learning rate's incumbent (2e-4 at 32 states) competes unlisted, in the folder of its earlier run
    assert [(r["learning_rate"], r.get("actor_states_per_iteration")) for r in sweep.ran] == [
        (1e-4, None), (2e-4, None), (2e-4, 8), (2e-4, 32), (2e-4, 32), (5e-5, 32), (1e-4, 32)]
    job = sweep.job("tune", "coach", result["best"], 100)
    assert "actor_states_per_iteration=32" in job.overrides and "learning_rate=0.0001" in job.overrides
    # another label's stages are its own; values are read as YAML scalars (an int stays an int)
    assert plan.extra_stages("grpo") == [("num_iterations", [1, 2])]
    assert plan.extra_stages("coach")[1] == ("learning_rate", [5e-5, 1e-4])


def test_with_several_tuning_seeds_a_setting_is_scored_by_its_mean_over_them(tmp_path: Path):
    plan = SweepPlan("smoke", "x", str(tmp_path), 10, algorithms=["grpo"], learning_rates=[1e-4, 2e-4],
                     tune_seeds=[100, 101], extend_edges=0)
    # 2e-4 wins on seed 100 but collapses on seed 101: the mean picks 1e-4
    table = {(1e-4, 100): 0.70, (1e-4, 101): 0.68, (2e-4, 100): 0.75, (2e-4, 101): 0.10}
    sweep = _KeyScoredSweep(plan, None)
    sweep.score = lambda job: table[(job.settings["learning_rate"], job.seed)]
    result = sweep.tune("grpo")
    assert result["best"] == {"learning_rate": 1e-4}
    assert [t["per_tune_seed"] for t in result["tried"]] == [[0.70, 0.68], [0.75, 0.10]]
    assert result["tried"][0]["validation_sampled_success"] == pytest.approx(0.69)
    first, second = sweep.trial("grpo", {"learning_rate": 1e-4})
    assert second.path == first.path.with_name(first.path.name + "-tuneseed101") and "seed=101" in second.overrides


def test_a_stage_trying_a_trl_fields_default_reuses_the_run_at_the_configs_own_value(tmp_path: Path):
    plan = SweepPlan("smoke", "x", str(tmp_path), 10, algorithms=["grpo"], stages=["grpo:num_iterations=1,2"])
    sweep = Sweep(plan)
    first = sweep.job("tune", "grpo", {"learning_rate": 1e-4}, 100).path
    assert sweep.job("tune", "grpo", {"learning_rate": 1e-4, "num_iterations": 1}, 100).path == first
    assert sweep.job("tune", "grpo", {"learning_rate": 1e-4, "num_iterations": 2}, 100).path != first
    with pytest.raises(ValueError, match="'num_iteration', which is no config field"):
        Sweep(SweepPlan("smoke", "x", str(tmp_path), 10, algorithms=["grpo"],
                        stages=["grpo:num_iteration=1,2"])).base("grpo")


def test_a_malformed_stage_or_one_the_sweep_sets_itself_is_refused():
    with pytest.raises(ValueError, match="LABEL:KEY=V1,V2"):
        SweepPlan("smoke", "x", "out", 10, stages=["coach:num_iterations"]).check()
    with pytest.raises(ValueError, match="'ppo', which is not one of the algorithms"):
        SweepPlan("smoke", "x", "out", 10, algorithms=["coach"], stages=["ppo:num_iterations=1,2"]).check()
    with pytest.raises(ValueError, match="seed is set by the sweep itself"):
        SweepPlan("smoke", "x", "out", 10, stages=["coach:seed=1,2"]).check()


def test_training_stops_at_exactly_max_env_steps_and_evaluates_at_the_points(tmp_path: Path):
    from coach_rl.loop import train

    # smoke: 4 episodes of at most 6 steps an iteration, so the budget falls inside the second iteration or later
    result = train("smoke", [f"output_dir={tmp_path}", "total_iterations=100", "max_env_steps=41",
                             "eval_at_env_steps=5", "sft_max_steps=2"], progress=False)
    assert result.state.env_steps == 41 and result.state.iteration >= 2
    steps = [json.loads(p.read_text())["meta"]["env_steps"] for p in tmp_path.glob("eval_steps*.json")]
    assert len(steps) == 1 and 5 <= steps[0] <= 24  # the evaluation after the (first) iteration that reached 5
    assert json.loads((tmp_path / "eval_after.json").read_text())["meta"]["env_steps"] == 41


@pytest.mark.slow
def test_sweep_tunes_on_validation_and_trains_every_algorithm_on_one_budget(tmp_path: Path):
    """`coach-rl sweep` on the smoke config: the best setting is the validation argmax, every final run spends the
    budget exactly, the curves and costs are reported and the tuned configs load."""
    from coach_rl.cli import main
    from coach_rl.configs import load_config

    warm = tmp_path / "warm"
    assert main(["warmup", "--config", "smoke", f"output_dir={warm}", "sft_max_steps=4"]) == 0
    out = tmp_path / "sweep"
    write = tmp_path / "configs"
    write.mkdir()
    budget = 21
    args = ["sweep", "--config", "smoke", "eval_samples_per_instance=2", "--init-from",
            str(warm / "checkpoints" / "iter-000000"), "--env-steps", str(budget), "--out", str(out),
            "--algorithms", "coach,grpo", "--learning-rates", "1e-4,3e-3", "--critic-learning-rates", "",
            "--w-p", "", "--seeds", "0,1", "--validation-instances", "1", "--validation-samples", "2",
            "--curve-points", "1", "--jobs", "2", "--extend-edges", "0", "--write-configs", str(write)]
    assert main(args) == 0
    result = json.loads((out / "sweep.json").read_text())
    assert result["metric"] == "sampled" and result["curve_points"] == [17]
    for label in ("coach", "grpo"):
        a = result["algorithms"][label]
        assert [r["env_steps"] for r in a["runs"]] == [budget, budget]
        scores = {t["settings"]["learning_rate"]: t["validation_sampled_success"] for t in a["tuning"]}
        assert set(scores) == {1e-4, 3e-3}
        best = max(scores, key=lambda lr: (scores[lr], -[1e-4, 3e-3].index(lr)))
        assert a["settings"] == {"learning_rate": best}
        # the validation scores come from the validation instances, never the test ones
        tuned = json.loads((out / "tune" / label / f"learning_rate{best:g}" / "eval_after_sampled.json").read_text())
        assert tuned["overall"]["success_rate"] == scores[best]
        assert tuned["meta"]["env_steps"] == budget
        assert [p["env_steps"] for p in a["curve"]] == [0, 17, budget]
        assert a["final"]["sampled"]["episodes"] == 2 * len(load_config("smoke").loop.eval_tasks or
                                                            load_config("smoke").coach.tasks) * 2
        assert a["wall_seconds"] > 0 and a["policy_replies"] >= budget
        config = load_config(str(write / f"smoke-{label}.yaml"))
        assert config.loop.algorithm == ALGORITHMS[label]["algorithm"] and config.coach.learning_rate == best
    assert result["algorithms"]["coach"]["critic_scores"] > 0 == result["algorithms"]["grpo"]["critic_scores"]
    assert "| coach |" in (out / "report.md").read_text()
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a second call finds every run finished and only reports again
    assert main(args) == 0


def test_a_stage_with_one_value_spends_no_validation_runs_and_the_report_says_it_was_not_tuned(tmp_path: Path):
    plan = SweepPlan("smoke", "x", str(tmp_path), 10, algorithms=["coach"], learning_rates=[1e-4],
                     critic_learning_rates=[3e-5], w_p=[], stages=["coach:num_generations=8"])
    sweep = _KeyScoredSweep(plan, lambda st: 0.5)
    result = sweep.tune("coach")
    assert sweep.ran == [] and result["tried"] == []
    assert result["best"] == {"learning_rate": 1e-4, "critic_learning_rate": 3e-5, "num_generations": 8}
    # a later stage with two values still runs them, at the single values given before it
    plan.stages = ["coach:num_generations=4,8"]
    sweep = _KeyScoredSweep(plan, lambda st: st["num_generations"] / 10)
    assert sweep.tune("coach")["best"]["num_generations"] == 8
    assert [r["learning_rate"] for r in sweep.ran] == [1e-4, 1e-4]
    # the report and the written config say the settings were given, not chosen; with no baseline in the sweep
    # there is nothing to reach
    entry = {"mean": 0.7, "sd": 0.01, "ci_low": 0.68, "ci_high": 0.72}
    result = {"config": "main", "env_steps": 576, "seeds": [0], "tune_seeds": [100], "metric": "sampled", "best_baseline": None,
              "provenance": {"command": "coach-rl sweep ...", "date": "2026-11-29", "commit": "abc1234"},
              "algorithms": {"coach": {"settings": {"learning_rate": 1e-4}, "tuning": [],
                                       "final": {"sampled": entry, "greedy": entry}, "wall_seconds": 90,
                                       "emulator_wall_seconds": 700, "policy_replies": 2500, "critic_scores": 2000,
                                       "curve": [{"env_steps": 0, "sampled": entry, "actual_env_steps": 0}]}}}
    report = markdown(result)
    assert "- coach: not tuned: one value was given for every setting" in report
    assert "| no baseline ran |" in report and "not reached" not in report
    (written,) = write_tuned_configs(result, tmp_path / "tuned")
    assert "NOT tuned" in written.read_text() and "chosen by" not in written.read_text()

