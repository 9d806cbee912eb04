"""tools/bench/ssma_vs_sssa.py: the study's summary (common target, env steps and seconds to reach it, the
efficiency ratios of the paper's headline) against hand-computed numbers, and --merge of per-seed folders."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def study(load_bench_script):
    return load_bench_script("ssma_vs_sssa")


def _run(variant: str, seed: int, points: list[tuple[int, float, float]]) -> dict:
    """A finished run: evaluations at (env steps, training seconds, success)."""
    curve = [{"iteration": i, "env_steps": s, "train_seconds": t, "success_rate": r}
             for i, (s, t, r) in enumerate(points)]
    return {"variant": variant, "seed": seed, "curve": curve, "iterations": len(points) - 1,
            "env_steps": points[-1][0], "train_seconds": points[-1][1], "update_seconds_per_iteration": 1.0,
            "seconds_per_iteration": dict.fromkeys(("time/rollout", "time/env", "time/generation", "time/critic",
                                                    "time/actor"), 0.5), "rollout_success": [], "wall_seconds": points[-1][1]}


RUNS = [
    # Coach K = 4 reaches 0.25 at 100 and 300 env steps (20 s and 60 s of training)
    _run("coach-k4", 0, [(0, 0.0, 0.125), (100, 20.0, 0.25), (200, 40.0, 0.25)]),
    _run("coach-k4", 1, [(0, 0.0, 0.125), (150, 30.0, 0.125), (300, 60.0, 0.25)]),
    # GRPO reaches 0.25 at 400 env steps on one seed and tops out at 0.1875 on the other
    _run("grpo", 0, [(0, 0.0, 0.125), (200, 10.0, 0.125), (400, 20.0, 0.25)]),
    _run("grpo", 1, [(0, 0.0, 0.125), (200, 10.0, 0.1875), (400, 20.0, 0.1875)]),
]


def test_the_common_target_and_the_costs_to_reach_it(study):
    summary = study.summarize(RUNS)
    # mean-over-seeds curves (step functions at every evaluation point of either seed):
    #   coach-k4 at 0/100/150/200/300 env steps: 0.125, 0.1875, 0.1875, 0.1875, 0.25 -> best 0.25
    #   grpo     at 0/200/400 env steps:         0.125, 0.15625, 0.21875            -> best 0.21875
    # target: the lower of the two bests
    assert summary["target_success"] == pytest.approx(0.21875)
    coach, grpo = summary["variants"]["coach-k4"], summary["variants"]["grpo"]
    assert coach["env_steps_to_target"] == {"mean": 300, "per_seed": [100, 300]}
    # GRPO's seed 1 never reaches it: it holds the mean curve down instead of dropping out of the cost
    assert grpo["env_steps_to_target"] == {"mean": 400, "per_seed": [400, None]}
    # on the time axis: coach-k4 at 0/20/30/40/60 s: 0.125, 0.1875, 0.1875, 0.1875, 0.25; grpo at 0/10/20 s
    assert coach["train_seconds_to_target"]["mean"] == pytest.approx(60.0)
    assert grpo["train_seconds_to_target"]["mean"] == pytest.approx(20.0)
    # the pair's own target is the same here (two variants); GRPO's cost over Coach's
    assert summary["efficiency"] == {"coach-k4 vs grpo": {
        "target_success": pytest.approx(0.21875), "coach-k4_env_steps": 300, "grpo_env_steps": 400,
        "env_steps_ratio": pytest.approx(400 / 300), "coach-k4_train_seconds": pytest.approx(60.0),
        "grpo_train_seconds": pytest.approx(20.0), "train_seconds_ratio": pytest.approx(20.0 / 60.0),
        # the goal: GRPO ends at (0.25 + 0.1875) / 2 after 400 env steps; Coach's mean curve is there at 300
        "grpo_final_success": pytest.approx(0.21875), "coach-k4_env_steps_to_grpo_final": 300,
        "grpo_env_steps_spent": 400, "env_steps_saving": pytest.approx(400 / 300)}}
    assert coach["env_steps_to_first_gain"] == {"per_seed": [100, 300], "seeds_with_gain": 2, "mean": 200}
    assert coach["final_success"]["mean"] == pytest.approx(0.25)
    # matched budget: the smallest env-step count every run reached (200); GRPO's step function there
    assert summary["matched_env_steps"] == 200
    assert grpo["success_at_matched_env_steps"]["mean"] == pytest.approx((0.125 + 0.1875) / 2)


def test_no_common_target_when_a_variant_never_rises_above_the_start(study):
    flat = [_run("ppo", 0, [(0, 0.0, 0.125), (200, 10.0, 0.125)])]
    summary = study.summarize(RUNS + flat)
    assert summary["target_success"] is None
    assert "env_steps_to_target" not in summary["variants"]["coach-k4"]
    # pairwise, Coach vs PPO has no common gain; Coach vs GRPO keeps its own target
    assert list(summary["efficiency"]) == ["coach-k4 vs grpo"]
    assert summary["efficiency"]["coach-k4 vs grpo"]["env_steps_ratio"] == pytest.approx(400 / 300)


def test_merge_combines_per_seed_folders(study, tmp_path, capsys):
    for seed in (0, 1):
        folder = tmp_path / f"seed{seed}"
        folder.mkdir()
        runs = [r for r in RUNS if r["seed"] == seed]
        # one finished seed, one still running (its results.partial.json)
        name = "results.json" if seed == 0 else "results.partial.json"
        (folder / name).write_text(json.dumps({"settings": {"seeds": [seed]}, "seconds": 5.0, "results": runs}))
    assert study.main(["--merge", str(tmp_path / "seed0"), str(tmp_path / "seed1"), "--out", str(tmp_path / "m")]) == 0
    merged = json.loads((tmp_path / "m" / "results.json").read_text())
    assert merged["summary"] == study.summarize(RUNS)
    assert merged["seconds"] == 10.0
    assert (tmp_path / "m" / "ssma_vs_sssa.png").stat().st_size > 0
    with pytest.raises(SystemExit, match="no results.json"):
        study.main(["--merge", str(tmp_path / "missing"), "--out", str(tmp_path / "m2")])


def test_diagnostics_columns_are_per_run_means_and_the_last_kl(study):
    records = [{"diag/critic_auc_within": 0.5, "diag/kl_to_warmup": 0.001, "actor/grad_norm": 0.2},
               {"diag/critic_auc_within": 0.9, "diag/kl_to_warmup": 0.003, "actor/grad_norm": 0.4,
                "diag/adv_sign_agreement": float("nan")}]
    out = study.diagnostics_means(records)
    assert out["diag/critic_auc_within"] == pytest.approx(0.7)
    assert out["actor/grad_norm"] == pytest.approx(0.3)
    assert out["diag/kl_to_warmup_last"] == 0.003
    assert "diag/adv_sign_agreement" not in out  # only NaN: not measured


def test_the_sampled_success_is_the_headline_when_every_evaluation_has_it(study):
    """With sampled evaluations everywhere, ``summary`` is on them and the greedy summary sits beside it."""
    runs = json.loads(json.dumps(RUNS))
    for r in runs:  # sampled success: the greedy one halved, so the two summaries differ by exactly that
        for p in r["curve"]:
            p["sampled_success_rate"] = p["success_rate"] / 2
    out = study.summaries(runs)
    assert out["summary"]["metric"] == "sampled_success_rate"
    assert out["summary_greedy"]["metric"] == "success_rate"
    assert out["summary"]["target_success"] == pytest.approx(0.21875 / 2)
    assert out["summary"]["variants"]["coach-k4"]["final_success"]["mean"] == pytest.approx(0.125)
    assert out["summary"]["efficiency"]["coach-k4 vs grpo"]["coach-k4_env_steps"] == 300
    # one evaluation without it: greedy is the headline and nothing else is reported
    del runs[0]["curve"][1]["sampled_success_rate"]
    assert list(study.summaries(runs)) == ["summary"]
    assert study.summaries(runs)["summary"]["metric"] == "success_rate"


def test_the_kl_variant_is_coach_with_the_prm_plus_beta(study):
    from coach_rl.configs import load_config

    study.PRM_FOLDER[:] = ["runs/main_job/prm"]
    try:
        plain, kl = study._variant_overrides("coach-prm"), study._variant_overrides("coach-prm-kl")
    finally:
        study.PRM_FOLDER.clear()
    assert kl == plain + [f"beta={study.KL_BETA}"] and study.KL_BETA > 0
    assert load_config("main", kl).coach.beta == study.KL_BETA
    with pytest.raises(ValueError, match="--prm"):
        study._variant_overrides("coach-prm-kl")


def test_the_early_stop_variant_is_coach_with_the_prm_plus_validation(study):
    from coach_rl.configs import load_config

    study.PRM_FOLDER[:] = ["runs/main_job/prm"]
    try:
        plain, es = study._variant_overrides("coach-prm"), study._variant_overrides("coach-prm-es")
    finally:
        study.PRM_FOLDER.clear()
    assert es == plain + ["validation_every=5", "validation_instances_per_task=2", "validation_samples_per_instance=4"]
    loop = load_config("main", es).loop
    assert (loop.validation_every, loop.early_stopping_patience) == (5, 0)  # keep the best, spend the whole budget
    assert load_config("main", plain).loop.validation_every == 0
    with pytest.raises(ValueError, match="--prm"):
        study._variant_overrides("coach-prm-es")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")
def test_the_early_stop_arm_runs_and_ends_on_the_best_policy(study, tmp_path):
    """The smallest run the script allows (smoke config, 2 iterations, the sim's expert as the PRM): the arm's last
    curve point is the held-out evaluation of the policy kept by validation, at the run's last env-step count."""
    out = tmp_path / "es"
    try:
        assert study.main(["--config", "smoke", "--variants", "coach-prm-es", "--prm", "sim-oracle", "--env-steps",
                           "1000", "--max-iterations", "2", "--eval-instances", "1", "--eval-every", "1",
                           "--latency-scale", "0", "--validation-every", "1", "--validation-instances", "1",
                           "--validation-samples", "2", "--out", str(out)]) == 0
    finally:
        study.PRM_FOLDER.clear()
        study.EARLY_STOP.update(validation_every=5, validation_instances_per_task=2, validation_samples_per_instance=4)
    run = json.loads((out / "results.json").read_text())["results"][0]
    assert run["variant"] == "coach-prm-es" and run["iterations"] == 2
    assert [it for it, _ in run["validation_curve"]] == [0, 1, 2]
    best = max(run["validation_curve"], key=lambda p: (p[1], -p[0]))[0]  # highest, the earliest among equals
    assert run["best_iteration"] == best and run["validation_env_steps"] > 0
    *trained, kept = run["curve"]
    assert [p["iteration"] for p in trained] == [0, 1, 2] and "policy_iteration" not in trained[-1]
    assert kept["policy_iteration"] == best and kept["env_steps"] == trained[-1]["env_steps"] == run["env_steps"]
