"""Each package's wheel in a fresh venv with only what it declares: its README's offline commands and examples run.

The venvs are made with ``python -m venv --without-pip`` (never ``--system-site-packages``: a dependency the
workspace happens to have would hide one a package forgot to declare) and filled by the workspace's pip (``pip
--python VENV install -c tools/constraints.txt``) from the wheels built here. android-gym is installed alone, then
with each documented extra on its own, each in its own venv; coach-reward and coach-rl share one venv (coach-rl
depends on coach-reward), which gets torch 2.13.0 from the wheel file on this machine's disk, named to pip as a
file so that pip never resolves another torch (that would download gigabytes). Without such a file the coach
venv's test skips, saying so.

Measured on the shared 2-core machine while other jobs ran (load 3 to 6): 3 min 47 s for the module, of which the
wheels 9 s, android-gym alone 23 s, each extra 10 to 12 s, the coach venv 103 s (most of it installing torch and
transformers) and 39 s deleting it afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"
CONSTRAINTS = ROOT / "tools" / "constraints.txt"
TORCH_VERSION = "2.13.0"
EXTRAS = ("video", "adb", "androidlab", "parquet")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("fresh_venvs")]  # one worker builds the wheels once


def _quiet_pip(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("WARNING: Location"))


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    """The three packages' wheels, built as a user's pip builds them (build isolation on)."""
    out = tmp_path_factory.mktemp("wheels")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                           *(str(PACKAGES / name) for name in ("android-gym", "coach-reward", "coach-rl"))],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, _quiet_pip(proc.stdout + proc.stderr)[-3000:]
    found = {name: next(out.glob(f"{name.replace('-', '_')}-*.whl")) for name in ("android-gym", "coach-reward",
                                                                                  "coach-rl")}
    return found


class Venv:
    """A fresh venv under ``path``: ``install`` with the constraints, ``run`` a command with its bin/ first on PATH."""

    def __init__(self, path: Path):
        self.path = path
        # No pip inside (the workspace's pip installs into it with --python): seconds saved per venv.
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=300)
        self.python = path / "bin" / "python"
        self.cwd = path.parent / f"{path.name}-work"
        self.cwd.mkdir()

    def install(self, *requirements: str) -> None:
        proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(self.python), "install", "-q", "-c",
                               str(CONSTRAINTS), *requirements],
                              capture_output=True, text=True, timeout=900, env=self.env())
        assert proc.returncode == 0, _quiet_pip(proc.stdout + proc.stderr)[-4000:]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env.update(PATH=f"{self.path / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(self.path),
                   OMP_NUM_THREADS="1", PYTHONWARNINGS="default")
        return env

    def run(self, *argv: str, timeout: int = 600) -> subprocess.CompletedProcess:
        command = [str(self.path / "bin" / argv[0]), *argv[1:]] if argv[0] != "python" else [str(self.python),
                                                                                           *argv[1:]]
        return subprocess.run(command, cwd=self.cwd, capture_output=True, text=True, timeout=timeout, env=self.env())

    def python_code(self, code: str, timeout: int = 600) -> subprocess.CompletedProcess:
        script = self.cwd / f"script{len(list(self.cwd.glob('script*.py')))}.py"
        script.write_text(code)
        return self.run("python", str(script), timeout=timeout)

    def distributions(self) -> set[str]:
        out = self.run("python", "-c", "from importlib import metadata\n"
                       "print('\\n'.join(d.metadata['Name'] for d in metadata.distributions()))").stdout
        return {re.sub(r"[-_.]+", "-", name).lower() for name in out.split()}


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def readme_python(package: str) -> str:
    """The README's python blocks in order, as tests/test_readme_examples.py runs them."""
    text = (PACKAGES / package / "README.md").read_text()
    return "\n\n".join(re.findall(r"```python\n(.*?)```", text, re.S))


def _shard(tmp_path: Path) -> Path:
    """A real coach-rl replay shard (written by the workspace's coach-rl) for the fresh venvs' viewer to read."""
    pytest.importorskip("coach_rl", reason="the workspace's coach-rl writes the shard")
    import numpy as np

    from android_gym.actions import Click
    from android_gym.trajectory import Step, Trajectory
    from coach_rl.records import StepRecord
    from coach_rl.replay import ReplayBuffer

    shot = np.full((40, 20, 3), 90, dtype=np.uint8)
    traj = Trajectory(task="ShardTask", instruction="tap it", success=1.0,
                      steps=[Step(ui="[a] Button", action=Click(5, 5), screenshot=shot, reward=1.0)])
    record = StepRecord(episode_id="", step_index=0, num_steps=1, task="ShardTask", group="g", prompt=[],
                        prompt_text="p", response="Action: click", process_reward=0.75, outcome_reward=1.0,
                        return_t=1.0, success=1.0, env_reward=1.0, instruction="tap it", ui="[a] Button",
                        action=json.dumps(Click(5, 5).to_dict()))
    buffer = ReplayBuffer(tmp_path / "replay", capacity=100)
    buffer.add(traj, [record])
    (shard,) = (tmp_path / "replay").glob("*.parquet")
    return shard


