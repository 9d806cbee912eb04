"""The task contract: goal text from seeded parameters, set-up and rule checks through a device's shell, and a scripted expert.

A task talks to a device only the way Android tooling does (``device.shell(...)``: ``content query``,
``settings get``, files under /sdcard), so one check runs against the in-process simulated phone,
the simulated phone behind ``adb``, and a real emulator where its apps expose the same state.

Experts are generators: ``expert(ui)`` gets the first observation (a ``CompressedUI``), each
``yield`` hands out the next action and receives the next observation, so an expert acts only on
what it observes (helpers in :mod:`android_gym.tasks.expert`)::

    def expert(self, ui):
        ui = yield OpenApp("Settings")
        ui = yield from tap_text(ui, "Network & internet")
        yield Finished()
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, ClassVar

from android_gym.actions import Action

if TYPE_CHECKING:  # pragma: no cover
    from android_gym.device import Device

ExpertGenerator = Generator[Action, Any, None]

DIFFICULTIES = ("easy", "medium", "hard")


class TaskError(RuntimeError):
    """A task could not be set up or checked (the device state is not what the task expected)."""


def instance_seed(seed: int, task_name: str, instance: int) -> int:
    """AndroidWorld's per-instance seed: sha256 of ``f"{seed}_{task_name}_{instance}"`` mod 2**32."""
    digest = hashlib.sha256(f"{seed}_{task_name}_{instance}".encode()).hexdigest()
    return int(digest, 16) % (2**32)


class Task:
    """One parametrised task. Subclasses set the class attributes and implement the hooks.

    Class attributes (AndroidWorld's contract plus ours): ``name`` (AndroidWorld's name for
    re-creations), ``template`` (goal with ``{param}`` fields), ``difficulty`` (easy|medium|hard),
    ``complexity`` (step budget is ``int(10 * complexity)``), ``app_names``, ``suites`` (which suites
    list it: "sim" always; "android_world"/"androidlab" for re-creations), ``answer_task`` (scored on
    the agent's answer).
    """

    name: ClassVar[str] = ""
    template: ClassVar[str] = ""
    difficulty: ClassVar[str] = "easy"
    complexity: ClassVar[float] = 1.0
    app_names: ClassVar[tuple[str, ...]] = ()
    suites: ClassVar[tuple[str, ...]] = ("sim",)
    answer_task: ClassVar[bool] = False
    reads_pixels: ClassVar[bool] = False
    """Its expert reads the screenshot too (its observations are :class:`~android_gym.tasks.ocr.ScreenUI`)."""

    def __init__(self, params: dict[str, Any] | None = None, *, seed: int | None = None):
        if params is None:
            params = self.generate_random_params(random.Random(seed))
        self.params: dict[str, Any] = dict(params)
        self.seed = seed

    # --- parameters and goal -------------------------------------------------------------------
    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        """Random parameters for one instance; ``rng`` is seeded by the caller."""
        return {}

    @property
    def goal(self) -> str:
        """The instruction shown to the agent."""
        return self.template.format(**self.params)

    @property
    def max_steps(self) -> int:
        return max(1, int(10 * self.complexity))

    # --- device hooks --------------------------------------------------------------------------
    def initialize(self, device: Device) -> None:
        """Put the device in the task's starting state (through ``device.shell``)."""

    def is_successful(self, device: Device, answer: str | None = None) -> float:
        """Score in [0, 1] from the device state (and the agent's answer for question tasks)."""
        raise NotImplementedError

    def teardown(self, device: Device) -> None:
        """Undo what ``initialize`` did when it matters for the next task on the same device."""

    # --- scripted expert -----------------------------------------------------------------------
    def expert(self, ui: Any) -> ExpertGenerator:
        """A generator over the first observation ``ui`` yielding actions; it receives the next UI after each."""
        raise NotImplementedError(f"task {self.name} has no scripted expert")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"


# --- registry ------------------------------------------------------------------------------------

TASK_REGISTRY: dict[str, type[Task]] = {}


def register_task(cls: type[Task]) -> type[Task]:
    """Class decorator adding a task to the registry under ``cls.name`` (names are unique)."""
    if not cls.name:
        raise ValueError(f"task class {cls.__name__} has no name")
    if cls.difficulty not in DIFFICULTIES:
        raise ValueError(f"task {cls.name}: difficulty must be one of {DIFFICULTIES}")
    existing = TASK_REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"task name {cls.name!r} is registered twice ({existing.__name__}, {cls.__name__})")
    TASK_REGISTRY[cls.name] = cls
    return cls


def get_task_class(name: str) -> type[Task]:
    """The registered task class called ``name``; a clear error listing close names otherwise."""
    _load_builtin_tasks()
    try:
        return TASK_REGISTRY[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, TASK_REGISTRY, n=5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; see android_gym.list_tasks()"
        raise KeyError(f"unknown task {name!r}{hint}") from None


def list_tasks(suite: str = "sim") -> list[str]:
    """Names of the tasks in ``suite`` ("sim", "android_world" or "androidlab"), sorted."""
    _load_builtin_tasks()
    known = {s for cls in TASK_REGISTRY.values() for s in cls.suites}
    if suite not in known:
        raise ValueError(f"unknown suite {suite!r}; known suites: {sorted(known)}")
    return sorted(name for name, cls in TASK_REGISTRY.items() if suite in cls.suites)


def _load_builtin_tasks() -> None:
    import android_gym.tasks.sim  # noqa: F401  (registers the simulated suite)
