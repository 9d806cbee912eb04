"""AndroidWorld's own tasks on our devices: its registry, its seeding, its checks; our observations and actions.

When the ``android_world`` package is installed, ``AndroidWorld-v0`` on a real device (an emulator
or phone behind adb) runs the package's task classes (116 in the ``android_world`` family) instead of
our simulated re-creations. Each task is instantiated exactly as AndroidWorld's ``suite_utils`` does
it: ``set_device_time``, ``random.seed(instance_seed)``, ``generate_random_params()`` and
``params["seed"] = instance_seed`` with the per-instance seed ``sha256(f"{seed}_{name}_{i}") % 2**32``;
``initialize_task(env)``, ``is_successful(env)`` (only counted when the agent signalled done) and
``tear_down(env)`` run the package's own code. The agent still sees our compressed UI tree and its
actions are executed by our driver.

AndroidWorld tasks talk to the device through an ``env`` object (its ``interface.AsyncEnv``):
``env.controller`` takes android_env ``AdbRequest`` protos (``adb_utils.*`` helpers build them),
``env.get_state()`` gives the screen's ``ui_elements``, ``env.interaction_cache`` holds the agent's
answer. :class:`AndroidWorldEnvAdapter` is that object over any of our :class:`~android_gym.device.Device`
drivers: requests are parsed by android_env's own ``AdbCallParser`` into adb command lines, and
:class:`AdbCommandRunner` runs those command lines on the device (``shell``, ``push``, ``pull``,
``install``, ``root``, ``emu``...), the way android_env's ``AdbController`` would run the adb binary.

Without the package, :func:`require_android_world` raises an ImportError saying how to install it.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import weakref
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from android_gym.actions import Action, Click
from android_gym.device import Device, DeviceError
from android_gym.suites.sim_experts import SIM_TASKS, expert_class, reason_not_on_sim, sim_expert_task
from android_gym.tasks.base import ExpertGenerator, Task, instance_seed

__all__ = [
    "ANDROID_WORLD_INSTALL_HINT",
    "AdbCommandError",
    "AdbCommandRunner",
    "AndroidWorldControllerAdapter",
    "AndroidWorldEnvAdapter",
    "AndroidWorldSuite",
    "AndroidWorldTask",
    "BoundingBox",
    "UIElementRecord",
    "android_world_available",
    "android_world_params",
    "a11y_order",
    "forest_from_xml",
    "require_android_world",
    "ui_elements_from_xml",
]

ANDROID_WORLD_INSTALL_HINT = (
    "AndroidWorld's own tasks need the android_world package, which is not on PyPI:\n"
    "  pip install git+https://github.com/google-research/android_world\n"
    "  pip install android_env==1.2.3 dm_env absl-py fuzzywuzzy immutabledict jsonschema pandas pydub "
    "tenacity termcolor requests opencv-python-headless python-Levenshtein\n"
    "(its setup needs setuptools<81 and grpcio-tools for the protos: pip install 'setuptools<81' "
    "grpcio-tools==1.71.0, then install it with --no-build-isolation). Then start an emulator the way "
    "AndroidWorld documents: a Pixel 6 AVD on API 33 named AndroidWorldAvd, "
    "'emulator -avd AndroidWorldAvd -no-snapshot -grpc 8554', and run its one-time app setup "
    "(python run.py --perform_emulator_setup). To run our simulated re-creations of its tasks "
    "instead, pass task_source='recreations' (or use device='sim')."
)
"""What to do when ``android_world`` is missing (the text of the ImportError)."""

DEFAULT_FAMILY = "android_world"
"""AndroidWorld's registry family with all 116 tasks (``TaskRegistry.ANDROID_WORLD_FAMILY``)."""


def android_world_available() -> bool:
    """Whether the ``android_world`` package (and android_env, which it needs) can be imported."""
    try:
        require_android_world()
    except ImportError:
        return False
    return True


def require_android_world() -> Any:
    """The ``android_world.registry`` module; an ImportError with install instructions when it is missing."""
    try:
        from android_world import registry
    except ImportError as exc:
        raise ImportError(f"{ANDROID_WORLD_INSTALL_HINT}\n(import failed: {exc})") from exc
    return registry


# --- adb command lines on a Device ------------------------------------------------------------------


class AdbCommandError(RuntimeError):
    """An adb command failed on the device (non-zero exit status, or a command the device cannot run).

    When android_env is installed the raised error is also an ``android_env.components.errors.
    AdbControllerError``, which is what android_env's ``AdbController`` raises for a failed adb call,
    so AndroidWorld code that expects that type sees it.
    """

    def __init__(self, message: str, output: bytes = b"", returncode: int | None = None):
        super().__init__(message)
        self.output = output
        self.returncode = returncode


_ERROR_CLASS: type[AdbCommandError] | None = None


def _adb_error(message: str, output: bytes = b"", returncode: int | None = None) -> AdbCommandError:
    global _ERROR_CLASS
    if _ERROR_CLASS is None:
        try:
            from android_env.components.errors import AdbControllerError
        except ImportError:
            _ERROR_CLASS = AdbCommandError
        else:
            _ERROR_CLASS = type("AdbCommandError", (AdbCommandError, AdbControllerError), {})
    return _ERROR_CLASS(message, output, returncode)


_NOT_ROOT_MESSAGE = b"adbd cannot run as root in production builds\n"


