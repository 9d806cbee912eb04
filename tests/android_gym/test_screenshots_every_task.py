"""Every simulated task's expert episode renders a valid screenshot at every step (no screen crashes the renderer)."""

from __future__ import annotations

import numpy as np
import pytest

import android_gym
from android_gym import AndroidEnv

ALL_TASKS = sorted(set(android_gym.list_tasks("sim")))


@pytest.mark.slow
def test_expert_episodes_render_at_every_step():
    env = AndroidEnv(suite="sim", screenshot=True)
    shape = env.observation_space["screenshot"].shape
    failures = []
    from android_gym.sim.web import web_engine_available
    from android_gym.tasks.base import get_task_class

    for name in ALL_TASKS:
        if "chrome" in get_task_class(name).app_names and not web_engine_available():
            continue  # the simulated Chrome runs pages in chromium (apt-get install chromium; .ci/run does)
        obs, _ = env.reset(seed=0, options={"task": name})
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(env.expert_action())
            done = terminated or truncated
            frame = obs["screenshot"]
            assert frame.shape == shape and frame.dtype == np.uint8
        if info["success"] != 1.0:
            failures.append((name, info.get("error")))
    env.close()
    assert not failures, failures
