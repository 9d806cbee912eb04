"""tools/bench/real_size_path.py: the real-size Coach path's CPU twin (tiny Qwen2.5-VL, same code as the GPU run)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def bench(load_bench_script):
    return load_bench_script("real_size_path")


@pytest.mark.slow
def test_tiny_twin_times_every_phase_for_each_k_shared_and_unshared(bench, tmp_path, capsys):
    out = tmp_path / "real_size.json"
    report = bench.main(["--model", "tiny", "--states", "2", "--k", "1", "2", "--max-new-tokens", "4",
                         "--max-pixels", "60000", "--compare-unshared", "--no-warmup", "--threads", "1",
                         "--out", str(out)])
    printed = capsys.readouterr().out
    assert json.loads(printed) == json.loads(out.read_text())
    assert report["device"] == "cpu" and report["gpu"] is None and report["screenshot"] == [1080, 2400]
    t, h, w = report["image_grid_thw"]
    assert report["image_tokens"] == t * h * w // 4 and h * w * 14 * 14 <= 60000
    assert report["prompt_tokens"] > report["image_tokens"]
    runs = {(r["k"], r["share_prompt_prefix"]): r for r in report["runs"]}
    assert sorted(runs) == [(1, False), (1, True), (2, False), (2, True)]
    for (k, _), run in runs.items():
        assert "error" not in run, run
        assert run["actions"] == 2 * k
        assert set(run["seconds"]) == {"tokenize", "sample", "critic_score", "actor_update", "critic_update"}
        assert all(v > 0 for v in run["seconds"].values())
        assert run["total_seconds"] == pytest.approx(sum(run["seconds"].values()))
        assert run["actions_per_s"] == pytest.approx(run["actions"] / run["total_seconds"])
        assert run["actor_grad_norm"] > 0 and run["critic_loss"] >= 0
        assert run["actor_skipped_steps"] == 0 and run["nonfinite"] == {}  # the tiny twin's logits stay finite
    assert report["relative_cost"]["shared"]["1"] == 1.0 and report["relative_cost"]["unshared"]["1"] == 1.0
    assert report["relative_cost"]["shared"]["2"] == pytest.approx(
        runs[(2, True)]["total_seconds"] / runs[(1, True)]["total_seconds"])
    assert report["paper_relative_cost"] == {"1": 1.0, "2": 1.22, "4": 1.62, "8": 2.18}


@pytest.mark.slow
def test_tiny_twin_compares_the_shared_and_the_unshared_update(bench, tmp_path):
    report = bench.main(["--model", "tiny", "--states", "2", "--k", "2", "--max-new-tokens", "4", "--max-pixels",
                         "60000", "--compare-unshared-update", "--no-warmup", "--threads", "1", "--out",
                         str(tmp_path / "update.json")])
    runs = {r["share_prompt_update"]: r for r in report["runs"]}
    assert sorted(runs) == [False, True] and all(r["share_prompt_prefix"] and "error" not in r for r in runs.values())
    # shared: the loss forward packs each state's 2 replies after its prompt and screenshot; unshared: TRL's 4 rows
    assert runs[True]["shared_update_rows"] == 4 and runs[False]["shared_update_rows"] == 0
    assert all(r["actor_grad_norm"] > 0 for r in runs.values())
    assert report["relative_cost"] == {}  # no K = 1 run, no baseline to divide by


@pytest.mark.slow
def test_tiny_twin_measures_the_kl_anchor_beside_eq4(bench, tmp_path):
    report = bench.main(["--model", "tiny", "--states", "2", "--k", "2", "--beta", "0", "0.1", "--max-new-tokens",
                         "4", "--max-pixels", "60000", "--no-warmup", "--threads", "1", "--out",
                         str(tmp_path / "kl.json")])
    runs = {r["beta"]: r for r in report["runs"]}
    assert sorted(runs) == [0.0, 0.1] and all("error" not in r for r in runs.values())
    assert runs[0.0]["actor_kl"] is None  # Eq. 4: no KL term, none logged
    # One actor step from the anchor: the policy that sampled is the anchor, so the k3 estimate starts at 0.
    assert runs[0.1]["actor_kl"] == pytest.approx(0.0, abs=1e-6)
    assert runs[0.1]["actor_grad_norm"] > 0
    # Without a K = 1 run there is no baseline: the relative costs are left out, not made up.
    assert report["relative_cost"] == {}


def test_relative_cost_labels_the_unshared_update_against_its_own_k1(bench):
    runs = [{"k": k, "share_prompt_prefix": True, "share_prompt_update": update, "beta": 0.0, "total_seconds": t}
            for k, update, t in [(1, True, 2.0), (4, True, 3.0), (1, False, 2.0), (4, False, 6.0)]]
    assert bench._relative_cost(runs) == {"shared": {"1": 1.0, "4": 1.5}, "shared+unshared_update": {"1": 1.0, "4": 3.0}}


def test_beta_must_be_non_negative(bench, capsys):
    with pytest.raises(SystemExit):
        bench.parse_args(["--beta", "-0.1"])
    assert "--beta values must be >= 0" in capsys.readouterr().err


def test_real_size_models_need_cuda(bench, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the real-size model would be built")
    with pytest.raises(SystemExit):
        bench.parse_args(["--model", "qwen2.5-vl-3b"])
    assert "CUDA is not available" in capsys.readouterr().err


@pytest.mark.slow
def test_tiny_twin_survives_nan_logits_as_the_h200_run_did_not(bench, tmp_path):
    """The real-size run died in its first K = 1 sample on a device-side assert (random weights, NaN logits for some
    prompts). Here the tiny Qwen2.5-VL's logits are NaN for every prompt: the samples end early and are counted, the
    step with nothing usable is skipped, and run_k reports it instead of raising."""
    import torch

    from coach_rl.critic import Critic
    from coach_rl.policy import PolicyFormat

    args = bench.parse_args(["--model", "tiny", "--states", "2", "--k", "2", "--max-new-tokens", "4", "--max-pixels",
                             "60000", "--threads", "1"])
    model, processor, _ = bench._rollout_split().build_random_arch(
        "qwen2.5-vl-tiny", tmp_path / "model", min_pixels=args.min_pixels, max_pixels=args.max_pixels,
        vocab_size=args.tiny_vocab)
    critic = Critic.from_pretrained_lm(model, processor.tokenizer, seed=0)
    fmt = PolicyFormat(mode="screenshot", action_format="uitars", coordinates="smart_resize",
                       min_pixels=args.min_pixels, max_pixels=args.max_pixels)
    rows = bench.collect_rows(2, fmt, processor, 0)
    with torch.no_grad():
        model.model.language_model.norm.weight[0] = float("nan")
    with pytest.warns(RuntimeWarning, match="actor_sample"):
        run = bench.run_k(model, processor, critic, rows, 2, args, share=True)
    assert run["nonfinite"]["nonfinite/actor_sample"] == 4 and run["actor_skipped_steps"] == 1
    assert run["actions"] == 4 and run["seconds"]["sample"] > 0