class AdbCommandRunner:
    """Runs adb command lines (``["shell", "settings", "get", ...]``, ``["push", local, remote]``) on a Device.

    Its :meth:`execute_command` has the signature of android_env's ``AdbController.execute_command``,
    so android_env's ``AdbCallParser`` turns AndroidWorld's ``AdbRequest`` protos into calls here.
    Like the adb client, ``shell`` joins its arguments with spaces (no quoting) and hands the line to
    the device's ``sh``; output is stdout and stderr together. A non-zero exit status raises
    :class:`AdbCommandError` (android_env raises for a failed adb call too); device failures stay
    :class:`~android_gym.device.DeviceError` so envs can recover the device.
    """

    def __init__(self, device: Device, default_timeout: float | None = None):
        self.device = device
        self.default_timeout = default_timeout

    def execute_command(self, args: Sequence[str] | str, timeout: float | None = None,
                        device_specific: bool = True) -> bytes:
        """Run one adb command line (without ``adb -s SERIAL``) and return its output bytes."""
        if isinstance(args, str):
            args = args.split(" ")
        args = [str(a) for a in args]
        if not args:
            raise ValueError("an adb command needs at least one argument (e.g. ['shell', 'ls'])")
        timeout = self.default_timeout if timeout is None else timeout
        verb, rest = args[0], args[1:]
        if verb == "shell":
            return self._shell(" ".join(rest), timeout)
        if verb == "exec-out":
            return self._shell(" ".join(rest), timeout)
        if verb == "push" and len(rest) >= 2:
            return self._push(rest[-2], rest[-1])
        if verb == "pull" and len(rest) >= 1:
            return self._pull(rest[-2] if len(rest) >= 2 else rest[0], rest[-1] if len(rest) >= 2 else None)
        if verb == "install" and rest:
            return self._install(rest[-1], [a for a in rest[:-1] if a.startswith("-")], timeout)
        if verb == "uninstall" and rest:
            return self._shell("pm uninstall " + " ".join(rest), timeout)
        if verb == "root":
            return self._root()
        if verb == "emu":
            return self._emu(" ".join(rest), timeout)
        if verb == "devices":
            return f"List of devices attached\n{self.device.serial}\tdevice\n\n".encode()
        if verb in ("wait-for-device", "start-server", "kill-server", "connect", "disconnect"):
            wait = getattr(self.device, "wait_for_device", None)
            if verb == "wait-for-device" and callable(wait):
                wait(timeout)
            return b""
        raise _adb_error(f"adb {' '.join(args)}: this adapter does not run adb '{verb}' commands "
                         "(supported: shell, exec-out, push, pull, install, uninstall, root, emu, devices)")

    # --- verbs ----------------------------------------------------------------------------------
    def _shell(self, command: str, timeout: float | None) -> bytes:
        exec_out = getattr(self.device, "exec_out", None)
        if callable(exec_out):
            output = exec_out(command, timeout=timeout)
        else:
            output = self.device.shell(command, timeout=timeout).encode("utf-8")
        status = getattr(self.device, "last_status", None)
        if isinstance(status, int) and status != 0:
            raise _adb_error(f"adb shell {command[:200]!r} exited with status {status}: "
                             f"{output.decode('utf-8', 'replace').strip()[:300]}", output, status)
        return output

    def _sync(self) -> Any:
        handle = getattr(self.device, "adbutils_device", None)
        if handle is None:
            raise _adb_error(f"device {self.device.serial} cannot transfer files (push/pull need an adb device)")
        return handle.sync

    def _push(self, local: str, remote: str) -> bytes:
        if not os.path.exists(local):
            raise _adb_error(f"adb push: {local}: No such file or directory")
        push = getattr(self.device, "push", None)
        try:
            if callable(push):
                push(local, remote)
            else:
                self._sync().push(local, remote)
        except DeviceError:
            raise
        except Exception as exc:  # adbutils reports a refused write as AdbError
            raise _adb_error(f"adb push {local} {remote} failed: {exc}") from exc
        return f"{local}: 1 file pushed.\n".encode()

    def _pull(self, remote: str, local: str | None) -> bytes:
        local = local or os.path.basename(remote)
        pull = getattr(self.device, "pull", None)
        try:
            if callable(pull):
                pull(remote, local)
            else:
                sync = self._sync()
                if sync.stat(remote).mode == 0:  # adb's STAT answers zeros for a path that does not exist
                    raise FileNotFoundError("No such file or directory")
                sync.pull(remote, local)
        except DeviceError:
            raise
        except Exception as exc:  # adbutils: AdbError / FileNotFoundError for a missing remote file
            raise _adb_error(f"adb: error: failed to stat remote object '{remote}': {exc}") from exc
        return f"{remote}: 1 file pulled.\n".encode()

    def _install(self, apk: str, flags: list[str], timeout: float | None) -> bytes:
        if not os.path.isfile(apk):
            raise _adb_error(f"adb install: {apk} is not a file")
        remote = f"/data/local/tmp/{os.path.basename(apk)}"
        self._push(apk, remote)
        allowed = [f for f in flags if f in ("-r", "-t", "-g", "-d")]
        return self._shell(" ".join(["pm", "install", *allowed, remote]), timeout)

    def _root(self) -> bytes:
        if self.device.shell("id -u").strip() == "0":
            return b"adbd is already running as root\n"
        handle = getattr(self.device, "adbutils_device", None)
        if handle is None:
            return _NOT_ROOT_MESSAGE
        try:
            message = handle.root()
        except Exception:  # the device refuses the root: service: it is a production build for our purposes
            return _NOT_ROOT_MESSAGE
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        if "restarting" in text:
            reattach = getattr(self.device, "reconnect", None)
            time.sleep(1.0)
            if callable(reattach):
                reattach()
        return text.encode()

    def _emu(self, command: str, timeout: float | None) -> bytes:
        console = getattr(self.device, "console", None)
        if console is None:
            raise _adb_error(f"adb emu {command}: {self.device.serial} has no emulator console")
        return console.command(command, timeout=timeout).encode()


