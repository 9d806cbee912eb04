"""AndroidWorld's own task classes on the simulated phone, with a scripted expert for each one the sim can run.

:class:`AndroidWorldSimSuite` is AndroidWorld's registry (the installed ``android_world`` package)
restricted to the tasks whose apps the simulated phone models: ``generate_random_params``,
``initialize_task``, ``is_successful`` and ``tear_down`` are the package's own code, run through
:class:`~android_gym.suites.android_world.AndroidWorldEnvAdapter` on a ``SimDevice`` (in-process) or on
the sim behind sim-adbd (an ``AdbDevice``). Their set-up and checks reach the sim's shell, content
providers, files and the apps' SQLite databases exactly as they reach an emulator.

The experts are our re-creations' scripted experts (:mod:`android_gym.tasks.sim`), given the
AndroidWorld instance's own parameters: they read the screen and act, so the score comes from
AndroidWorld's check of the state the expert left. :data:`SIM_TASKS` lists the tasks this suite runs;
:data:`NOT_ON_SIM` says why each other task does not run here.
"""

from __future__ import annotations

from android_gym.suites.android_world import AndroidWorldSuite, require_android_world
from android_gym.suites.sim_experts import (
    NOT_ON_SIM,
    SIM_TASKS,
    expert_class,
    reason_not_on_sim,
    sim_expert_task,
)

# the expert half lives in sim_experts (android_world.py reads it too, and must not import this module back)
__all__ = ["NOT_ON_SIM", "SIM_TASKS", "AndroidWorldSimSuite", "expert_class", "reason_not_on_sim", "sim_expert_task"]

class AndroidWorldSimSuite(AndroidWorldSuite):
    """AndroidWorld's registry limited to :data:`SIM_TASKS`, with experts: the default for AndroidWorld-v0 on the sim."""

    def __init__(self, names: list[str] | tuple[str, ...] | None = None, default_timeout: float | None = None):
        module = require_android_world()
        full = module.TaskRegistry().get_registry(module.TaskRegistry.ANDROID_WORLD_FAMILY)
        wanted = list(SIM_TASKS if names is None else names)
        unknown = [n for n in wanted if n not in SIM_TASKS]
        if unknown:
            reasons = "; ".join(f"{n}: {reason_not_on_sim(n) if n in full else 'not an AndroidWorld task'}"
                                for n in unknown)
            raise ValueError(f"these AndroidWorld tasks do not run on the simulated phone: {reasons}")
        super().__init__(registry={n: full[n] for n in wanted}, default_timeout=default_timeout)
