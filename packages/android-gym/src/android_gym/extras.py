"""android-gym's optional dependencies: which extra brings which module, and what to tell a user who lacks one.

``pip install android-gym`` brings what every simulated task and the env need. The extras add what only some
features use:

=============  ==================================  =====================================================
extra          modules                             for
=============  ==================================  =====================================================
``video``      ``cv2`` (opencv-python-headless)    MarkorTranscribeVideo's videos, VLC's video frames
``adb``        ``adbutils``, ``uiautomator2``      real devices and emulators (``AdbDevice``)
``androidlab`` ``yaml`` (PyYAML)                   AndroidLab's task YAMLs (``tasks_path=``)
``parquet``    ``pyarrow``                         ``android-gym view`` of a coach-rl run's replay buffer
=============  ==================================  =====================================================

A task whose set-up needs a missing extra names the module in ``Task.requires``; :func:`android_gym.list_tasks`
leaves it out (with one warning saying which and why) and :func:`android_gym.unavailable_tasks` says why.
"""

from __future__ import annotations

import functools
import importlib

__all__ = ["OPTIONAL_MODULES", "install_hint", "missing_module_reason"]

OPTIONAL_MODULES: dict[str, tuple[str, str]] = {
    "cv2": ("video", "OpenCV"),
    "adbutils": ("adb", "adbutils"),
    "uiautomator2": ("adb", "uiautomator2"),
    "yaml": ("androidlab", "PyYAML"),
    "pyarrow": ("parquet", "pyarrow"),
}
"""Module name -> (the android-gym extra that installs it, what it is called)."""


def install_hint(module: str) -> str:
    """``pip install 'android-gym[EXTRA]'`` for an optional module (KeyError for one no extra brings)."""
    extra, _ = OPTIONAL_MODULES[module]
    return f"pip install 'android-gym[{extra}]'"


@functools.cache
def missing_module_reason(module: str) -> str | None:
    """None when ``module`` imports; else a one-line reason with the pip command that installs it.

    The module is imported (once per process), not only looked up: an OpenCV build that cannot load its
    shared libraries is as missing as an absent one.
    """
    try:
        importlib.import_module(module)
    except ImportError as exc:
        _, name = OPTIONAL_MODULES.get(module, (None, module))
        hint = install_hint(module) if module in OPTIONAL_MODULES else f"pip install {module}"
        detail = "" if isinstance(exc, ModuleNotFoundError) and exc.name == module else f" ({exc})"
        return f"needs {name} (Python module {module}){detail}: {hint}"
    return None
