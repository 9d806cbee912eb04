"""The workspace holds exactly the versions of tools/constraints.txt, which the README's numbers were measured with.

A tiny policy trained for a few minutes is sensitive to library versions (a fresh install that resolved newer
ones changed the main job's result); tools/setup_env.sh installs with these constraints, and this test fails
when the environment drifts from them or a new dependency arrives without a pin.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

CONSTRAINTS = Path(__file__).resolve().parents[1] / "tools" / "constraints.txt"
# Installed by the set-up itself (build tools, the editable workspace packages) rather than resolved as dependencies.
_NOT_PINNED = {"pip", "setuptools", "wheel", "android-gym", "coach-reward", "coach-rl", "android-world"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"tools/constraints.txt: {line!r} is not name==version"
            pins[_norm(name)] = version
    return pins


def _installed() -> dict[str, str]:
    return {_norm(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}


def test_installed_versions_are_the_pinned_ones():
    pins, installed = _pins(), _installed()
    drifted = {name: (installed[name], want) for name, want in pins.items()
               if name in installed and installed[name].split("+")[0] != want.split("+")[0]}
    assert not drifted, ("the workspace differs from tools/constraints.txt (installed, pinned): "
                         f"{drifted}; run bash tools/setup_env.sh, or re-pin deliberately")


def test_every_installed_dependency_is_pinned():
    pins = _pins()
    unpinned = sorted(name for name in _installed() if name not in pins and name not in _NOT_PINNED)
    assert not unpinned, (f"installed but not pinned in tools/constraints.txt: {unpinned}; a fresh set-up could "
                          "resolve another version of them")
