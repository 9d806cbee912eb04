"""tools/bench/shared_prefix_update.py: the shared-prompt update's cost in K, CPU twin on the tiny Qwen2."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def bench(load_bench_script):
    return load_bench_script("shared_prefix_update")


def test_tiny_twin_times_both_ways_for_each_k_with_the_same_loss(bench, tmp_path, capsys):
    out = tmp_path / "shared.json"
    report = bench.main(["--model", "tiny", "--k", "1", "3", "--repeats", "1", "--prompt-tokens", "96",
                         "--reply-tokens", "4", "--out", str(out)])
    assert json.loads(capsys.readouterr().out) == json.loads(out.read_text()) == report
    assert report["device"] == "cpu" and report["prompt_tokens"] == 96 and [r["k"] for r in report["runs"]] == [1, 3]
    for run in report["runs"]:
        for way in ("shared", "unshared"):
            assert run[way]["seconds"] > 0 and len(run[way]["all_seconds"]) == 1
        assert run["loss_abs_diff"] < 1e-5 and run["speedup"] == pytest.approx(
            run["unshared"]["seconds"] / run["shared"]["seconds"])
    assert report["relative_to_k1"]["shared"]["1"] == 1.0


def test_real_size_models_need_cuda(bench, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the real-size model would be built")
    with pytest.raises(SystemExit):
        bench.parse_args(["--model", "qwen2.5-3b"])
    assert "CUDA is not available" in capsys.readouterr().err
