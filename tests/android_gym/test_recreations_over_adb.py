"""Every re-created task (AndroidWorld's, AndroidLab's and the sim's own) through the path a real emulator takes.

Each task runs in ``gym.make(..., device=<serial>, task_source="recreations")`` over an ``AdbDevice``, which speaks
to the real adb server (Debian's ``adb`` binary), which speaks to the simulated phone's adbd (``SimAdbd``, what
``android-gym sim-adbd`` serves): the set-up (reset), the check on the start state (it must score what the same instance's start scores
in-process), the scripted expert and the check at the end. So a real device never meets a path only the in-process ``SimDevice`` has exercised (it met
three: ``adbutils_device()`` called as a method, ``device.push`` missing on ``AdbDevice``, and an expert typing an
accented name that ``input text`` cannot type).

Every task runs its expert: all 241 take about 1.5 min on one core. Each test has its own phone and adbd on free
ports and each worker its own adb server (``host_adb``), so the tests need no xdist group.
"""

from __future__ import annotations

import logging

import gymnasium as gym
import pytest

from android_gym.adbd import SimAdbd
from android_gym.sim import SimDevice, SimPhone
from android_gym.tasks import get_task_class, list_tasks

ENV_OF_SUITE = {"android_world": "android_gym:AndroidWorld-v0", "androidlab": "android_gym:AndroidLab-v0",
                "sim": "android_gym:AndroidSim-v0"}


def _every_task() -> list[tuple[str, str]]:
    """(suite, task) for every registered re-creation, each task once (the sim's own suite last)."""
    seen: set[str] = set()
    cases = []
    for suite in ENV_OF_SUITE:
        for name in list_tasks(suite, include_unavailable=True):
            if name not in seen:
                seen.add(name)
                cases.append((suite, name))
    return cases


CASES = _every_task()


@pytest.fixture(autouse=True)
def _quiet_absl():
    logging.getLogger("absl").setLevel(logging.ERROR)


def test_every_suite_has_its_recreations_here():
    suites = {suite for suite, _ in CASES}
    assert suites == set(ENV_OF_SUITE)
    assert len(CASES) >= 240 and len({name for _, name in CASES}) == len(CASES)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # gymnasium's passive checker on the info dicts
@pytest.mark.parametrize(("suite", "name"), CASES, ids=[name for _, name in CASES])
def test_recreation_sets_up_is_solved_and_checked_over_real_adb(host_adb, suite, name):
    from android_gym.drivers import AdbDevice

    reason = get_task_class(name).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{name} cannot be set up on this machine: it {reason}")
    adbd = SimAdbd(SimDevice(SimPhone()), port=0, console_port=0, adb_server_port=host_adb.server_port,
                   auth_token_path=host_adb.token_path, announce=True).start()
    device = AdbDevice(adbd.serial, adb_port=host_adb.server_port, console_token_path=host_adb.token_path,
                       timeout=15.0)
    env = local = None
    try:
        # the same instance in-process: its start scores what the start over adb must score (0, or 1 for the
        # *Verify tasks, which start in their goal state)
        local = gym.make(ENV_OF_SUITE[suite], device=SimDevice(SimPhone()), task_source="recreations", task=name)
        local.reset(seed=3)
        local_task = local.unwrapped.task
        start_in_process = local_task.is_successful(local.unwrapped.device, None)
        env = gym.make(ENV_OF_SUITE[suite], device=device, task_source="recreations", task=name)
        _, info = env.reset(seed=3)
        unwrapped = env.unwrapped
        assert unwrapped.device is device and unwrapped.task.name == name
        assert unwrapped.task.params == local_task.params
        assert unwrapped.task.is_successful(device, None) == start_in_process
        assert start_in_process < 1.0 or name.endswith("Verify"), "solved before the expert acted"
        terminated = truncated = False
        reward, steps = 0.0, 0
        while not (terminated or truncated):
            _, reward, terminated, truncated, info = env.step(unwrapped.expert_action())
            steps += 1
        assert "error" not in info, info.get("error")
        assert terminated and reward == 1.0, f"{name}: reward {reward} after {steps} steps ({info})"
    finally:
        for made in (env, local):
            if made is not None:
                made.close()
        device.close()
        adbd.stop()
