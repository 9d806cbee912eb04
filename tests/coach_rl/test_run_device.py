"""How a run meets its hardware and its envs: every model on one device with one mixed-precision setting (what a
GPU run needs; checked on the CPU), and each episode capped at ``max_turns``.

On a GPU, TRL turns bf16 on by default. The warm-up's SFT trainer used to be built with bf16 off whatever the run
said, and accelerate keeps one mixed-precision state per process, so the first trainer built after it (Android
Coach's, the critic's) stopped the warm-up with "AcceleratorState has already been initialized". The same happens
on the CPU with ``bf16=true``, which is how this test reproduces it (in a fresh process: accelerate's state is
process-wide).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from coach_rl.components import build_policy_model, load_policy_model
from coach_rl.configs import load_config


def test_warm_up_and_training_share_the_runs_mixed_precision(tmp_path):
    out = tmp_path / "warmup"
    cmd = [sys.executable, "-c", "import sys; from coach_rl.cli import main; sys.exit(main())", "warmup", "--config",
           "smoke", "bf16=true", f"output_dir={out}", "eval_samples_per_instance=0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert "AcceleratorState" not in done.stderr + done.stdout
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout[done.stdout.index("{"):])
    assert report["sft_steps"] == 4 and (out / "checkpoints" / "iter-000000" / "MANIFEST.json").is_file()


def test_policy_models_land_on_the_runs_device(tmp_path):
    config = load_config("smoke", [f"output_dir={tmp_path}"])
    model, tokenizer = build_policy_model(config)
    assert next(model.parameters()).device == config.coach.device
    model.save_pretrained(tmp_path / "policy")
    tokenizer.save_pretrained(tmp_path / "policy")
    loaded, _ = load_policy_model(tmp_path / "policy", config)
    assert next(loaded.parameters()).device == config.coach.device
    for a, b in zip(model.parameters(), loaded.parameters(), strict=True):
        assert a.detach().cpu().equal(b.detach().cpu())


def test_max_turns_caps_each_tasks_budget_when_max_episode_steps_is_unset():
    from android_gym.actions import Click
    from coach_rl.components import run_env_kwargs
    from coach_rl.envs import make_envs

    config = load_config("smoke", {"max_episode_steps": None, "max_turns": 2})
    kwargs = run_env_kwargs(config)
    assert kwargs["max_steps_cap"] == 2 and "max_steps" not in kwargs
    (env,) = make_envs(config.coach.env_id, 1, tasks=["SystemWifiTurnOff"], env_kwargs=kwargs)
    _, info = env.reset(seed=0)
    assert env.unwrapped.task.max_steps > 2 and info["max_steps"] == 2  # the task's own budget, capped
    assert [env.step(Click(540, 1200))[3] for _ in range(2)] == [False, True]
    env.close()
    fixed = run_env_kwargs(load_config("smoke", {"max_episode_steps": 3, "max_turns": 6}))
    assert fixed["max_steps"] == 3 and "max_steps_cap" not in fixed