IMPORT_ALL = """
import importlib, pkgutil
for name in {packages!r}.split(", "):
    package = importlib.import_module(name)
    for module in pkgutil.walk_packages(package.__path__, name + "."):
        if not module.name.endswith(".__main__"):  # a __main__ runs its command (adbd's serves until stopped)
            importlib.import_module(module.name)
print("imported")
"""

ITERATE_TASKS = """
import warnings
import gymnasium as gym
import android_gym
assert android_gym.__file__.startswith({venv!r}), android_gym.__file__
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    names = android_gym.list_tasks("sim")
env = gym.make("AndroidSim-v0", disable_env_checker=True)
for name in names:  # every listed task sets up, and its expert takes its first step
    env.reset(seed=0, options={{"task": name}})
    env.step(env.unwrapped.expert_action())
env.close()
print("RESET", len(names), "MarkorTranscribeVideo" in names)
print("WARNED", " | ".join(str(w.message) for w in caught if "leaves out" in str(w.message)))
"""


def test_android_gym_alone_runs_its_readme_commands_and_every_listed_task(wheels, tmp_path):
    venv = Venv(tmp_path / "gym")
    venv.install(str(wheels["android-gym"]))
    have = venv.distributions()
    assert "android-gym" in have
    assert not have & {"opencv-python-headless", "opencv-python", "pyarrow", "pyyaml", "torch", "adbutils",
                       "coach-rl", "coach-reward"}, have

    tasks = venv.run("android-gym", "tasks")
    listing = ok(tasks)
    (video,) = [line for line in listing.splitlines() if line.startswith("MarkorTranscribeVideo ")]
    assert "unavailable here: needs OpenCV" in video and "pip install 'android-gym[video]'" in video
    assert "cannot be set up on this machine" in tasks.stderr

    out = ok(venv.python_code(ITERATE_TASKS.format(venv=str(venv.path))))
    counts = dict(line.split(" ", 1) for line in out.splitlines() if line.startswith(("RESET", "WARNED")))
    n, has_video = counts["RESET"].split()
    assert int(n) > 200 and has_video == "False"
    assert "MarkorTranscribeVideo" in counts["WARNED"] and "android-gym[video]" in counts["WARNED"]

    ok(venv.python_code(readme_python("android-gym")))  # the quick look and every other example
    ok(venv.run("android-gym", "play", "SystemWifiTurnOff", "--agent", "expert", "--record", "out/wifi.json.gz"))
    ok(venv.run("android-gym", "view", "out/wifi.json.gz"))
    assert (venv.cwd / "out" / "wifi.html").is_file()

    # a coach-rl replay shard without the parquet extra: the viewer names the extra, and nothing else breaks
    shard = _shard(tmp_path)
    refused = venv.run("android-gym", "view", str(shard), "-o", "shard.html")
    assert refused.returncode == 2 and "pip install 'android-gym[parquet]'" in refused.stderr, refused.stderr
    # replay needs android_world (not on PyPI): it says so, and how to get it
    replay = venv.run("android-gym", "replay", str(ROOT / "tests/android_gym/data/real_episodes/SystemWifiTurnOff_0"
                                                             ".pkl.gz"), "-o", "replay_out")
    assert replay.returncode == 1 and "google-research/android_world" in replay.stderr, replay.stderr

    # every module imports with the base dependencies only (an extra's modules are imported where they are used)
    ok(venv.python_code(IMPORT_ALL.format(packages="android_gym")))


EXTRA_CHECKS = {
    "video": """
import gymnasium as gym, android_gym
assert "MarkorTranscribeVideo" in android_gym.list_tasks("sim")
env = gym.make("AndroidSim-v0", task="MarkorTranscribeVideo", disable_env_checker=True)
obs, info = env.reset(seed=0)  # writes its videos with OpenCV
print(info["goal"])
""",
    "adb": """
import adbutils, uiautomator2
from android_gym.extras import missing_module_reason
from android_gym.drivers.adb import AdbDevice
assert missing_module_reason("adbutils") is None and missing_module_reason("uiautomator2") is None
print(AdbDevice.__name__)
""",
    "androidlab": """
from pathlib import Path
import gymnasium as gym
from android_gym.suites.androidlab import load_androidlab_tasks
Path("clock.yaml").write_text("APP: clock\\npackage: com.google.android.deskclock\\ntasks:\\n"
                              "  - task_id: clock_1\\n    task: Set an alarm at 3PM\\n    metric_type: operation\\n")
(spec,) = load_androidlab_tasks("clock.yaml")
env = gym.make("AndroidLab-v0", tasks_path="clock.yaml", disable_env_checker=True)
obs, info = env.reset(seed=0)
print(spec.task_id, info["task"])
""",
}


