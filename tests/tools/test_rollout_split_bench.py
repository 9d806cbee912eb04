"""tools/bench/rollout_split.py: the K-sampling and Coach-iteration time-split benchmark, at tiny size on CPU."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
import torch


@pytest.fixture(scope="module")
def bench(load_bench_script):
    return load_bench_script("rollout_split")


TINY = ["--backend", "hf", "--states", "2", "--k", "1", "2", "--num-envs", "2", "--max-steps", "2",
        "--max-new-tokens", "6", "--split-k", "2", "--actor-states", "2"]


@pytest.mark.parametrize("model", ["tiny", pytest.param("tiny-vl", marks=pytest.mark.slow)])
def test_tiny_run_reports_k_sampling_and_iteration_split(bench, model, tmp_path, capsys):
    out = tmp_path / "split.json"
    report = bench.main([*TINY, "--model", model, "--out", str(out)])
    printed = capsys.readouterr().out
    assert json.loads(printed) == json.loads(out.read_text()) == json.loads(json.dumps(report, default=float))
    assert report["backend"] == "hf" and report["model"] == model and report["device"] == "cpu"
    assert report["mode"] == ("xml" if model == "tiny" else "both")
    assert report["params"] > 0 and report["prefix_caching_speedup"] is None

    runs = report["k_sampling"]["n/a"]
    assert sorted(runs) == ["1", "2"]
    for k, run in runs.items():
        assert run["actions"] == 2 * int(k)
        assert run["seconds"] > 0 and run["actions_per_s"] == pytest.approx(run["actions"] / run["seconds"])
        assert 0 < run["mean_new_tokens"] <= 6 and run["tokens_per_s"] > 0

    it = report["iteration"]
    assert it["num_envs"] == 2 and it["episodes"] == 2 and 2 <= it["env_steps"] <= 4
    assert it["split_k"] == 2 and it["states_resampled"] == 2
    assert set(it["seconds"]) == {"env", "generation", "critic", "update"}
    assert all(v > 0 for v in it["seconds"].values())
    assert sum(it["shares"].values()) == pytest.approx(1.0)
    assert it["update"]["skipped"] is None
    assert it["update"]["critic_pairs"] == it["env_steps"] and it["update"]["actor_samples"] == 4
    assert math.isfinite(it["update"]["critic_loss"]) and math.isfinite(it["detail"]["q_mean"])
    assert it["detail"]["rollout_generation"] + it["detail"]["k_generation"] == pytest.approx(it["seconds"]["generation"])


def test_update_off_is_reported_as_skipped(bench):
    report = bench.main([*TINY, "--model", "tiny", "--k", "2", "--num-envs", "1", "--update", "off"])
    assert report["iteration"]["update"] == {"skipped": "--update off"}
    assert report["iteration"]["seconds"]["update"] == 0.0


@pytest.mark.parametrize("bad, message", [
    (["--split-k", "1"], "ACLOO"),
    (["--k", "0"], "--k"),
    (["--states", "0"], "--states"),
    (["--model", "tiny", "--random-arch", "qwen2.5-vl-3b"], "not allowed"),
])
def test_bad_arguments_are_rejected(bench, bad, message, capsys):
    with pytest.raises(SystemExit):
        bench.parse_args(bad)
    assert message in capsys.readouterr().err


def test_missing_checkpoint_and_missing_vllm_give_clear_errors(bench):
    with pytest.raises(SystemExit, match="no such checkpoint"):
        bench.main(["--model", str(Path("/nonexistent/ckpt"))])
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(SystemExit, match="needs vLLM"):
            bench.main(["--backend", "vllm"])


def test_help_documents_the_gpu_command(bench, capsys):
    with pytest.raises(SystemExit):
        bench.parse_args(["--help"])
    text = capsys.readouterr().out
    assert "--backend vllm --random-arch qwen2.5-vl-7b" in text and "--backend hf --model tiny" in text


@pytest.mark.parametrize("name, billions", [
    ("qwen2.5-vl-3b", 3.75), pytest.param("qwen2.5-vl-7b", 8.29, marks=pytest.mark.slow)])
def test_random_architectures_have_the_public_sizes(bench, name, billions, tmp_path):
    from transformers import Qwen2_5_VLForConditionalGeneration

    _, processor, folder = bench.build_random_arch(name, tmp_path / name, min_pixels=56 * 56, max_pixels=112 * 112,
                                                   build_model=False)
    tokenizer = processor.tokenizer
    assert len(tokenizer) == 151936  # padded to the real vocabulary: every sampled id decodes
    assert tokenizer.decode([151000]).startswith("xfill")
    config = bench.random_arch_config(name, tokenizer)
    with torch.device("meta"):  # sizes only: no memory, no time
        model = Qwen2_5_VLForConditionalGeneration._from_config(config, dtype=torch.bfloat16)
    assert sum(p.numel() for p in model.parameters()) / 1e9 == pytest.approx(billions, abs=0.01)
    assert {"config.json", "tokenizer.json", "generation_config.json"} <= {p.name for p in folder.iterdir()}
    with pytest.raises(ValueError, match="unknown architecture"):
        bench.random_arch_config("qwen9", tokenizer)


def test_random_arch_path_runs_at_toy_size_on_cpu(bench):
    # The GPU path (Qwen2.5-VL built from the script's config, 151936-id padded tokenizer, processor, screenshots)
    # at toy size; the update is off here because float32 logits over 151936 ids are slow on CPU.
    report = bench.main([*TINY, "--random-arch", "qwen2.5-vl-tiny", "--k", "2", "--num-envs", "1",
                         "--min-pixels", str(56 * 56), "--max-pixels", str(112 * 112), "--update", "off"])
    assert report["model"] == "qwen2.5-vl-tiny" and report["mode"] == "both" and report["dtype"] == "float32"
    assert report["k_sampling"]["n/a"]["2"]["actions"] == 4
    assert report["iteration"]["seconds"]["critic"] > 0 and report["iteration"]["update"]["skipped"] == "--update off"


def test_real_size_architectures_refuse_to_build_without_cuda(bench, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        bench.build_random_arch("qwen2.5-vl-3b", tmp_path, min_pixels=56 * 56, max_pixels=112 * 112)
