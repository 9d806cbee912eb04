"""validation_every (beyond the paper, off by default): keep the best policy by a validation evaluation.

Real runs of the training loop on the smoke config (tiny policy, simulated phone): validation at the right
iterations, the best policy (by the logged curve, ties to the earlier) is the one restored and evaluated,
early stopping, validation env steps counted apart, the training unchanged by validating, and disjoint seeds.
The kill -9 resume is in tests/e2e/test_smoke_train.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from coach_rl.configs import instance_seed_ranges, load_config

_quiet_trl = pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")
# Keys whose values depend on the clock, not on the computation.
_CLOCK = ("time/", "cpu/", "wall_time", "seconds", "step_time")


def _smoke(out: Path, *overrides: str):
    return load_config("smoke", [f"output_dir={out}", "eval_instances_per_task=1", *overrides])


# -- configuration -----------------------------------------------------------------------------------------


def test_validation_is_off_by_default_in_every_shipped_config():
    for name in ("smoke", "main", "study"):
        loop = load_config(name).loop
        assert loop.validation_every == 0 and loop.early_stopping_patience == 0, name


@pytest.mark.parametrize("name", ["smoke", "main", "study"])
@pytest.mark.parametrize("seed", [0, 1, 2, 42])
def test_validation_demonstration_training_and_evaluation_seeds_do_not_overlap(name, seed):
    config = load_config(name, [f"seed={seed}", "validation_every=1", "validation_instances_per_task=50",
                                "eval_instances_per_task=50"])
    ranges = instance_seed_ranges(config)
    assert len(ranges["validation"]) == 50 and len(ranges["evaluation"]) == 50
    parts = list(ranges)
    for i, a in enumerate(parts):
        for b in parts[i + 1:]:
            assert not set(ranges[a]) & set(ranges[b]), (name, seed, a, b)


def test_the_loop_plays_the_seeds_the_ranges_say(tmp_path: Path):
    from coach_reward.tiny_models import build_tiny_causal_lm
    from coach_rl.algorithms import build_algorithm
    from coach_rl.loop import TrainingLoop

    config = _smoke(tmp_path, "validation_every=1", "validation_instances_per_task=3", "eval_instances_per_task=4",
                    "total_iterations=5", "seed=3")
    loop = TrainingLoop(config, progress=False)
    loop.algorithm = build_algorithm("coach", config, *build_tiny_causal_lm(seed=0))
    ranges = instance_seed_ranges(config)
    assert loop.validation_seeds() == [2_000_000, 2_000_001, 2_000_002] == list(ranges["validation"])
    assert loop.eval_seeds() == list(ranges["evaluation"])
    trained = {s for it in range(1, 6) for s in loop.rollout_plan(it)[0]}
    assert trained <= set(ranges["training"])
    assert not trained & set(loop.validation_seeds()) and not set(loop.eval_seeds()) & set(loop.validation_seeds())


@pytest.mark.parametrize(("overrides", "message"), [
    (["validation_every=-1"], "validation_every must be >= 0, got -1"),
    (["validation_instances_per_task=-2"], "validation_instances_per_task must be >= 0, got -2"),
    (["validation_samples_per_instance=-1"], "validation_samples_per_instance must be >= 0, got -1"),
    (["early_stopping_patience=-3"], "early_stopping_patience must be >= 0, got -3"),
    (["validation_seed_offset=-1"], "validation_seed_offset must be >= 0, got -1"),
    (["validation_every=2", "validation_instances_per_task=0"],
     "validation_instances_per_task must be >= 1 when validation_every > 0"),
    (["validation_every=2", "validation_samples_per_instance=0"],
     "validation_samples_per_instance must be >= 1 when validation_every > 0"),
    (["early_stopping_patience=3"], "early_stopping_patience=3 counts validations without improvement, but "
                                    "validation_every is 0"),
    (["validation_every=1", "validation_seed_offset=1000000", "eval_instances_per_task=5"],
     "validation seeds [1000000, 1000002) (validation_seed_offset, validation_instances_per_task) overlap the "
     "evaluation seeds [1000000, 1000005) (eval_seed_offset)"),
    (["validation_every=1", "validation_seed_offset=500001"], "overlap the demonstration seeds [500000, 500002) "
                                                              "(sft_seed_offset)"),
    (["validation_every=1", "validation_seed_offset=6", "seed=0"], "overlap the training seeds [0, 8) "
                                                                    "(train_seed_offset and seed)"),
    (["validation_every=x"], "validation_every must be an integer, got 'x'"),
])
def test_bad_validation_settings_are_refused_naming_the_field(overrides, message):
    with pytest.raises(ValueError) as err:
        load_config("smoke", overrides)
    assert message in str(err.value)


# -- real runs ---------------------------------------------------------------------------------------------


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _first_best(curve: list[tuple[int, float]]) -> tuple[int, float]:
    """The hand rule: the highest validation success, the earliest iteration among equals."""
    best = curve[0]
    for point in curve[1:]:
        if point[1] > best[1]:
            best = point
    return best


@_quiet_trl
@pytest.mark.slow
def test_validation_keeps_and_restores_the_best_policy_and_changes_no_training_step(tmp_path: Path):
    from coach_rl.loop import train
    from coach_rl.report import summarize_runs

    out = tmp_path / "validated"
    # 3 iterations, validation every 2: after the warm-up (0), iteration 2, and after the last one (3)
    result = train(_smoke(out, "total_iterations=3", "validation_every=2", "validation_instances_per_task=2",
                          "validation_samples_per_instance=2", "checkpoint_keep=5"), progress=False)
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    validations = [r for r in records if r["kind"] == "validation"]
    assert [r["iteration"] for r in validations] == [0, 2, 3]
    # 2 tasks x 2 instances x 2 samples; the smoke policy plays each episode to its 6-step cap unless it succeeds
    assert all(r["validation/episodes"] == 8 for r in validations)
    curve = [(r["iteration"], r["validation/success_rate"]) for r in validations]
    best_iteration, best_score = _first_best(curve)
    assert result.best_iteration == result.state.best_iteration == best_iteration
    assert result.state.best_score == best_score and result.state.validations == [list(p) for p in curve]
    assert [r["validation/best_iteration"] for r in validations] == [
        _first_best(curve[:i + 1])[0] for i in range(len(curve))]

    # the model evaluated after training and saved in best/ is the policy of the best iteration's checkpoint
    kept = _weights(out / "best" / "policy")
    assert _same(kept, _weights(out / "checkpoints" / f"iter-{best_iteration:06d}" / "policy"))
    if best_iteration != 3:
        assert not _same(kept, _weights(out / "checkpoints" / "iter-000003" / "policy"))
    assert json.loads((out / "best" / "best.json").read_text())["iteration"] == best_iteration
    after = json.loads((out / "eval_after.json").read_text())
    assert after["meta"]["policy_iteration"] == best_iteration and after["meta"]["iteration"] == 3
    best_record = next(r for r in records if r["kind"] == "best")
    assert best_record["best_iteration"] == best_iteration and best_record["final_iteration"] == 3
    assert next(r for r in records if r.get("label") == "after")["policy_iteration"] == best_iteration

    # validation env steps are counted apart: the training's env steps are the rollouts' alone
    train_records = [r for r in records if r["kind"] == "train"]
    assert result.state.env_steps == sum(r["rollout/steps"] for r in train_records)
    assert result.state.validation_env_steps == validations[-1]["validation/env_steps"] == best_record[
        "validation/env_steps"]
    assert 3 * 8 <= result.state.validation_env_steps <= 3 * 8 * 6
    assert [r["validation/env_steps"] for r in train_records][-1] == result.state.validation_env_steps

    report = (out / "report.md").read_text()
    assert "## Validation (best policy kept)" in report and f"Best iteration: **{best_iteration}**" in report
    summary = summarize_runs([out])
    assert summary["runs"][0]["best_iteration"] == best_iteration and summary["best_iterations"] == [best_iteration]
    # `coach-rl eval --run` evaluates the kept policy, not the last checkpoint's
    from coach_rl.cli import main as cli

    assert cli(["eval", "--run", str(out), "--instances", "1", "--out", str(tmp_path / "eval.json")]) == 0
    assert json.loads((tmp_path / "eval.json").read_text())["meta"]["policy"] == str(out / "best" / "policy")

    # the same run without validation trains exactly the same policies (validation draws from its own RNG)
    plain = tmp_path / "plain"
    train(_smoke(plain, "total_iterations=3", "checkpoint_keep=5"), progress=False)
    plain_records = [json.loads(line) for line in (plain / "metrics.jsonl").read_text().splitlines()]
    for a, b in zip([r for r in plain_records if r["kind"] == "train"], train_records, strict=True):
        keys = [k for k in a if not k.startswith("validation/") and not any(c in k for c in _CLOCK)]
        assert {k: a[k] for k in keys} == {k: b.get(k) for k in keys}
    assert _same(_weights(plain / "checkpoints" / "iter-000003" / "policy"),
                 _weights(out / "checkpoints" / "iter-000003" / "policy"))
    assert not (plain / "best").exists() and not any(r["kind"] in ("validation", "best") for r in plain_records)


@_quiet_trl
@pytest.mark.slow
def test_early_stopping_ends_the_run_after_patience_validations_without_a_new_best(tmp_path: Path):
    from coach_rl.loop import train

    out = tmp_path / "run"
    result = train(_smoke(out, "total_iterations=8", "validation_every=1", "validation_instances_per_task=1",
                          "validation_samples_per_instance=2", "early_stopping_patience=2", "eval_after=false"),
                   progress=False)
    curve = [tuple(p) for p in result.state.validations]
    # the hand rule: stop at the first validation that is the 2nd in a row without beating the best so far
    since, best, stop = 0, curve[0][1], None
    for iteration, score in curve[1:]:
        since = 0 if score > best else since + 1
        best = max(best, score)
        if since == 2:
            stop = iteration
            break
    assert stop is not None and result.state.iteration == stop < 8 and result.state.stopped_early
    assert [it for it, _ in curve] == list(range(stop + 1))
    assert result.best_iteration == _first_best(curve)[0]
    # the early stop is in the last checkpoint: a second invocation finds the run finished
    again = train(_smoke(out, "total_iterations=8", "validation_every=1", "validation_instances_per_task=1",
                         "validation_samples_per_instance=2", "early_stopping_patience=2", "eval_after=false"),
                  progress=False)
    assert again.resumed_from == stop and again.state.iteration == stop and again.best_iteration == result.best_iteration


@_quiet_trl
@pytest.mark.slow
def test_a_resume_drops_a_best_policy_saved_after_its_checkpoint(tmp_path: Path):
    """Killed after a validation wrote a new best/ but before the next checkpoint: the resumed run's best/ is the
    checkpoint's best (the iterations it redoes will validate again), so best/ always matches the resumed state."""
    from coach_rl.loop import TrainingLoop
    from coach_rl.validation import save_best

    config = _smoke(tmp_path, "total_iterations=4", "checkpoint_every=2", "validation_every=1",
                    "validation_instances_per_task=1", "validation_samples_per_instance=2")
    loop = TrainingLoop(config, progress=False)
    loop.setup()
    loop.run_iteration()
    loop.run_iteration()  # checkpoint 2
    saved_best = loop.state.best_iteration
    checkpoint_best = _weights(tmp_path / "checkpoints" / "iter-000002" / "best" / "policy")
    assert _same(checkpoint_best, _weights(tmp_path / "best" / "policy"))
    loop.run_iteration()  # iteration 3, no checkpoint
    # what a validation of iteration 3 that beat the best would have left behind, then the process is gone
    loop.state.best_iteration, loop.state.best_score = 3, 2.0
    save_best(loop.run.path, loop.model, loop.tokenizer, loop.state, loop.evaluate_episodes("probe")[0])
    assert json.loads((tmp_path / "best" / "best.json").read_text())["iteration"] == 3
    loop.close()

    resumed = TrainingLoop(config, progress=False)
    resumed.setup()
    assert resumed.resumed_from == 2 and resumed.state.best_iteration == saved_best
    assert json.loads((tmp_path / "best" / "best.json").read_text())["iteration"] == saved_best
    assert _same(_weights(tmp_path / "best" / "policy"), checkpoint_best)
    # and files of the checkpoint are links, not copies: the best policy costs no space in each checkpoint
    linked = tmp_path / "checkpoints" / "iter-000002" / "best" / "policy" / "model.safetensors"
    assert linked.stat().st_nlink >= 2
    resumed.close()