# --- what AndroidWorld reads from the screen ----------------------------------------------------------------


@dataclasses.dataclass
class BoundingBox:
    """A box in pixels, with AndroidWorld's field names (``x_min, x_max, y_min, y_max``)."""

    x_min: float | int
    x_max: float | int
    y_min: float | int
    y_max: float | int

    @property
    def center(self) -> tuple[float, float]:
        """Centre of the box."""
        return (self.x_min + self.x_max) / 2.0, (self.y_min + self.y_max) / 2.0

    @property
    def width(self) -> float | int:
        """Width of the box."""
        return self.x_max - self.x_min

    @property
    def height(self) -> float | int:
        """Height of the box."""
        return self.y_max - self.y_min


@dataclasses.dataclass
class UIElementRecord:
    """One element of ``env.get_state().ui_elements`` when android_world is absent (its ``UIElement`` fields)."""

    text: str | None = None
    content_description: str | None = None
    class_name: str | None = None
    bbox: BoundingBox | None = None
    bbox_pixels: BoundingBox | None = None
    hint_text: str | None = None
    is_checked: bool | None = None
    is_checkable: bool | None = None
    is_clickable: bool | None = None
    is_editable: bool | None = None
    is_enabled: bool | None = None
    is_focused: bool | None = None
    is_focusable: bool | None = None
    is_long_clickable: bool | None = None
    is_scrollable: bool | None = None
    is_selected: bool | None = None
    is_visible: bool | None = None
    package_name: str | None = None
    resource_name: str | None = None
    tooltip: str | None = None
    resource_id: str | None = None
    metadata: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class ScreenState:
    """``env.get_state()`` when android_world is absent: the fields of its ``interface.State``."""

    pixels: Any
    forest: Any
    ui_elements: list[Any]
    auxiliaries: dict[str, Any] | None = None


