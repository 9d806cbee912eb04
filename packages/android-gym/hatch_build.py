"""Build hook: compile the optional C reader for uiautomator dumps (``android_gym.xml._speedups``).

The extension only makes reading plain dumps faster; android-gym works the same without it. So a build
never fails because of it: without a C compiler or Python's headers (or with ``ANDROID_GYM_NO_SPEEDUPS=1``)
the hook prints a warning and the wheel stays pure Python. A wheel with the extension gets a platform tag.
Editable installs build it next to the source (``src/android_gym/xml/``, ignored by git).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "android_gym.xml._speedups"
SOURCE = Path("src/android_gym/xml/_speedups.c")


class SpeedupsBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        if version == "editable":  # a build from older C source must not outlive a rebuild that fails or is off
            for old in (root / SOURCE).parent.glob("_speedups*.*"):
                if old.suffix in (".so", ".pyd"):
                    old.unlink()
        if os.environ.get("ANDROID_GYM_NO_SPEEDUPS", "").strip() not in ("", "0"):
            self.app.display_info("android-gym: ANDROID_GYM_NO_SPEEDUPS is set; building the pure-Python wheel")
            return
        self._tmp = tempfile.mkdtemp(prefix="android-gym-build-")
        try:
            built = _compile(root / SOURCE, Path(self._tmp))
        except Exception as err:  # noqa: BLE001 - any compiler trouble means "pure Python", never a failed install
            self.app.display_warning(
                f"android-gym: the optional C reader was not built ({type(err).__name__}: {err}); "
                "dumps are read by the pure-Python reader instead (same results, slower)"
            )
            return
        name = built.name
        if version == "editable":
            target = root / "src" / "android_gym" / "xml" / name
            shutil.copy2(built, target)
        else:
            build_data["force_include"][str(built)] = f"android_gym/xml/{name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _compile(source: Path, out: Path) -> Path:
    """Compile the extension with setuptools' compiler driver; returns the built file."""
    if not source.is_file():
        raise FileNotFoundError(source)
    if not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        raise FileNotFoundError(f"Python.h (install the Python development headers for {sys.executable})")
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    ext = Extension(MODULE, [str(source)], extra_compile_args=["-O2"] if os.name != "nt" else [])
    dist = Distribution({"name": "android-gym-speedups", "ext_modules": [ext]})
    cmd = build_ext(dist)
    cmd.build_lib = str(out / "lib")
    cmd.build_temp = str(out / "temp")
    cmd.ensure_finalized()
    cmd.run()
    built = Path(cmd.get_ext_fullpath(MODULE))
    if not built.is_file():
        raise FileNotFoundError(built)
    return built
