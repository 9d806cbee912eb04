"""Settings and launcher tasks on the simulated phone: experts solve them through SimDevice, random agents rarely do."""

from __future__ import annotations

import json
import random

import pytest

from android_gym.actions import Click, Finished, PressBack, Scroll
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY, list_tasks
from android_gym.tasks.runner import run_expert, run_policy
from android_gym.tasks.sim import settings as settings_tasks
from android_gym.tasks.sim import system as system_tasks

MODULES = (settings_tasks.__name__, system_tasks.__name__)
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ in MODULES)
AW_NAMES = [
    "SystemWifiTurnOn", "SystemWifiTurnOff", "SystemBluetoothTurnOn", "SystemBluetoothTurnOff",
    "SystemBrightnessMax", "SystemBrightnessMin", "TurnOffWifiAndTurnOnBluetooth", "TurnOnWifiAndOpenApp",
    "OpenAppTaskEval", "SystemWifiTurnOnVerify", "SystemWifiTurnOffVerify", "SystemBluetoothTurnOnVerify",
    "SystemBluetoothTurnOffVerify", "SystemBrightnessMaxVerify", "SystemBrightnessMinVerify",
]


def test_androidworld_names_and_templates_match_the_metadata(realdata):
    meta = {t["task_name"]: t for t in json.loads(
        (realdata / "tasks" / "android_world" / "task_metadata.json").read_text())}
    for name in AW_NAMES:
        cls = TASK_REGISTRY[name]
        assert cls.template == meta[name]["task_template"], name
        assert cls.difficulty == meta[name]["difficulty"], name
        assert cls.suites == ("sim", "android_world")
        budget = int(10 * cls.complexity)
        assert budget >= 2 * int(meta[name]["optimal_steps"]), name
    assert set(AW_NAMES) <= set(list_tasks("android_world"))
    assert set(NAMES) <= set(list_tasks("sim"))


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_several_seeds(name):
    for seed in range(3):
        task = TASK_REGISTRY[name](seed=seed)
        device = SimDevice(seed=seed)
        result = run_expert(task, device)
        assert result.success == 1.0, (name, seed, task.goal, [a.to_dict() for a in result.actions])
        assert result.steps <= task.max_steps


@pytest.mark.parametrize("name", ["SystemWifiTurnOn", "SystemBrightnessMin", "TurnOffWifiAndTurnOnBluetooth"])
def test_initialize_sets_the_opposite_state_so_doing_nothing_fails(name):
    task = TASK_REGISTRY[name](seed=0)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device) < 1.0
    assert device.observe().package == "com.google.android.apps.nexuslauncher"


def test_verify_tasks_start_in_the_goal_state():
    for name in [n for n in AW_NAMES if n.endswith("Verify")]:
        task = TASK_REGISTRY[name](seed=0)
        device = SimDevice()
        task.initialize(device)
        assert task.is_successful(device) == 1.0, name


def test_answer_task_scores_the_answer():
    task = TASK_REGISTRY["SimAndroidVersionQuestion"](seed=0)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device, "13") == 1.0
    assert task.is_successful(device, "Android 13") == 1.0
    assert task.is_successful(device, "12") == 0.0
    assert task.is_successful(device, None) == 0.0


def random_policy(rng: random.Random):
    """Taps random actionable elements, sometimes scrolls or goes back, finishes with small probability."""

    def policy(ui):
        r = rng.random()
        if r < 0.05:
            return Finished()
        if r < 0.15:
            return Scroll(rng.choice(["up", "down"]))
        if r < 0.2:
            return PressBack()
        targets = [e for e in ui.elements if e.clickable] or list(ui.elements)
        x, y = rng.choice(targets).center
        return Click(int(x), int(y))

    return policy


def test_random_agent_rarely_succeeds():
    names = [n for n in NAMES if not n.endswith("Verify") and n != "SimAndroidVersionQuestion"]
    wins = runs = 0
    for name in names:
        for seed in range(4):
            task = TASK_REGISTRY[name](seed=seed)
            result = run_policy(task, SimDevice(seed=seed), random_policy(random.Random(seed * 31 + len(name))))
            wins += result.success == 1.0
            runs += 1
    assert wins / runs < 0.15, f"random agent solved {wins}/{runs}"
