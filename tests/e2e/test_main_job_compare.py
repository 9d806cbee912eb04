"""tools/main_job.sh COMPARE=...: the other algorithm runs at its own tuned config on exactly each seed's Coach env steps."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_compare_runs_the_tuned_config_on_each_seeds_coach_env_steps(tmp_path: Path):
    config = tmp_path / "tiny.yaml"
    config.write_text("extends: smoke\ntotal_iterations: 3\nsft_max_steps: 4\n")
    # what `coach-rl sweep --write-configs` leaves beside a config: <config>-<algorithm>.yaml
    (tmp_path / "tiny-grpo.yaml").write_text("# tuned on validation instances\nextends: tiny.yaml\nalgorithm: grpo\n"
                                             "learning_rate: 0.0031\n")
    out = tmp_path / "job"
    env = {**os.environ, "CONFIG": str(config), "SEEDS": "0 1", "PRM": "none", "COMPARE": "grpo", "OUT": str(out)}
    result = subprocess.run(["bash", "tools/main_job.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"grpo: at its own tuned settings, config {tmp_path / 'tiny-grpo.yaml'} (learning_rate=0.0031)" \
        in result.stdout
    coach = {r["run"].rsplit("/", 1)[-1]: r["env_steps"] for r in json.loads((out / "summary.json").read_text())["runs"]}
    grpo = {r["run"].rsplit("/", 1)[-1]: r["env_steps"]
            for r in json.loads((out / "summary_grpo.json").read_text())["runs"]}
    assert grpo == {f"grpo-{seed}": steps for seed, steps in coach.items()}  # exactly, never an iteration past it
    for seed in ("seed0", "seed1"):
        ran = yaml.safe_load((out / f"grpo-{seed}" / "config.yaml").read_text())
        assert ran["algorithm"] == "grpo" and ran["learning_rate"] == 0.0031
        assert ran["max_env_steps"] == coach[seed]

