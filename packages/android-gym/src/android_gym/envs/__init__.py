"""Gymnasium environments and their registration (Gymnasium 1.x has no plugin entry points)."""

import gymnasium as gym

from android_gym.envs.android_env import AndroidEnv
from android_gym.envs.spaces import AgentAction, UIElements, UnicodeText

_ENTRY_POINT = "android_gym.envs.android_env:AndroidEnv"

ENV_IDS = {
    "AndroidSim-v0": {"suite": "sim"},
    "AndroidWorld-v0": {"suite": "android_world"},
    "AndroidLab-v0": {"suite": "androidlab"},
}


def register_envs() -> None:
    """Register the env ids once; importing android_gym calls this."""
    for env_id, kwargs in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        # Real devices are not reproducible step for step; the sim is, but one entry serves both.
        gym.register(env_id, entry_point=_ENTRY_POINT, kwargs=kwargs, nondeterministic=env_id != "AndroidSim-v0",
                     disable_env_checker=False)


__all__ = ["ENV_IDS", "AgentAction", "AndroidEnv", "UIElements", "UnicodeText", "register_envs"]