@pytest.mark.parametrize("extra", EXTRAS)
def test_android_gym_with_each_extra_on_its_own(wheels, tmp_path, extra):
    venv = Venv(tmp_path / extra)
    venv.install(f"{wheels['android-gym']}[{extra}]")
    have = venv.distributions()
    others = {"video": "opencv-python-headless", "adb": "adbutils", "androidlab": "pyyaml", "parquet": "pyarrow"}
    assert others.pop(extra) in have
    assert not have & set(others.values()), have & set(others.values())
    if extra == "parquet":
        shard = _shard(tmp_path)
        ok(venv.run("android-gym", "view", str(shard), "-o", "shard.html"))
        page = (venv.cwd / "shard.html").read_text()
        assert "ShardTask" in page and "data:image/png;base64," in page
    else:
        ok(venv.python_code(EXTRA_CHECKS[extra]))


def _local_torch_wheel() -> Path | None:
    """The torch 2.13.0 wheel on this machine's disk: $ANDROID_COACH_TORCH_WHEEL, or one in pip's find-links."""
    named = os.environ.get("ANDROID_COACH_TORCH_WHEEL")
    if named:
        return Path(named) if Path(named).is_file() else None
    places = os.environ.get("PIP_FIND_LINKS", "").split()
    config = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    for line in config.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith("find-links"):
            places += value.strip().strip("'\"").split()
    for place in places:
        folder = Path(place.removeprefix("file://"))
        if folder.is_dir():
            for wheel in sorted(folder.glob(f"torch-{TORCH_VERSION}*.whl")):
                return wheel
    return None


def test_coach_reward_and_coach_rl_run_their_commands_in_a_fresh_venv(wheels, tmp_path):
    torch_wheel = _local_torch_wheel()
    if torch_wheel is None:
        pytest.skip(f"no torch {TORCH_VERSION} wheel on this machine's disk (set ANDROID_COACH_TORCH_WHEEL): "
                    "pip would download another torch")
    venv = Venv(tmp_path / "coach")
    venv.install(str(torch_wheel), str(wheels["android-gym"]), str(wheels["coach-reward"]), str(wheels["coach-rl"]))
    have = venv.distributions()
    assert {"torch", "coach-reward", "coach-rl", "android-gym", "pyarrow"} <= have
    assert not have & {"opencv-python-headless", "opencv-python", "vllm", "ray", "tensorboard"}, have
    version = ok(venv.run("python", "-c", "import torch; print(torch.__version__)")).strip()
    assert version.split("+")[0] == TORCH_VERSION, version

    assert "demo" in ok(venv.run("coach-reward", "--help"))
    assert ok(venv.run("coach-rl", "--help")).strip()
    score = ok(venv.python_code(_first_block("coach-reward")))  # the README's "Score a step with a PRM"
    assert re.match(r"\d\.\d+ \w+", score.strip().splitlines()[-1]), score

    # the demo of the README at CI size on a few tasks, one of which needs the missing 'video' extra
    demo = venv.run("coach-reward", "demo", "--size", "ci", "--seed", "0", "--output", "prm", "--quiet",
                    "--tasks", "MarkorTranscribeVideo,SystemWifiTurnOff,SystemWifiTurnOn,SystemBluetoothTurnOff,"
                    "SystemBluetoothTurnOn", "--max-steps", "5")
    printed = ok(demo)
    skipped = [line for line in demo.stderr.splitlines() if line.startswith("demo: skipping")]
    assert skipped == ["demo: skipping MarkorTranscribeVideo: it needs OpenCV (Python module cv2): "
                       "pip install 'android-gym[video]'"], demo.stderr[-2000:]
    assert "held-out accuracy" in printed and (venv.cwd / "prm" / "prm_config.json").is_file()

    # every module of the two packages imports with their declared dependencies (extras' modules lazily)
    ok(venv.python_code(IMPORT_ALL.format(packages="coach_reward, coach_rl")))


def _first_block(package: str) -> str:
    return re.findall(r"```python\n(.*?)```", (PACKAGES / package / "README.md").read_text(), re.S)[0]


@pytest.fixture(autouse=True)
def _no_leftover_venvs(tmp_path):
    yield
    for child in tmp_path.iterdir():  # venvs are big; pytest keeps the last few tmp dirs
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
