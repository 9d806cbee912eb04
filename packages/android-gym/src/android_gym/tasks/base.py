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
    requires: ClassVar[tuple[str, ...]] = ()
    """Optional Python modules its set-up imports (keys of :data:`android_gym.extras.OPTIONAL_MODULES`)."""

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this task cannot be set up on this machine (a missing extra or program); None when it can."""
        from android_gym.extras import missing_module_reason

        for module in cls.requires:
            reason = missing_module_reason(module)
            if reason is not None:
                return reason
        return None

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


def list_tasks(suite: str = "sim", *, include_unavailable: bool = False) -> list[str]:
    """Names of the tasks in ``suite`` ("sim", "android_world" or "androidlab"), sorted.

    Tasks this machine cannot set up (a missing android-gym extra such as ``video``, or a missing program such
    as chromium: :func:`unavailable_tasks` says which and why) are left out, with one warning per process naming
    them, so that running every listed task never stops in the middle; ``include_unavailable=True`` lists them.
    """
    _load_builtin_tasks()
    known = {s for cls in TASK_REGISTRY.values() for s in cls.suites}
    if suite not in known:
        raise ValueError(f"unknown suite {suite!r}; known suites: {sorted(known)}")
    names = sorted(name for name, cls in TASK_REGISTRY.items() if suite in cls.suites)
    if include_unavailable:
        return names
    missing = unavailable_tasks(suite)
    if missing:
        _warn_left_out(suite, missing)
    return [name for name in names if name not in missing]


def unavailable_tasks(suite: str = "sim") -> dict[str, str]:
    """The tasks of ``suite`` this machine cannot set up, each with why (and the command that fixes it)."""
    names = list_tasks(suite, include_unavailable=True)
    reasons = {name: TASK_REGISTRY[name].unavailable_reason() for name in names}
    return {name: reason for name, reason in reasons.items() if reason is not None}


_WARNED: set[tuple[str, ...]] = set()


def _warn_left_out(suite: str, missing: dict[str, str]) -> None:
    key = (suite, *sorted(missing))
    if key in _WARNED:
        return
    _WARNED.add(key)
    import warnings

    listed = "; ".join(f"{name} {reason}" for name, reason in sorted(missing.items()))
    warnings.warn(f"list_tasks({suite!r}) leaves out {len(missing)} task(s) this machine cannot set up: {listed} "
                  "(list_tasks(..., include_unavailable=True) lists them)", RuntimeWarning, stacklevel=3)


def _load_builtin_tasks() -> None:
    import android_gym.tasks.sim  # noqa: F401  (registers the simulated suite)
