"""``AndroidEnv``: one Gymnasium environment for every task suite and device."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from android_gym.actions import Action, ActionParseError, Finished, action_from_dict
from android_gym.device import Device, DeviceError
from android_gym.envs.spaces import AgentAction, UIElements, UnicodeText
from android_gym.suites.recording import EpisodeRecorder
from android_gym.suites.sources import resolve_task_source
from android_gym.tasks.base import Task, instance_seed

MAX_INSTRUCTION_CHARS = 4_096
MAX_ACTION_CHARS = 8_192
MAX_ELEMENTS = 4_096


class AndroidEnv(gym.Env):
    """
    ## Description
    An Android phone and a task on it: the agent reads the task instruction and the screen (a
    compressed UI tree, optionally the screenshot) and answers with one action per step, as text in
    any format android-gym parses (UI-TARS, AndroidLab, AndroidWorld JSON), as an ``Action`` or as its
    dict. The phone is the embedded simulated phone (``device="sim"``, the default), a real device
    or emulator given by its adb serial (``"emulator-5554"``, ``"127.0.0.1:5555"``: an
    :class:`~android_gym.drivers.AdbDevice`), or any ``Device`` object (e.g. from an ``EmulatorPool``).

    ## Action Space
    ``AgentAction(8192)``: the model's raw output (text of at most 8192 characters), or a typed
    ``Action`` or its ``to_dict()`` dict, for agents that parse replies themselves; ``action_space.contains``
    says which. Text that does not parse is a no-op step with ``invalid_action_penalty`` as reward and the
    reason in ``info["parse_error"]``.

    ## Observation Space
    ``Dict`` with ``instruction`` (``UnicodeText``), ``ui`` (``UnicodeText``: the compressed UI tree
    in ``ui_style``), ``elements`` (``UIElements``: the tuple of parsed UI elements that ``ui`` lists, in
    the order an index-format answer counts them) and, when ``screenshot=True``, ``screenshot``
    (``Box(0, 255, (H, W, 3), uint8)``). ``info`` carries the raw hierarchy XML (``xml``).

    ## Rewards
    On ``finished`` the task scores the device state (and the answer, for question tasks) in [0, 1];
    every other step gives 0, or ``invalid_action_penalty`` for an action that could not be parsed or
    performed. ``info["success"]`` is the score once the episode has terminated. With a ``verifier``
    (anything with ``verify(trajectory, device=, task=)`` returning a score or an object with
    ``.score``, or a callable with that signature) the verifier scores every episode instead, from
    ``env.trajectory`` and the device in its end state. Tasks without a rule check of their own
    (AndroidLab's YAML tasks) and no verifier give 0 with ``info["verified"] = False``: success unknown.

    ## Starting State
    ``reset`` picks a task (the ``task`` argument, ``options["task"]``, or uniformly from the suite),
    draws its parameters from the seed (AndroidWorld's per-instance seed rule), restores the phone to
    its clean state (the snapshot saved when the env was made; devices without whole-device
    snapshots, i.e. no emulator console, skip this and rely on the task's set-up) and runs the
    task's set-up through the device shell.

    ## Episode End
    ``terminated``: the agent emitted ``finished`` (with an optional answer). ``truncated``: the step
    budget (``max_steps``, default ``int(10 * task.complexity)``, never above ``max_steps_cap``) ran out, or
    the device failed (then ``info["error"]`` says how; the next ``reset`` reconnects). The task's teardown runs at the next
    ``reset`` or ``close`` (verifiers may probe the end state first). ``env.trajectory`` holds the
    episode so far (a :class:`~android_gym.trajectory.Trajectory`; screenshots kept when observed).

    ## Arguments
    ``suite`` ("sim", "android_world", "androidlab"), ``task`` (a name or list of names), ``device``
    ("sim" or a serial), ``screenshot`` (bool), ``ui_style`` ("androidlab", "mobilerl", "json"),
    ``max_steps`` (every task's budget instead of its own), ``max_steps_cap`` (at most this many steps
    whatever the budget: a trainer's "max turns"), ``invalid_action_penalty``, ``action_coordinates`` (how
    coordinates in text actions are read: "absolute", "relative1000" or "smart_resize"), ``screen_size`` (sim only), ``latency``
    and ``faults`` (sim only: a latency preset name or model, a fault injector), ``max_ui_chars``,
    ``render_mode`` ("rgb_array" or "ansi"). Real-device suites (:mod:`android_gym.suites`):
    ``task_source`` ("auto", "recreations", "android_world", "androidlab" or a task source object;
    "auto" runs AndroidWorld's own tasks from the installed ``android_world`` package: all of them on a
    real device, those of the apps the sim models on the sim (:data:`android_gym.suites.SIM_TASKS`);
    without the package, our simulated re-creations), ``tasks_path`` (AndroidLab task YAMLs: its
    ``evaluation/config`` folder or files; on the sim, the re-creations of the listed ids),
    ``verifier`` (the outcome verifier), ``record_dir`` (write every ended episode there as an
    AndroidLab trace folder, screenshots included).

    ## Version History
    * v0: initial release (the parsed UI elements are ``obs["elements"]``; earlier development versions put
      them in ``info["elements"]``).
    """

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 2}

    def __init__(
        self,
        suite: str = "sim",
        task: str | Sequence[str] | None = None,
        device: str | Device = "sim",
        screenshot: bool = False,
        ui_style: str = "androidlab",
        max_steps: int | None = None,
        max_steps_cap: int | None = None,
        invalid_action_penalty: float = -0.1,
        action_coordinates: str = "absolute",
        screen_size: tuple[int, int] = (1080, 2400),
        latency: Any = None,
        faults: Any = None,
        max_ui_chars: int = 100_000,
        render_mode: str | None = None,
        task_source: Any = "auto",
        tasks_path: Any = None,
        verifier: Any = None,
        record_dir: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.suite = suite
        if verifier is not None and not (callable(getattr(verifier, "verify", None)) or callable(verifier)):
            raise TypeError(f"verifier must have verify(trajectory, device=, task=) or be callable, "
                            f"got {type(verifier).__name__}")
        self.verifier = verifier
        self.task_source = resolve_task_source(suite, device, task_source, tasks_path, task)
        self.task_names = self._resolve_tasks(self.task_source, task)
        self.screenshot = bool(screenshot)
        self.ui_style = ui_style
        for name, value in (("max_steps", max_steps), ("max_steps_cap", max_steps_cap)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        self.max_steps_override = max_steps
        self.max_steps_cap = max_steps_cap
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.action_coordinates = action_coordinates
        self.max_ui_chars = int(max_ui_chars)
        self.render_mode = render_mode
        self.device: Device = self._make_device(device, screen_size, latency, faults)
        attach = getattr(self.task_source, "attach", None)
        if callable(attach):
            attach(self.device)
        self.recorder = EpisodeRecorder(record_dir, keep_screenshots=bool(screenshot))
        self.trajectory: Any = None
        self._teardown_pending = False
        # A device without whole-device snapshots (a phone over USB or adb-over-network: no emulator
        # console) keeps no clean state; each task's initialize() then sets up what it needs.
        self._clean_snapshot = bool(getattr(self.device, "supports_snapshots", True))
        if self._clean_snapshot:
            try:
                self.device.snapshot_save(_CLEAN_SNAPSHOT)
            except DeviceError as exc:  # e.g. an emulator started with -read-only refusing snapshot saves
                warnings.warn(f"device {self.device.serial}: cannot save a clean snapshot ({exc}); episodes "
                              "start from each task's own set-up instead", RuntimeWarning, stacklevel=2)
                self._clean_snapshot = False
        width, height = self.device.screen_size

        observation = {
            "instruction": UnicodeText(MAX_INSTRUCTION_CHARS),
            "ui": UnicodeText(self.max_ui_chars),
            "elements": UIElements(MAX_ELEMENTS, screen_size=(width, height)),
        }
        if self.screenshot:
            observation["screenshot"] = spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8)
        self.observation_space = spaces.Dict(observation)
        self.action_space = AgentAction(MAX_ACTION_CHARS)

        self.task: Task | None = None
        self._ui: Any = None
        self._screen: Any = None
        self._steps = 0
        self._done = True
        self._expert: Any = None
        self._expert_suggestion: Action | None = None
        self._last_action: Action | None = None
        self._needs_recovery = False
        self._ui_cache = _RecentUICache()

    # --- construction helpers ----------------------------------------------------------------
    @staticmethod
    def _resolve_tasks(source: Any, task: str | Sequence[str] | None) -> list[str]:
        available = source.names()
        if task is None:
            return available
        names = [task] if isinstance(task, str) else list(task)
        for name in names:
            source.task_class(name)  # clear error for unknown names
            if name not in available:
                raise ValueError(f"task {name!r} is not in suite {source.suite!r}")
        if not names:
            raise ValueError("task list is empty")
        return names

    @staticmethod
    def _make_device(device: str | Device, screen_size: tuple[int, int], latency: Any, faults: Any) -> Device:
        if not isinstance(device, str):
            return device
        if device == "sim":
            from android_gym.sim import SimDevice, SimPhone

            width, height = screen_size
            return SimDevice(SimPhone(width=width, height=height, latency=latency, faults=faults))
        from android_gym.drivers.adb import AdbDevice

        return AdbDevice(device)  # an adb serial: "emulator-5554", "127.0.0.1:5555", a USB serial

    # --- Gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"task", "params", "instance"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; expected task, params, instance")
        name = options.get("task")
        if name is None:
            name = self.task_names[int(self.np_random.integers(len(self.task_names)))]
        task_cls = self.task_source.task_class(name)
        if name not in self.task_source.names():
            raise ValueError(f"task {name!r} is not in suite {self.suite!r}")
        instance = options.get("instance", int(self.np_random.integers(2**31)))
        task_seed = instance_seed(0 if seed is None else seed, name, instance)
        # Tasks draw their own parameters from the seed when none are given (AndroidWorld's tasks seed
        # the global random module the way its suite_utils does; ours use random.Random(task_seed)).
        self._end_episode(truncated=True)
        self._run_teardown()
        self.task = task_cls(options.get("params"), seed=task_seed)

        for attempt in range(_RESET_ATTEMPTS):
            try:
                self._recover_device()
                if self._clean_snapshot:
                    self.device.snapshot_load(_CLEAN_SNAPSHOT)
                self.task.initialize(self.device)
                self._observe()
                break
            except DeviceError:
                self._needs_recovery = True
                if attempt == _RESET_ATTEMPTS - 1:
                    raise
        self._teardown_pending = True
        self._steps = 0
        self._done = False
        self._expert = None
        self._expert_suggestion = None
        self._last_action = None
        self.trajectory = self.recorder.begin(self.task, (self._screen.width, self._screen.height), self.suite)
        return self._observation(), self._info(success=0.0)

    def step(self, action: str | Action | dict):
        if self.task is None or self._done:
            raise RuntimeError("step() called before reset() or after the episode ended; call reset() first")
        self._steps += 1
        reward = 0.0
        terminated = False
        truncated = False
        extra: dict[str, Any] = {}
        success = 0.0

        parsed: Action | None = None
        try:
            parsed = self._parse(action)
        except ActionParseError as exc:
            extra["parse_error"] = str(exc)
            reward = self.invalid_action_penalty
        self._record_step(action, parsed, extra.get("parse_error"))

        if parsed is not None:
            extra["action"] = parsed.to_dict()
            self._advance_expert(parsed)
            try:
                if isinstance(parsed, Finished):
                    try:
                        success, verified = self._score(parsed.text)
                    except (DeviceError, KeyboardInterrupt):
                        raise
                    except Exception as exc:  # a failing check scores 0 (AndroidWorld counts it failed)
                        success, verified = 0.0, False
                        extra["error"] = f"task check failed: {type(exc).__name__}: {exc}"
                    if not verified:
                        extra["verified"] = False
                    reward = success
                    terminated = True
                else:
                    self.device.execute(parsed)
            except DeviceError as exc:
                extra["error"] = f"{type(exc).__name__}: {exc}"
                truncated = True
                self._needs_recovery = True
            except ValueError as exc:  # a well-formed action the device cannot perform (unknown app, ...)
                extra["parse_error"] = str(exc)
                reward = self.invalid_action_penalty

        if not truncated:
            try:
                self._observe()
            except DeviceError as exc:
                extra["error"] = f"{type(exc).__name__}: {exc}"
                truncated = True
                self._needs_recovery = True
        if not terminated and self._steps >= self._budget():
            truncated = True
        self._done = terminated or truncated
        info = self._info(success=success)
        info.update(extra)
        if self._done:
            folder = self._end_episode(truncated=not terminated, success=success,
                                       answer=parsed.text if isinstance(parsed, Finished) else None,
                                       error=extra.get("error"), verified=extra.get("verified", True))
            if folder is not None:
                info["trace_dir"] = str(folder)
        return self._observation(), reward, terminated, truncated, info

    def render(self):
        if self.render_mode == "ansi":
            return self._ui.text if self._ui is not None else ""
        if self.render_mode == "rgb_array":
            screen = self.device.observe(screenshot=True)
            return screen.screenshot
        return None

    def close(self):
        device = getattr(self, "device", None)
        if device is not None:
            self._end_episode(truncated=True)
            self._run_teardown()
            device.close()

    # --- expert --------------------------------------------------------------------------------
    def expert_action(self) -> Action:
        """The task's scripted expert's next action from the current screen.

        The expert follows its plan while the agent takes the actions it suggests; after any other
        action it re-plans from the current screen (best effort: experts assume they start on a
        screen they can navigate from, which holds after ``reset``).
        """
        if self.task is None or self._done:
            raise RuntimeError("expert_action() needs an episode in progress; call reset() first")
        if self._expert_suggestion is None:
            ui = self._ui
            if getattr(self.task, "reads_pixels", False):  # its expert reads the screenshot too
                from android_gym.tasks.ocr import ScreenUI

                shot = self._screen.screenshot if self._screen is not None else None
                if shot is None:
                    shot = self.device.observe(screenshot=True).screenshot
                ui = ScreenUI(ui, shot)
            if self._expert is None:
                self._expert = self.task.expert(ui)
                self._expert_suggestion = next(self._expert)
            else:
                self._expert_suggestion = self._expert.send(ui)
        return self._expert_suggestion

    def _advance_expert(self, action: Action) -> None:
        if self._expert_suggestion is not None and action != self._expert_suggestion:
            self._expert = None  # the agent left the expert's plan: re-plan next time
        self._expert_suggestion = None

    # --- internals -----------------------------------------------------------------------------
    def _budget(self) -> int:
        assert self.task is not None
        budget = self.max_steps_override or self.task.max_steps
        return budget if self.max_steps_cap is None else min(budget, self.max_steps_cap)

    def _parse(self, action: str | Action | dict) -> Action:
        if isinstance(action, Action):
            return action
        if isinstance(action, dict):
            return action_from_dict(action)
        if isinstance(action, str):
            from android_gym.actions.parse import parse_action

            return parse_action(
                action,
                screen_size=self.device.screen_size,
                coordinates=self.action_coordinates,
                elements=self._ui.elements if self._ui is not None else None,
            )
        raise ActionParseError(f"an action must be text, an Action or a dict, got {type(action).__name__}")

    def _score(self, answer: str | None) -> tuple[float, bool]:
        """(score, verified): the verifier's score, else the task's own check, else (0, False)."""
        assert self.task is not None
        if self.verifier is not None:
            verify = getattr(self.verifier, "verify", None)
            if self.trajectory is not None:
                self.trajectory.answer = answer
            judge = verify if callable(verify) else self.verifier
            verdict = judge(self.trajectory, device=self.device, task=self.task)
            score = float(getattr(verdict, "score", verdict))
            if not 0.0 <= score <= 1.0:
                raise ValueError(f"the verifier returned {score}, not a score in [0, 1]")
            return score, True
        if type(self.task).is_successful is Task.is_successful:  # no rule check (AndroidLab YAML tasks)
            return 0.0, False
        return float(self.task.is_successful(self.device, answer)), True

    def _record_step(self, raw: Any, parsed: Action | None, parse_error: str | None) -> None:
        if self.trajectory is None or self.task is None:
            return
        info: dict[str, Any] = {}
        probe = getattr(self.task_source, "trace_probe", None)
        if callable(probe):
            try:
                info.update(probe(self.task, self.device))
            except DeviceError:
                pass  # the step itself will meet the failure and report it
        self.recorder.add_step(self._screen, self._ui, parsed, response=raw if isinstance(raw, str) else "",
                               parse_error=parse_error, info=info)

    def _end_episode(self, truncated: bool, success: float = 0.0, answer: str | None = None,
                     error: str | None = None, verified: bool = True) -> Any:
        return self.recorder.end(success=success, answer=answer, truncated=truncated, error=error,
                                 verified=verified)

    def _run_teardown(self) -> None:
        if not self._teardown_pending or self.task is None:
            return
        self._teardown_pending = False
        if self._needs_recovery:
            return  # the device failed: the next set-up starts from recovery, not from this task's state
        try:
            self.task.teardown(self.device)
        except DeviceError:
            self._needs_recovery = True
        except Exception as exc:  # a task's clean-up failing must not stop the next episode
            warnings.warn(f"teardown of task {self.task.name} failed: {type(exc).__name__}: {exc}",
                          RuntimeWarning, stacklevel=3)

    def _observe(self) -> None:
        from android_gym.xml import compress_xml

        self._screen = self.device.observe(screenshot=self.screenshot or self.recorder.keep_screenshots)
        # Agents revisit screens all the time (back and forth, no-op steps): a dump identical to one seen
        # lately gets the same compression again (compress_xml is a pure function of these arguments).
        key = (self._screen.xml, self.ui_style, self._screen.width, self._screen.height)
        ui = self._ui_cache.get(key)
        if ui is None:
            ui = compress_xml(self._screen.xml, style=self.ui_style,
                              screen_size=(self._screen.width, self._screen.height))
            self._ui_cache.put(key, ui)
        self._ui = ui

    def _recover_device(self) -> None:
        if not self._needs_recovery:
            return
        recover = getattr(self.device, "recover", None)
        if recover is None:
            raise DeviceError("the device failed and its driver cannot recover; create a new env")
        recover()
        self._needs_recovery = False

    def _observation(self) -> dict[str, Any]:
        assert self.task is not None
        ui_text = self._ui.text
        if len(ui_text) > self.max_ui_chars:
            marker = "\n...(truncated)"
            ui_text = ui_text[: self.max_ui_chars - len(marker)] + marker
        obs: dict[str, Any] = {"instruction": self.task.goal[:MAX_INSTRUCTION_CHARS], "ui": ui_text,
                               "elements": tuple(self._ui.elements[:MAX_ELEMENTS])}
        if self.screenshot:
            obs["screenshot"] = self._screen.screenshot
        return obs

    def _info(self, success: float) -> dict[str, Any]:
        assert self.task is not None
        return {
            "task": self.task.name,
            "goal": self.task.goal,
            "params": dict(self.task.params),
            "step": self._steps,
            "max_steps": self._budget(),
            "success": success,
            "xml": self._screen.xml,
            "activity": self._screen.activity,
        }


class _RecentUICache:
    """The compressions of the last few distinct dumps, keyed on (xml, style, width, height)."""

    __slots__ = ("_entries",)
    SIZE = 16

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[str, str, int, int], Any] = OrderedDict()

    def get(self, key: tuple[str, str, int, int]) -> Any:
        """The cached compression for ``key`` (marked most recent), or None."""
        ui = self._entries.get(key)
        if ui is not None:
            self._entries.move_to_end(key)
        return ui

    def put(self, key: tuple[str, str, int, int], ui: Any) -> None:
        """Remember ``ui`` for ``key``, forgetting the least recently used entry beyond `SIZE`."""
        entries = self._entries
        entries[key] = ui
        if len(entries) > self.SIZE:
            entries.popitem(last=False)


_CLEAN_SNAPSHOT = "android_gym_clean"
_RESET_ATTEMPTS = 3  # a device that fails this many resets in a row is reported, not retried forever
