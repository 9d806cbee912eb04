"""Checks every simulated app's task tests run: names and templates against the benchmarks' own task lists,
the expert solving each task on several seeds, a start state that is not already a success, and a random
agent that rarely wins.

Shared by the ``test_app_*`` files and ``test_androidlab_tasks.py``; import it relatively
(``from .task_checks import check_expert_solves``), which works under pytest's ``--import-mode=importlib``.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from android_gym.actions import Action, Click, Finished, PressBack, Scroll, Type
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import Task, get_task_class, list_tasks
from android_gym.tasks.runner import run_expert, run_policy

LAUNCHER_PKG = "com.google.android.apps.nexuslauncher"
Policy = Callable[[Any], Action]


def android_world_metadata(realdata: Path) -> dict[str, dict[str, Any]]:
    """AndroidWorld's task metadata (template, difficulty, optimal steps), by task name."""
    rows = json.loads((realdata / "tasks" / "android_world" / "task_metadata.json").read_text())
    return {t["task_name"]: t for t in rows}


def androidlab_tasks(realdata: Path, *files: str) -> dict[str, dict[str, Any]]:
    """AndroidLab's task entries from its ``<file>.yaml`` lists, by task id."""
    lab_dir = realdata / "tasks" / "androidlab"
    return {t["task_id"]: t for f in files for t in yaml.safe_load((lab_dir / f"{f}.yaml").read_text())["tasks"]}


def check_android_world_tasks(realdata: Path, names: Iterable[str]) -> None:
    """Each task's template and difficulty are AndroidWorld's, and its step budget is twice the optimum or more."""
    meta = android_world_metadata(realdata)
    names = list(names)
    for name in names:
        cls = get_task_class(name)
        assert cls.template == meta[name]["task_template"], name
        assert cls.difficulty == meta[name]["difficulty"], name
        assert cls.suites == ("sim", "android_world")
        assert int(10 * cls.complexity) >= 2 * int(meta[name]["optimal_steps"]), name
    assert set(names) <= set(list_tasks("android_world"))


def check_androidlab_tasks(realdata: Path, file: str, names: Iterable[str], *, answers: bool = False) -> None:
    """Each task's text is the one in AndroidLab's ``<file>.yaml``; with ``answers``, so is whether it wants one."""
    lab = androidlab_tasks(realdata, file)
    names = list(names)
    for name in names:
        cls = get_task_class(name)
        assert cls.template == lab[name]["task"], name
        assert cls.suites == ("sim", "androidlab")
        if answers:
            assert cls.answer_task == (lab[name]["metric_type"] == "query_detect"), name
    assert set(names) <= set(list_tasks("androidlab"))


def check_expert_solves(name: str, seeds: int = 5) -> None:
    """The task's expert succeeds within the step budget on each of the first ``seeds`` seeds."""
    for seed in range(seeds):
        task = get_task_class(name)(seed=seed)
        result = run_expert(task, SimDevice(seed=seed))
        assert result.success == 1.0, (name, seed, task.goal, result.answer, [a.to_dict() for a in result.actions])
        assert result.steps <= task.max_steps


class AndroidWorldInstance(NamedTuple):
    task: Any  # the suite's task: AndroidWorld's own set-up and check behind the Task interface
    env: Any  # what AndroidWorld's utils take as ``env``
    suite: Any


def android_world_instance(name: str, seed: int, device: SimDevice) -> AndroidWorldInstance:
    """AndroidWorld's own instance of ``name`` for ``seed`` (episode 0), set up on ``device`` through the sim
    suite, absl's logging quieted."""
    from android_gym.suites.android_world_sim import AndroidWorldSimSuite

    logging.getLogger("absl").setLevel(logging.ERROR)
    suite = AndroidWorldSimSuite([name])
    env = suite.attach(device)
    task = suite.instance(name, seed, 0)
    task.initialize(device)
    return AndroidWorldInstance(task, env, suite)


def check_android_world_expert_solves(name: str, seeds: int = 3, *, start_must_score_zero: bool = True) -> None:
    """AndroidWorld's own instance of ``name`` on the sim, first ``seeds`` seeds: the expert solves it, and a fresh
    set-up is not already a success (scores 0, or with ``start_must_score_zero=False`` only below 1)."""
    from android_gym.suites.android_world_sim import AndroidWorldSimSuite

    logging.getLogger("absl").setLevel(logging.ERROR)
    suite = AndroidWorldSimSuite([name])
    for seed in range(seeds):
        device = SimDevice()
        suite.attach(device)
        task = suite.instance(name, seed, 0)
        task.initialize(device)  # once: the start is scored, then the expert plays from it
        if start_must_score_zero:
            assert task.is_successful(device) == 0.0, (name, seed, "scores before any action")
        else:
            assert task.is_successful(device) < 1.0, (name, seed, "solved before any action")
        result = run_expert(task, device, initialize=False)
        assert result.success == 1.0, (name, seed, task.goal, result.answer, result.steps,
                                       [a.to_dict() for a in result.actions][-4:])


def check_start_state(task: Task, read_state: Callable[[SimDevice], Any],
                      disturb: Callable[[SimDevice], None]) -> None:
    """Set-up leaves the home screen and a state that is not a success; after ``disturb`` it gives the same state."""
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device, None) == 0.0
    first = read_state(device)
    disturb(device)
    task.initialize(device)
    assert read_state(device) == first
    assert device.observe().package == LAUNCHER_PKG


def launch(package: str) -> Callable[[SimDevice], None]:
    """A ``disturb`` for ``check_start_state``: open the app ``package`` from the shell."""
    def open_app(device: SimDevice) -> None:
        device.shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")
    return open_app


def random_policy(rng: random.Random, *, type_len: tuple[int, int] = (3, 12), digit_answers: bool = False) -> Policy:
    """Uniform over: tap a clickable element, scroll, back, type random text, finish (rarely).

    ``digit_answers`` finishes with a random 10-digit answer (as if reading out a phone number) instead of none.
    """

    def policy(ui: Any) -> Action:
        r = rng.random()
        if r < 0.04:
            return Finished("".join(rng.choice("0123456789") for _ in range(10)) if digit_answers else None)
        if r < 0.14:
            return Scroll(rng.choice(["up", "down"]))
        if r < 0.2:
            return PressBack()
        if r < 0.28:
            return Type("".join(rng.choice("abcdefgh 0123456789") for _ in range(rng.randint(*type_len))))
        targets = [e for e in ui.elements if e.clickable] or list(ui.elements)
        x, y = rng.choice(targets).center
        return Click(int(x), int(y))

    return policy


def check_random_agent_rarely_succeeds(names: Iterable[str], make_policy: Callable[[int], Policy], *,
                                       episodes: int = 10, step_cap: int = 20, max_rate: float = 0.10) -> None:
    """A random agent (``make_policy(seed)``) solves at most ``max_rate`` of ``episodes`` short runs per task."""
    wins = runs = 0
    for name in names:
        for episode in range(episodes):
            task = get_task_class(name)(seed=episode)
            policy = make_policy(episode * 7919 + len(name))
            result = run_policy(task, SimDevice(), policy, max_steps=min(task.max_steps, step_cap))
            wins += result.success == 1.0
            runs += 1
    assert wins / runs <= max_rate, f"random agent solved {wins}/{runs}"
