"""Optional dependencies are android-gym extras, and a task whose extra is missing is listed with the reason and
left out of what runs, never a failure in the middle of running every task.

The missing extra is made real in a subprocess (``sys.modules["cv2"] = None`` makes ``import cv2`` fail as in a
venv without OpenCV); tests/android_gym/test_build_wheel.py checks the same in a fresh venv without it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

import android_gym
from android_gym.extras import OPTIONAL_MODULES, install_hint
from android_gym.tasks import get_task_class

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "packages" / "android-gym" / "pyproject.toml"
SRC = ROOT / "packages" / "android-gym" / "src" / "android_gym"


def _run(code: str) -> subprocess.CompletedProcess:
    prelude = "import sys\nsys.modules['cv2'] = None  # as in a venv without the 'video' extra\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=300)


def test_every_optional_module_comes_with_a_declared_extra_pinned_consistently():
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    assert {extra for extra, _ in OPTIONAL_MODULES.values()} <= set(extras)
    assert [Requirement(r).name for r in extras["video"]] == ["opencv-python-headless"]
    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    pins = {norm(name): version for name, version in (
        line.split("==", 1) for line in (ROOT / "tools" / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#"))}
    for requirements in extras.values():
        for req in map(Requirement, requirements):
            pin = pins.get(norm(req.name))
            assert pin, f"{req.name} (an android-gym extra) has no pin in tools/constraints.txt"
            assert req.specifier.contains(pin), (req, pin)
    # every "pip install 'android-gym[X]'" android-gym tells a user names an extra that exists
    told = {m for f in SRC.rglob("*.py") for m in re.findall(r"android-gym\[([a-z]\w*)\]", f.read_text())}
    assert told and told <= set(extras), told - set(extras)
    assert install_hint("cv2") == "pip install 'android-gym[video]'"


def test_with_its_extra_installed_the_video_task_is_listed_and_available():
    assert "MarkorTranscribeVideo" in android_gym.list_tasks("sim")
    assert get_task_class("MarkorTranscribeVideo").unavailable_reason() is None
    assert "MarkorTranscribeVideo" not in android_gym.unavailable_tasks("sim")


def test_without_opencv_the_video_task_is_left_out_with_the_reason():
    result = _run("""
import json, warnings
import gymnasium as gym
import android_gym
from android_gym.tasks import TaskError, get_task_class
from android_gym.sim import SimDevice, SimPhone
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    listed = android_gym.list_tasks("sim")
    again = android_gym.list_tasks("sim")
everything = android_gym.list_tasks("sim", include_unavailable=True)
try:
    gym.make("AndroidSim-v0", task="MarkorTranscribeVideo")
    made = "made"
except ValueError as exc:
    made = str(exc)
env = gym.make("AndroidSim-v0").unwrapped
task = get_task_class("MarkorTranscribeVideo")(seed=0)
try:
    task.initialize(SimDevice(SimPhone(seed=0)))
    init = "initialized"
except TaskError as exc:
    init = str(exc)
print(json.dumps({"listed": listed, "again": again, "all": everything, "warnings": [str(w.message) for w in caught],
                  "why": android_gym.unavailable_tasks("sim"), "made": made, "env": env.task_names, "init": init}))
""")
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert "MarkorTranscribeVideo" not in seen["listed"] and "MarkorTranscribeVideo" in seen["all"]
    assert seen["listed"] == seen["again"] and len(seen["all"]) - len(seen["listed"]) == len(seen["why"])
    assert "MarkorTranscribeVideo" not in seen["env"] and "SystemWifiTurnOff" in seen["env"]
    hint = "pip install 'android-gym[video]'"
    assert hint in seen["why"]["MarkorTranscribeVideo"]
    (warning,) = seen["warnings"]  # once per process, naming the task and the fix
    assert "MarkorTranscribeVideo" in warning and hint in warning
    assert "cannot be set up on this machine" in seen["made"] and hint in seen["made"]
    assert hint in seen["init"]


def test_tasks_command_lists_a_task_whose_extra_is_missing_with_the_reason():
    result = _run("from android_gym.cli import main\nsys.exit(main(['tasks', '--json']))\n")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert "pip install 'android-gym[video]'" in rows["MarkorTranscribeVideo"]["unavailable"]
    assert rows["SystemWifiTurnOff"]["unavailable"] is None
    text = _run("from android_gym.cli import main\nsys.exit(main(['tasks']))\n")
    line = next(x for x in text.stdout.splitlines() if x.startswith("MarkorTranscribeVideo "))
    assert "unavailable here: needs OpenCV" in line and "cannot be set up on this machine" in text.stderr
