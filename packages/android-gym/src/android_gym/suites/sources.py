"""Where an env's tasks come from: our registered tasks, AndroidWorld's package, or AndroidLab YAMLs.

A *task source* lists task names and gives the :class:`~android_gym.tasks.base.Task` class for each;
:func:`resolve_task_source` picks one for an env from its suite, its device and its arguments:

==================  ==========================  ==============================================================
suite               device "sim" / SimDevice    a real device (adb serial or any other Device)
==================  ==========================  ==============================================================
``android_world``   AndroidWorld's own tasks    AndroidWorld's own 116 tasks when ``android_world`` is
                    for the apps the sim models installed; without it, the re-creations when every requested
                    (:data:`~android_gym.suites.  task is one (with a warning), else an ImportError saying how
                    android_world_sim.SIM_TASKS)  to install it
                    when ``android_world`` is
                    installed; else (and for
                    requested tasks outside that
                    list) our re-creations, with
                    a note on how to get them
``androidlab``      re-creations (with          ``tasks_path``: AndroidLab's YAML tasks scored by a verifier;
                    ``tasks_path``: those whose without it: the re-creations
                    ids are in the YAMLs)
``sim``             the simulated suite         the simulated suite
==================  ==========================  ==============================================================

``task_source`` overrides "auto": ``"recreations"`` (our registered tasks on any device),
``"android_world"`` (the package, on any device), ``"androidlab"`` (the YAML tasks, on any device),
or a ready task source object (e.g. ``AndroidWorldSuite(registry={...})``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from android_gym.tasks.base import Task, get_task_class, list_tasks, unavailable_tasks

__all__ = ["TASK_SOURCES", "RegisteredTasks", "TaskSource", "androidlab_recreations", "is_sim_device",
           "resolve_task_source"]

TASK_SOURCES = ("auto", "recreations", "android_world", "androidlab")
"""The names ``task_source`` accepts (besides a task source object)."""

TasksPath = str | os.PathLike | Sequence[str | os.PathLike]


@runtime_checkable
class TaskSource(Protocol):
    """A list of task names and their task classes, for one suite."""

    suite: str

    def names(self) -> list[str]:
        """The task names, in a stable order."""
        ...

    def task_class(self, name: str) -> type[Task]:
        """The task class for ``name`` (KeyError/ValueError naming the problem otherwise)."""
        ...

    def attach(self, device: Any) -> Any:
        """Bind to the env's device (sources whose tasks need a device-side object make it here)."""
        ...


class RegisteredTasks:
    """Tasks of our registry in ``suite`` (``list_tasks(suite)``), optionally only ``names``."""

    def __init__(self, suite: str, names: Sequence[str] | None = None, adb_queries: dict[str, str] | None = None):
        every = list_tasks(suite, include_unavailable=True)  # ValueError for an unknown suite
        self.suite = suite
        self.adb_queries = dict(adb_queries or {})
        if names is None:
            cannot = unavailable_tasks(suite)  # left out: this machine cannot set them up (reset says why if asked)
            self._names = [n for n in every if n not in cannot]
        else:
            missing = [n for n in names if n not in every]
            if missing:
                raise ValueError(f"task(s) {missing} are not in suite {suite!r}")
            cannot = {n: get_task_class(n).unavailable_reason() for n in names}
            cannot = {n: reason for n, reason in cannot.items() if reason is not None}
            if cannot:  # said now, not in the middle of a run when the task's turn comes
                raise ValueError("task(s) this machine cannot set up: "
                                 + "; ".join(f"{n} {reason}" for n, reason in cannot.items()))
            self._names = list(names)

    def names(self) -> list[str]:
        """The task names."""
        return list(self._names)

    def task_class(self, name: str) -> type[Task]:
        """The registered class; KeyError for unknown names, ValueError for names outside this list."""
        cls = get_task_class(name)
        if name not in self._names:
            reason = cls.unavailable_reason() if self.suite in cls.suites else None
            if reason is not None:
                raise ValueError(f"task {name!r} cannot be set up on this machine: it {reason}")
            raise ValueError(f"task {name!r} is not in suite {self.suite!r}")
        return cls

    def attach(self, device: Any) -> None:
        """Nothing to bind."""

    def trace_probe(self, task: Task, device: Any) -> dict[str, Any]:
        """Per-step trace extras: the output of the task's AndroidLab ``adb_query`` when one was loaded."""
        if task.name not in self.adb_queries:
            return {}
        from android_gym.suites.androidlab import adb_query_probe

        return adb_query_probe(self.adb_queries[task.name], device)


def is_sim_device(device: Any) -> bool:
    """Whether ``device`` is the embedded simulated phone (``"sim"`` or a ``SimDevice``)."""
    if isinstance(device, str):
        return device == "sim"
    from android_gym.sim import SimDevice

    return isinstance(device, SimDevice)


def androidlab_recreations(tasks_path: TasksPath) -> RegisteredTasks:
    """Our simulated re-creations of the AndroidLab tasks listed in YAMLs (matched by task id).

    Ids without a re-creation are skipped with one warning naming them; none matching is a ValueError.
    """
    from android_gym.suites.androidlab import load_androidlab_tasks

    specs = load_androidlab_tasks(tasks_path)
    ids = [spec.task_id for spec in specs]
    available = set(list_tasks("androidlab"))
    matched = [i for i in ids if i in available]
    skipped = [i for i in ids if i not in available]
    if not matched:
        raise ValueError(f"none of the {len(ids)} AndroidLab tasks in {tasks_path} has a simulated re-creation "
                         f"(re-created: {sorted(available)})")
    if skipped:
        shown = ", ".join(skipped[:12]) + (f" and {len(skipped) - 12} more" if len(skipped) > 12 else "")
        warnings.warn(f"{len(skipped)} of {len(ids)} AndroidLab tasks have no simulated re-creation and are "
                      f"skipped: {shown}", RuntimeWarning, stacklevel=3)
    queries = {spec.task_id: spec.adb_query for spec in specs if spec.adb_query and spec.task_id in available}
    return RegisteredTasks("androidlab", matched, adb_queries=queries)


