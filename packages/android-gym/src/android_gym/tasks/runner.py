"""Play one task instance on a device with a policy, outside Gymnasium: set up, loop, score.

Used by tests (every expert must solve its task) and by data builders that need expert
trajectories without the env wrapper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from android_gym.actions import Action, Finished
from android_gym.tasks.base import Task
from android_gym.trajectory import Step, Trajectory

Policy = Callable[[Any], Action]


@dataclass
class EpisodeResult:
    success: float
    steps: int
    finished: bool
    answer: str | None
    trajectory: Trajectory
    actions: list[Action] = field(default_factory=list)


def observe_ui(device: Any, pixels: bool = False) -> Any:
    """The compressed UI of the device's current screen (what agents and experts read); with ``pixels``, a
    :class:`~android_gym.tasks.ocr.ScreenUI` that carries the screenshot too."""
    from android_gym.xml import compress_xml

    screen = device.observe(screenshot=pixels)
    ui = compress_xml(screen.xml, screen_size=(screen.width, screen.height))
    if pixels:
        from android_gym.tasks.ocr import ScreenUI

        return ScreenUI(ui, screen.screenshot)
    return ui


def run_expert(task: Task, device: Any, max_steps: int | None = None, *, initialize: bool = True) -> EpisodeResult:
    """Run ``task``'s scripted expert on ``device`` from ``task.initialize`` to its ``Finished`` action.

    ``initialize=False`` plays from the state the caller already set up with ``task.initialize(device)`` (to read
    or score the start first: some benchmark set-ups take seconds, e.g. AndroidWorld encoding MP3s or videos).
    """
    if initialize:
        task.initialize(device)
    pixels = bool(getattr(task, "reads_pixels", False))
    ui = observe_ui(device, pixels)
    generator = task.expert(ui)
    action = next(generator)

    def policy(ui_now: Any) -> Action:
        return generator.send(ui_now)

    return _play(task, device, policy, max_steps, first_action=action, first_ui=ui, pixels=pixels)


def run_policy(task: Task, device: Any, policy: Policy, max_steps: int | None = None) -> EpisodeResult:
    """Run any ``policy(ui) -> Action`` on ``task`` (e.g. a random agent)."""
    task.initialize(device)
    ui = observe_ui(device)
    return _play(task, device, policy, max_steps, first_action=policy(ui), first_ui=ui)


def _play(task: Task, device: Any, policy: Policy, max_steps: int | None, first_action: Action,
          first_ui: Any, pixels: bool = False) -> EpisodeResult:
    budget = max_steps if max_steps is not None else task.max_steps
    trajectory = Trajectory(task=task.name, instruction=task.goal, seed=task.seed)
    actions: list[Action] = []
    action, ui = first_action, first_ui
    answer: str | None = None
    finished = False
    for _ in range(budget):
        trajectory.steps.append(Step(ui=ui.text, action=action))
        actions.append(action)
        if isinstance(action, Finished):
            finished = True
            answer = action.text
            break
        try:
            device.execute(action)
        except ValueError as exc:  # e.g. an unknown app name: an invalid action, not a crash
            trajectory.steps[-1].parse_error = str(exc)
        ui = observe_ui(device, pixels)
        action = policy(ui)
    success = float(task.is_successful(device, answer)) if finished else 0.0
    trajectory.success = success
    trajectory.answer = answer
    trajectory.truncated = not finished
    task.teardown(device)
    return EpisodeResult(success, len(actions), finished, answer, trajectory, actions)