def ui_elements_from_xml(xml: str) -> list[Any]:
    """The UI elements of a uiautomator dump, every node but the root, as AndroidWorld reads a dump.

    With android_world installed this is its own ``representation_utils.xml_dump_to_ui_elements``;
    otherwise :class:`UIElementRecord` objects built the same way (``bbox`` and ``bbox_pixels`` in pixels,
    flags from the ``"true"`` attributes, ``is_visible`` True).
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ValueError(f"the hierarchy dump is not XML: {exc}") from exc
    try:
        from android_world.env import representation_utils
    except ImportError:
        pass
    else:
        return representation_utils.xml_dump_to_ui_elements(xml)
    elements: list[Any] = []
    for node in root.iter():
        if node is root:
            continue
        bounds = node.get("bounds")
        bbox = None
        if bounds:
            x1, y1, x2, y2 = (int(v) for v in bounds.strip("[]").replace("][", ",").split(","))
            bbox = BoundingBox(x1, x2, y1, y2)
        elements.append(UIElementRecord(
            text=node.get("text"), content_description=node.get("content-desc"), class_name=node.get("class"),
            bbox=bbox, bbox_pixels=bbox, is_checked=node.get("checked") == "true",
            is_checkable=node.get("checkable") == "true", is_clickable=node.get("clickable") == "true",
            is_enabled=node.get("enabled") == "true", is_focused=node.get("focused") == "true",
            is_focusable=node.get("focusable") == "true", is_long_clickable=node.get("long-clickable") == "true",
            is_scrollable=node.get("scrollable") == "true", is_selected=node.get("selected") == "true",
            package_name=node.get("package"), resource_id=node.get("resource-id"), is_visible=True,
        ))
    return elements


_IME_PACKAGES = ("com.google.android.inputmethod.latin", "com.android.inputmethod.latin")
_SYSTEM_WINDOW_PACKAGES = (*_IME_PACKAGES, "com.android.systemui")
_FOREST_FLAGS = (("checkable", "is_checkable"), ("checked", "is_checked"), ("clickable", "is_clickable"),
                 ("long-clickable", "is_long_clickable"), ("enabled", "is_enabled"), ("focusable", "is_focusable"),
                 ("focused", "is_focused"), ("scrollable", "is_scrollable"), ("selected", "is_selected"),
                 ("password", "is_password"))


def _window_breadth_first(top: ET.Element) -> list[tuple[ET.Element, int, ET.Element | None]]:
    out: list[tuple[ET.Element, int, ET.Element | None]] = []
    level: list[tuple[ET.Element, ET.Element | None]] = [(top, None)]
    depth = 0
    while level:
        out.extend((node, depth, parent) for node, parent in level)
        level = [(child, node) for node, _ in level for child in node.findall("node")]
        depth += 1
    return out


def a11y_order(root: ET.Element) -> list[tuple[ET.Element, int, ET.Element | None]]:
    """The nodes of a parsed dump in the order the accessibility forwarder lists them: (node, depth, parent).

    Each top-level node is one window; windows come in the dump's order, and inside a window the nodes come
    breadth first (a level's nodes in tree order before the next level's), as the real element lists of
    AndroidWorld episodes show (a toolbar's buttons before the list rows nested under a deeper layout). A toast
    is no window of the accessibility tree, and a dialog hides the app's page beneath it, so those are left out.
    """
    return [entry for top in _a11y_windows(root) for entry in _window_breadth_first(top)]


def _a11y_windows(root: ET.Element) -> list[ET.Element]:
    """The dump's top-level nodes the accessibility tree lists as windows: not toasts, and of an app's windows
    only the topmost (a dialog or drawer over a page hides the page, as the real episodes' lists show)."""
    tops = [t for t in root.findall("node") if t.get("class") != "android.widget.Toast"]
    last: dict[str, int] = {}
    for i, top in enumerate(tops):
        if top.get("package") not in _SYSTEM_WINDOW_PACKAGES and "PopupWindow" not in top.get("class", ""):
            last[top.get("package", "")] = i
    return [t for i, t in enumerate(tops)
            if t.get("package") in _SYSTEM_WINDOW_PACKAGES or "PopupWindow" in t.get("class", "")
            or last.get(t.get("package", "")) == i]


def forest_from_xml(xml: str) -> Any:
    """The accessibility forest (android_env's ``AndroidAccessibilityForest``) of a uiautomator dump.

    What AndroidWorld's accessibility forwarder sends, rebuilt from the same nodes: each top-level node
    of the dump is one window (the keyboard's a ``TYPE_INPUT_METHOD`` window, System UI's
    ``TYPE_SYSTEM``, others ``TYPE_APPLICATION``), its nodes listed breadth first (:func:`a11y_order`) with
    ``child_ids``,
    bounds, text, ``hint_text``, content description, class, package, resource name and the flags
    (an ``EditText`` is editable; every dumped node is visible to the user, as the dump lists only
    those). None when android_env is not installed.
    """
    try:
        from android_env.proto.a11y import android_accessibility_forest_pb2 as forest_pb2
        from android_env.proto.a11y import android_accessibility_window_info_pb2 as window_pb2
    except ImportError:
        return None
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ValueError(f"the hierarchy dump is not XML: {exc}") from exc
    forest = forest_pb2.AndroidAccessibilityForest()
    next_id = 0
    for layer, top in enumerate(_a11y_windows(root)):
        package = top.get("package", "")
        window = forest.windows.add(id=layer, layer=layer, display_id=0, title=package,
                                    is_active=layer == 0, is_focused=layer == 0)
        if package in _IME_PACKAGES:
            window.window_type = window_pb2.AndroidAccessibilityWindowInfo.TYPE_INPUT_METHOD
        elif package == "com.android.systemui":
            window.window_type = window_pb2.AndroidAccessibilityWindowInfo.TYPE_SYSTEM
        else:
            window.window_type = window_pb2.AndroidAccessibilityWindowInfo.TYPE_APPLICATION
        infos: dict[int, Any] = {}
        for order, (node, depth, parent) in enumerate(_window_breadth_first(top)):
            info = window.tree.nodes.add()
            info.unique_id = next_id
            next_id += 1
            infos[id(node)] = info
            if parent is not None:
                infos[id(parent)].child_ids.append(info.unique_id)
            bounds = node.get("bounds")
            if bounds:
                x1, y1, x2, y2 = (int(v) for v in bounds.strip("[]").replace("][", ",").split(","))
                info.bounds_in_screen.left, info.bounds_in_screen.top = x1, y1
                info.bounds_in_screen.right, info.bounds_in_screen.bottom = x2, y2
            cls = node.get("class", "")
            info.class_name = cls
            info.text = node.get("text", "")
            info.hint_text = node.get("hint", "")
            info.content_description = node.get("content-desc", "")
            info.package_name = node.get("package", "")
            info.view_id_resource_name = node.get("resource-id", "")
            info.window_id = window.id
            info.depth = depth
            info.drawing_order = order
            for attr, field in _FOREST_FLAGS:
                setattr(info, field, node.get(attr) == "true")
            info.is_editable = cls.endswith("EditText")
            info.is_visible_to_user = True
        window.bounds_in_screen.CopyFrom(window.tree.nodes[0].bounds_in_screen)
    return forest


# --- env.controller ---------------------------------------------------------------------------------------


class AndroidWorldControllerAdapter:
    """``env.controller`` for AndroidWorld tasks: android_env ``AdbRequest`` protos executed on our device.

    ``execute_adb_call(request)`` runs android_env's ``AdbCallParser`` over an :class:`AdbCommandRunner`
    (android_env must be installed: AndroidWorld needs it anyway). ``execute_command`` is the runner's
    adb-command-line surface. ``env`` is the controller itself, because AndroidWorld's ``file_utils``
    call ``controller.env.execute_adb_call``. ``pull_file``/``push_file`` mirror AndroidWorld's controller.
    """

    def __init__(self, device: Device, default_timeout: float | None = None):
        self.device = device
        self.runner = AdbCommandRunner(device, default_timeout)
        self._parser: Any = None

    @property
    def env(self) -> AndroidWorldControllerAdapter:
        """Itself: what AndroidWorld reaches as ``controller.env`` (the wrapped android_env env)."""
        return self

    def execute_command(self, args: Sequence[str] | str, timeout: float | None = None,
                        device_specific: bool = True) -> bytes:
        """Run one adb command line on the device (see :class:`AdbCommandRunner`)."""
        return self.runner.execute_command(args, timeout=timeout, device_specific=device_specific)

    def execute_adb_call(self, request: Any) -> Any:
        """Execute an android_env ``AdbRequest`` and return its ``AdbResponse``."""
        if self._parser is None:
            try:
                from android_env.components.adb_call_parser import AdbCallParser
            except ImportError as exc:
                raise ImportError(f"AdbRequest protos need android_env. {ANDROID_WORLD_INSTALL_HINT}") from exc
            self._parser = AdbCallParser(self.runner)
        return self._parser.parse(request)

    @property
    def device_screen_size(self) -> tuple[int, int]:
        """(width, height) of the screen in pixels."""
        return tuple(self.device.screen_size)  # type: ignore[return-value]

    @property
    def logical_screen_size(self) -> tuple[int, int]:
        """(width, height) in the current orientation (our drivers report it that way)."""
        return tuple(self.device.screen_size)  # type: ignore[return-value]

    def get_ui_elements(self) -> list[Any]:
        """The current screen's UI elements, from a hierarchy dump."""
        return ui_elements_from_xml(self.device.observe(screenshot=False).xml)

    def get_a11y_forest(self) -> Any:
        """The accessibility forest of the current screen, rebuilt from a hierarchy dump (:func:`forest_from_xml`)."""
        forest = forest_from_xml(self.device.observe(screenshot=False).xml)
        if forest is None:
            raise RuntimeError("the accessibility forest is android_env's proto: install android_env")
        return forest

    @contextlib.contextmanager
    def pull_file(self, remote_db_file_path: str, timeout_sec: float | None = None) -> Iterator[str]:
        """Copy the folder holding ``remote_db_file_path`` to a temporary local folder; yield its path.

        The files of that folder (not sub-folders) are pulled, as AndroidWorld's controller does, so a
        SQLite database comes with its ``-wal``/``-shm`` files. The folder is deleted on exit.
        """
        remote_dir = os.path.dirname(remote_db_file_path)
        local_dir = tempfile.mkdtemp(prefix="android_gym_pull_")
        try:
            with contextlib.suppress(AdbCommandError):
                self.runner.execute_command(["root"], timeout=timeout_sec)
            try:
                listing = self.runner.execute_command(["shell", "ls", "-1", f"'{remote_dir}'"], timeout=timeout_sec)
            except AdbCommandError as exc:
                raise FileNotFoundError(f"{remote_dir} does not exist on {self.device.serial}.") from exc
            for name in listing.decode("utf-8", "replace").replace("\r", "").splitlines():
                name = name.strip()
                remote = f"{remote_dir}/{name}"
                if name and not self._is_directory(remote):
                    self.runner.execute_command(["pull", remote, os.path.join(local_dir, name)], timeout=timeout_sec)
            yield local_dir
        finally:
            shutil.rmtree(local_dir, ignore_errors=True)

    def _is_directory(self, remote: str) -> bool:
        handle = getattr(self.device, "adbutils_device", None)
        if handle is None:
            return False
        import stat

        return stat.S_ISDIR(handle.sync.stat(remote).mode)

    def push_file(self, local_db_file_path: str, remote_db_file_path: str, timeout_sec: float | None = None) -> None:
        """Replace the contents of the remote file's folder with the local file (AndroidWorld's semantics)."""
        remote_dir = os.path.dirname(remote_db_file_path)
        with contextlib.suppress(AdbCommandError):
            self.runner.execute_command(["shell", "rm", "-r", f"'{remote_dir}'/*"], timeout=timeout_sec)
        self.runner.execute_command(["shell", "mkdir", "-p", f"'{remote_dir}'"], timeout=timeout_sec)
        self.runner.execute_command(["push", local_db_file_path, remote_db_file_path], timeout=timeout_sec)

    def refresh_env(self) -> None:
        """Reconnect to the device (AndroidWorld calls this after losing the accessibility forwarder)."""
        recover = getattr(self.device, "recover", None)
        if callable(recover):
            recover()

    def close(self) -> None:
        """Nothing to close: the device belongs to the env that made this adapter."""


# --- env ------------------------------------------------------------------------------------------------------


class AndroidWorldEnvAdapter:
    """The ``env`` object AndroidWorld's tasks receive (its ``interface.AsyncEnv``), over one of our devices.

    ``controller`` runs their adb requests; ``get_state()`` gives the screenshot and ``ui_elements``
    from a hierarchy dump, and ``forest`` rebuilt from the same dump (:func:`forest_from_xml`); ``interaction_cache``
    holds the agent's answer; ``execute_action`` takes their ``JSONAction`` (or its dict) and performs
    it with our driver. When android_world is installed this class is registered as a virtual
    subclass of ``interface.AsyncEnv``.
    """

    def __init__(self, device: Device, default_timeout: float | None = None):
        self.device = device
        self._controller = AndroidWorldControllerAdapter(device, default_timeout)
        self.interaction_cache = ""
        self._last_elements: list[Any] = []
        self._scratch: str | None = None
        _register_async_env()

    @property
    def scratch_dir(self) -> str:
        """This env's own folder for the files AndroidWorld's task code writes before pushing them (made on first
        use, removed with the adapter); see :func:`_scratch_of`."""
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="android_gym_aw_")
            weakref.finalize(self, shutil.rmtree, self._scratch, True)
        return self._scratch

    @property
    def controller(self) -> AndroidWorldControllerAdapter:
        """What AndroidWorld's helpers (``adb_utils``, ``file_utils``) get as their ``env``."""
        return self._controller

    def get_state(self, wait_to_stabilize: bool = False) -> Any:
        """The screen: ``pixels`` (HxWx3), and ``forest`` and ``ui_elements`` from one hierarchy dump."""
        if wait_to_stabilize:
            wait = getattr(self.device, "wait_for_idle", None)
            if callable(wait):
                wait()
        screen = self.device.observe(screenshot=True)
        elements = ui_elements_from_xml(screen.xml)
        self._last_elements = elements
        forest = forest_from_xml(screen.xml)
        try:
            from android_world.env.interface import State
        except ImportError:
            return ScreenState(screen.screenshot, forest, elements, {})
        return State(pixels=screen.screenshot, forest=forest, ui_elements=elements, auxiliaries={})

    def reset(self, go_home: bool = False) -> Any:
        """Clear the answer cache (and press Home when asked); return the state."""
        if go_home:
            self.device.shell("input keyevent 3")
        self.interaction_cache = ""
        return self.get_state()

    def execute_action(self, action: Any) -> None:
        """Perform an AndroidWorld ``JSONAction`` (or its dict): ``answer`` fills ``interaction_cache``."""
        data = action.as_dict(skip_none=True) if hasattr(action, "as_dict") else dict(action)
        data = {k: v for k, v in data.items() if v is not None}
        kind = data.get("action_type")
        if kind == "answer":
            self.interaction_cache = str(data.get("text") or "")
            return
        if kind == "status":
            return
        converted = self.to_action(data)
        if kind == "double_tap" and isinstance(converted, Click):
            self.device.execute(converted)
        self.device.execute(converted)

    def to_action(self, data: Mapping[str, Any]) -> Action:
        """Our :class:`~android_gym.actions.Action` for an AndroidWorld JSON action (``index`` uses the last state)."""
        from android_gym.actions.parse import parse_action

        data = dict(data)
        index = data.pop("index", None)
        data.pop("clear_text", None)
        data.pop("keycode", None)
        if data.get("action_type") == "double_tap":
            data["action_type"] = "click"
        if index is not None:
            elements = self._last_elements or self.get_state().ui_elements
            index = int(index)
            if not 0 <= index < len(elements) or elements[index].bbox_pixels is None:
                raise ValueError(f"invalid element index {index}: the screen has {len(elements)} elements")
            x, y = elements[index].bbox_pixels.center
            data["x"], data["y"] = int(x), int(y)
        return parse_action(data, style="androidworld", screen_size=self.device.screen_size)

    def hide_automation_ui(self) -> None:
        """Turn off the pointer-location overlay."""
        self.device.shell("settings put system pointer_location 0")

    def display_message(self, message: str, header: str = "") -> None:
        """AndroidWorld shows messages through its overlay app; nothing to show here."""

    def ask_question(self, question: str, timeout_seconds: float = -1.0) -> str | None:
        """Not supported (AndroidWorld's own env does not implement it either)."""
        raise NotImplementedError("ask_question is not implemented.")

    @property
    def foreground_activity_name(self) -> str:
        """``package/.Activity`` of the foreground window ('' when unknown)."""
        return self.device.observe(screenshot=False).activity or ""

    @property
    def device_screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self._controller.device_screen_size

    @property
    def logical_screen_size(self) -> tuple[int, int]:
        """(width, height) in the current orientation."""
        return self._controller.logical_screen_size

    @property
    def orientation(self) -> int:
        """0 portrait, 1 landscape, 2 reverse portrait, 3 reverse landscape."""
        rotation = getattr(self.device, "rotation", 0)
        return int(rotation or 0)

    @property
    def physical_frame_boundary(self) -> tuple[int, int, int, int]:
        """(left, top, right, bottom) of the screen in portrait pixels."""
        width, height = self.device.screen_size
        return 0, 0, width, height

    def close(self) -> None:
        """Nothing to close: the device belongs to the env."""


_ASYNC_ENV_REGISTERED = False


def _register_async_env() -> None:
    global _ASYNC_ENV_REGISTERED
    if _ASYNC_ENV_REGISTERED:
        return
    _ASYNC_ENV_REGISTERED = True
    try:
        from android_world.env.interface import AsyncEnv
    except ImportError:
        return
    AsyncEnv.register(AndroidWorldEnvAdapter)


# --- tasks ------------------------------------------------------------------------------------------------------


def android_world_params(task_class: type, seed: int | None, env: Any = None) -> dict[str, Any]:
    """Parameters exactly as AndroidWorld's ``suite_utils._instantiate_task`` draws them for ``seed``.

    ``set_device_time(env)``, then ``random.seed(seed)`` and ``generate_random_params()`` on the
    global ``random`` module (what its tasks use), and ``params["seed"] = seed``. The global random
    state is restored afterwards.
    """
    setter = getattr(task_class, "set_device_time", None)
    if callable(setter):
        setter(env)
    state = random.getstate()
    try:
        if seed is not None:
            random.seed(seed)
        params = dict(task_class.generate_random_params())
    finally:
        random.setstate(state)
    params["seed"] = seed
    return params


class _NoWaitClock:
    """The ``time`` module as AndroidWorld's modules see it while they drive the simulated phone: ``sleep`` yields
    at once. AndroidWorld waits for a real device to apply a change (SMS set-up sleeps 5-10 s, database set-up 7 s);
    the simulated phone applies every change before the command returns, so the waits only cost time."""

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(0)


_NO_WAIT = _NoWaitClock()
_no_wait_lock = threading.Lock()
_no_wait_users = 0
_no_wait_modules: list[Any] = []


@contextlib.contextmanager
def _sim_clock(device: Device) -> Iterator[None]:
    """While AndroidWorld's task code drives an in-process simulated phone, its ``time.sleep`` calls return at once.

    Other devices keep every wait. The swap is process-wide while any sim call is inside (counted, so threads
    stepping several sim envs nest), so a real device driven by the same process at that moment skips its waits too.
    """
    from android_gym.sim import SimDevice

    global _no_wait_users
    if not isinstance(device, SimDevice):
        yield
        return
    with _no_wait_lock:
        if _no_wait_users == 0:
            for name, module in list(sys.modules.items()):
                if name.startswith("android_world.") and getattr(module, "time", None) is time:
                    module.time = _NO_WAIT
                    _no_wait_modules.append(module)
        _no_wait_users += 1
    try:
        yield
    finally:
        with _no_wait_lock:
            _no_wait_users -= 1
            if _no_wait_users == 0:
                for module in _no_wait_modules:
                    module.time = time
                _no_wait_modules.clear()


def _emulator_steady_state(device: Device) -> None:
    """Bring a simulated phone to the state AndroidWorld's emulator is in between tasks where the sim's factory phone
    differs: Markor's notebook folder is empty (every AndroidWorld task that writes notes clears it in its
    ``tear_down``; a real ExpenseAddMultiple run opened Markor on an empty folder), and so is the contacts store
    (AndroidWorld's emulator image has no contacts; only tasks that need some add them, and the sim's sample
    contacts are the sim's own: a real ExpenseDeleteSingle run's Phone showed its Contacts tab empty). Its apps are
    the emulator's where the sim models another version first (``SimPhone.android_world_emulator``: Google Clock's
    layout, as a real ClockStopWatchRunning run of the second held-out source shows it). Other devices are left
    alone."""
    from android_gym.sim import SimDevice

    if not isinstance(device, SimDevice):
        return
    device.phone.android_world_emulator = True
    from android_gym.sim.apps.contacts import CONTACTS_PKG
    from android_gym.sim.apps.markor import MARKOR_ROOT

    files = device.phone.files
    if files.is_dir(MARKOR_ROOT):
        for name in files.listdir(MARKOR_ROOT):
            files.remove(f"{MARKOR_ROOT}/{name}", recursive=True)
    contacts = device.phone.apps.get(CONTACTS_PKG)
    if contacts is not None:
        contacts.clear_data()


_scratch_dir: contextvars.ContextVar[str | None] = contextvars.ContextVar("android_world_scratch_dir", default=None)
_scratch_lock = threading.Lock()
_scratch_installed = False


def _local_tmp_directory() -> str:
    """AndroidWorld's ``file_utils.get_local_tmp_directory`` while this package drives its tasks: the scratch folder
    of the env whose task code runs in this thread (:func:`_scratch_of`), else the system's temporary folder."""
    return _scratch_dir.get() or tempfile.gettempdir()


class _ScratchPath(os.PathLike):
    """``user_data_generation._TMP`` (AndroidWorld computes it once, at import): a path that is
    :func:`_local_tmp_directory` each time it is used (its users join it with ``pathlib.Path``)."""

    def __fspath__(self) -> str:
        return _local_tmp_directory()

    def __str__(self) -> str:
        return _local_tmp_directory()

    def __repr__(self) -> str:
        return f"_ScratchPath({_local_tmp_directory()!r})"


def _install_scratch_redirect() -> None:
    """Point AndroidWorld's temporary-file folder at :func:`_local_tmp_directory` (once per process)."""
    global _scratch_installed
    with _scratch_lock:
        if _scratch_installed:
            return
        try:
            from android_world.task_evals.utils import user_data_generation
            from android_world.utils import file_utils
        except ImportError:
            return
        file_utils.get_local_tmp_directory = _local_tmp_directory
        user_data_generation._TMP = _ScratchPath()
        _scratch_installed = True


@contextlib.contextmanager
def _scratch_of(env: AndroidWorldEnvAdapter) -> Iterator[None]:
    """While AndroidWorld's task code runs for ``env``, its local files go to ``env.scratch_dir``.

    Its set-up writes fixed names in the system's temporary folder before pushing them (``old_expenses_6.jpg``,
    ``receipt.png``, ``task.html``, the MP3s and videos) and removes them after: two envs on one host (two test
    workers, two envs of one trainer) overwrote and removed each other's files. The folder is per env and the choice
    per thread (a context variable), so envs stepped at once in one process keep theirs.
    """
    _install_scratch_redirect()
    token = _scratch_dir.set(env.scratch_dir)
    try:
        yield
    finally:
        _scratch_dir.reset(token)


@contextlib.contextmanager
def _numpy_seeded(seed: int | None) -> Iterator[None]:
    """NumPy's global generator seeded with the instance seed while AndroidWorld sets the instance up, then put back.

    AndroidWorld seeds Python's ``random`` for an instance's parameters but draws the noise of its video frames
    (``user_data_generation._create_mpeg_with_messages``) from NumPy's global generator, unseeded, so the same
    instance got different pixels on every reset. Seeded, an instance seed gives the same start state pixel for
    pixel (what reproducible RL runs and the pixel-reading experts rely on); the caller's NumPy state is untouched.
    """
    if seed is None:
        yield
        return
    import numpy as np

    state = np.random.get_state()
    np.random.seed(int(seed) % 2**32)
    try:
        yield
    finally:
        np.random.set_state(state)


class AndroidWorldTask(Task):
    """One AndroidWorld task class (``aw_class``) seen as an android-gym :class:`Task`.

    Subclasses are made by :class:`AndroidWorldSuite` (one per task name) and are not in our task
    registry. ``initialize``/``is_successful``/``teardown`` call the task's ``initialize_task(env)``,
    ``is_successful(env)`` and ``tear_down(env)`` with the suite's :class:`AndroidWorldEnvAdapter`;
    the agent's answer goes to ``env.interaction_cache`` first. The step budget is
    ``int(10 * complexity)``.
    """

    aw_class: ClassVar[type] = object
    suite: ClassVar[AndroidWorldSuite | None] = None
    suites: ClassVar[tuple[str, ...]] = ("android_world",)

    def __init__(self, params: dict[str, Any] | None = None, *, seed: int | None = None):
        if params is None:
            env = self.suite.env if self.suite is not None else None
            params = android_world_params(self.aw_class, seed, env)
        self.params = dict(params)
        self.seed = seed
        self.aw_task: Any = self.aw_class(dict(self.params))
        self._initialized = False

    @property
    def goal(self) -> str:
        """The task's own goal text."""
        return str(self.aw_task.goal)

    @property
    def reads_pixels(self) -> bool:  # type: ignore[override]
        """Whether the expert of this task (our re-creation's) reads the screenshot as well as the UI tree."""
        return self.name in SIM_TASKS and bool(expert_class(self.name).reads_pixels)

    @property
    def max_steps(self) -> int:
        """AndroidWorld's budget, ``int(10 * complexity)``."""
        return max(1, int(10 * float(self.aw_task.complexity)))

    def _env(self, device: Device) -> AndroidWorldEnvAdapter:
        if self.suite is None:
            raise RuntimeError(f"{type(self).__name__} is not bound to an AndroidWorldSuite")
        return self.suite.env_for(device)

    def initialize(self, device: Device) -> None:
        """``initialize_task(env)``: AndroidWorld sets the date, restores app data and seeds the task's state."""
        env = self._env(device)
        env.interaction_cache = ""
        if getattr(self.aw_task, "initialized", False):  # a second reset of the same instance
            self.aw_task.initialized = False
        _emulator_steady_state(device)
        with _sim_clock(device), _scratch_of(env), _numpy_seeded(self.seed):
            self.aw_task.initialize_task(env)
        self._initialized = True
        if getattr(self.aw_task, "start_on_home_screen", True):  # AndroidWorld's episode runner then goes home
            env.reset(go_home=True)

    def is_successful(self, device: Device, answer: str | None = None) -> float:
        """``is_successful(env)`` in [0, 1]; ``answer`` (the agent's final answer) goes to ``interaction_cache``."""
        env = self._env(device)
        if answer is not None:
            env.interaction_cache = answer
        with _sim_clock(device), _scratch_of(env):
            return float(self.aw_task.is_successful(env))

    def expert(self, ui: Any) -> ExpertGenerator:
        """Our re-creation's scripted expert for this instance, for the tasks it solves on the simulated phone.

        The expert only reads the screen and acts, so it drives any device running the same apps
        (the sim in-process or behind adb); other tasks have none (NotImplementedError).
        """
        if self.name not in SIM_TASKS:
            raise NotImplementedError(f"AndroidWorld's {self.name} has no scripted expert: {reason_not_on_sim(self.name)}")
        return (yield from sim_expert_task(self.name, self.params).expert(ui))

    def teardown(self, device: Device) -> None:
        """``tear_down(env)`` once per initialised episode."""
        if not self._initialized:
            return
        self._initialized = False
        env = self._env(device)
        with _sim_clock(device), _scratch_of(env):
            self.aw_task.tear_down(env)


class AndroidWorldSuite:
    """AndroidWorld's task registry as a task source for :class:`~android_gym.envs.AndroidEnv`.

    ``registry``: a mapping of task name to task class following AndroidWorld's contract (default:
    ``TaskRegistry().get_registry(family)`` of the installed package; ImportError with install
    instructions when it is missing). ``attach(device)`` makes the :class:`AndroidWorldEnvAdapter`
    the tasks receive. ``task_class(name)`` gives an :class:`AndroidWorldTask` subclass.
    """

    suite = "android_world"

    def __init__(self, registry: Mapping[str, type] | None = None, family: str = DEFAULT_FAMILY,
                 default_timeout: float | None = None):
        if registry is None:
            module = require_android_world()
            registry = module.TaskRegistry().get_registry(family)
        if not registry:
            raise ValueError("the AndroidWorld registry is empty")
        self.registry: dict[str, type] = dict(registry)
        self.family = family
        self.default_timeout = default_timeout
        self.env: AndroidWorldEnvAdapter | None = None
        self._classes: dict[str, type[AndroidWorldTask]] = {}

    def names(self) -> list[str]:
        """Task names, sorted (AndroidWorld sorts its suites by name too)."""
        return sorted(self.registry)

    def task_class(self, name: str) -> type[AndroidWorldTask]:
        """The :class:`AndroidWorldTask` subclass for ``name``; KeyError listing close names otherwise."""
        if name not in self.registry:
            import difflib

            close = difflib.get_close_matches(name, self.registry, n=5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise KeyError(f"AndroidWorld has no task {name!r}{hint}")
        cls = self._classes.get(name)
        if cls is None:
            aw_class = self.registry[name]
            attrs = {
                "name": name, "aw_class": aw_class, "suite": self,
                "template": str(getattr(aw_class, "template", "")),
                "app_names": tuple(a for a in _class_attr(aw_class, "app_names", ()) if a),
                "answer_task": "information_retrieval" in getattr(aw_class, "__module__", ""),
                "__module__": __name__, "__doc__": f"AndroidWorld's {name}, run through the android-gym adapter.",
            }
            complexity = _class_attr(aw_class, "complexity", None)
            if isinstance(complexity, (int, float)):
                attrs["complexity"] = float(complexity)
            cls = type(f"AW_{name}", (AndroidWorldTask,), attrs)
            self._classes[name] = cls
        return cls

    def attach(self, device: Device) -> AndroidWorldEnvAdapter:
        """Make (or re-make, for a new device) the env adapter the tasks receive."""
        if self.env is None or self.env.device is not device:
            self.env = AndroidWorldEnvAdapter(device, self.default_timeout)
        return self.env

    def env_for(self, device: Device) -> AndroidWorldEnvAdapter:
        """The env adapter over ``device`` (attaching it when needed)."""
        return self.attach(device)

    def instance(self, name: str, seed: int, index: int = 0) -> AndroidWorldTask:
        """Instance ``index`` of task ``name`` in AndroidWorld's suite created with ``seed``."""
        return self.task_class(name)(seed=instance_seed(seed, name, index))


def _class_attr(cls: type, name: str, default: Any) -> Any:
    value = getattr(cls, name, default)
    return default if isinstance(value, property) else value