def resolve_task_source(suite: str, device: Any, task_source: Any = "auto", tasks_path: TasksPath | None = None,
                        task: str | Sequence[str] | None = None) -> Any:
    """The task source for an env of ``suite`` on ``device`` (see the module table)."""
    if not isinstance(task_source, str):
        for method in ("names", "task_class"):
            if not callable(getattr(task_source, method, None)):
                raise TypeError(f"task_source must be one of {TASK_SOURCES} or an object with names() and "
                                f"task_class(name), got {type(task_source).__name__}")
        return task_source
    if task_source not in TASK_SOURCES:
        raise ValueError(f"task_source must be one of {TASK_SOURCES} or a task source object, got {task_source!r}")
    if tasks_path is not None and suite != "androidlab":
        raise ValueError(f"tasks_path= is for AndroidLab task YAMLs (suite 'androidlab'), not suite {suite!r}")
    sim = is_sim_device(device)
    if suite == "android_world":
        return _android_world_source(device, task_source, sim, task)
    if suite == "androidlab":
        if task_source == "android_world":
            raise ValueError("task_source='android_world' needs suite 'android_world'")
        if tasks_path is None:
            if task_source == "androidlab":
                raise ValueError("task_source='androidlab' needs tasks_path= (AndroidLab's evaluation/config "
                                 "folder or its YAML files)")
            return RegisteredTasks("androidlab")
        if task_source == "recreations" or (task_source == "auto" and sim):
            return androidlab_recreations(tasks_path)
        from android_gym.suites.androidlab import AndroidLabSuite

        return AndroidLabSuite(tasks_path)
    if task_source in ("android_world", "androidlab"):
        raise ValueError(f"task_source={task_source!r} needs suite {task_source!r}, not {suite!r}")
    return RegisteredTasks(suite)


def _android_world_source(device: Any, task_source: str, sim: bool, task: str | Sequence[str] | None) -> Any:
    from android_gym.suites.android_world import (
        ANDROID_WORLD_INSTALL_HINT,
        AndroidWorldSuite,
        android_world_available,
    )

    if task_source == "androidlab":
        raise ValueError("task_source='androidlab' needs suite 'androidlab'")
    requested = [task] if isinstance(task, str) else list(task or [])
    if task_source == "recreations":
        return RegisteredTasks("android_world")
    if sim and task_source == "auto":
        return _android_world_on_sim(requested)
    if task_source == "android_world" or android_world_available():
        return AndroidWorldSuite()
    recreated = set(list_tasks("android_world"))
    if requested and all(name in recreated for name in requested):
        warnings.warn("android_world is not installed: running android-gym's simulated re-creations of "
                      f"{', '.join(requested)} on a real device (pass task_source='recreations' to say so and "
                      "silence this). To run AndroidWorld's own tasks: "
                      + ANDROID_WORLD_INSTALL_HINT.splitlines()[1].strip(), RuntimeWarning, stacklevel=4)
        return RegisteredTasks("android_world")
    raise ImportError(ANDROID_WORLD_INSTALL_HINT)


SIM_RECREATIONS_NOTE = (
    "AndroidWorld-v0 on the simulated phone is running android-gym's re-creations of AndroidWorld's tasks because "
    "the android_world package is not installed. To run AndroidWorld's own task code (its set-up and checks) on "
    "the sim, install it (not on PyPI): {hint}. Pass task_source='recreations' to choose the re-creations and "
    "silence this note."
)
"""The note shown when AndroidWorld-v0 on the sim falls back to our re-creations."""


def _android_world_on_sim(requested: list[str]) -> Any:
    """AndroidWorld's own tasks on the sim when the package is installed (and they run there), else re-creations."""
    from android_gym.suites.android_world import ANDROID_WORLD_INSTALL_HINT, android_world_available

    if not android_world_available():
        hint = ANDROID_WORLD_INSTALL_HINT.splitlines()[1].strip()
        warnings.warn(SIM_RECREATIONS_NOTE.format(hint=hint), RuntimeWarning, stacklevel=5)
        return RegisteredTasks("android_world")
    from android_gym.suites.android_world_sim import SIM_TASKS, AndroidWorldSimSuite, reason_not_on_sim

    outside = [n for n in requested if n not in SIM_TASKS]
    if not outside:
        return AndroidWorldSimSuite(requested or None)
    recreated = set(list_tasks("android_world"))
    if all(n in recreated for n in requested):
        reasons = "; ".join(f"{n}: {reason_not_on_sim(n)}" for n in outside)
        warnings.warn(f"running android-gym's re-creations of {', '.join(requested)}: AndroidWorld's own code for "
                      f"them does not run on the sim ({reasons}); pass task_source='recreations' to silence this",
                      RuntimeWarning, stacklevel=5)
        return RegisteredTasks("android_world", requested)
    return AndroidWorldSimSuite(requested)  # raises, naming why each task does not run on the sim
