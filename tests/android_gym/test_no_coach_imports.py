"""android-gym stands alone: no module of it imports coach-rl or coach-reward (they depend on it, never the
reverse), and its replay does not import its viewer back (the page they share lives in episode_page)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "packages" / "android-gym" / "src" / "android_gym"
FORBIDDEN = ("coach_rl", "coach_reward")


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports: import statements anywhere (functions included) and import_module("...")."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def test_no_module_of_android_gym_imports_coach_rl_or_coach_reward():
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 50  # the whole package, not an empty glob
    offenders = {str(f.relative_to(SRC)): sorted(m for m in imported_modules(f) if m.split(".")[0] in FORBIDDEN)
                 for f in files}
    assert {f: m for f, m in offenders.items() if m} == {}


def test_the_static_check_sees_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from coach_rl.replay import ReplayBuffer\n"
                     "import importlib\nimportlib.import_module('coach_reward.prm')\n")
    assert {"coach_rl.replay", "coach_reward.prm"} <= imported_modules(probe)


def test_viewer_and_replay_do_not_import_each_other():
    """The viewer replays real episodes (viewer -> replay); replay builds its pages from episode_page, not viewer."""
    viewer = imported_modules(SRC / "viewer.py")
    replay = imported_modules(SRC / "replay.py")
    assert "android_gym.replay" in viewer
    assert not any(m == "android_gym.viewer" or m.startswith("android_gym.viewer.") for m in replay), replay
    assert "android_gym.episode_page" in replay and "android_gym.episode_page" in viewer


def test_importing_android_gym_leaves_coach_packages_out():
    code = (
        "import sys\n"
        "import android_gym, android_gym.viewer, android_gym.replay, android_gym.replay_shards, android_gym.cli\n"
        "import android_gym.episode_page, android_gym.tasks, android_gym.sim\n"
        "android_gym.list_tasks('sim')\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"
