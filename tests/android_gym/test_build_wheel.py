"""Building android-gym's wheel: with a C compiler it carries the native reader (platform tag); without
one the build still succeeds, warns, and gives a pure-Python wheel that reads dumps the same way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "packages" / "android-gym"

pytestmark = pytest.mark.slow


def build(out: Path, **env: str) -> tuple[Path, str]:
    """pip wheel the package into ``out`` (build isolation on, as a user's pip does)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(PACKAGE)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("android_gym-*.whl")
    return wheel, proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")
def test_wheel_carries_the_native_reader(tmp_path):
    wheel, _ = build(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("android_gym/xml/_speedups") and n.endswith((".so", ".pyd")) for n in names)
    assert not any(n.endswith(".c") for n in names)
    assert "-none-any" not in wheel.name  # a platform wheel


def test_wheel_without_a_compiler_is_pure_python_and_works(tmp_path):
    wheel, log = build(tmp_path / "dist", CC="/bin/false")
    assert wheel.name.endswith("-py3-none-any.whl")
    assert not any("_speedups" in n for n in zipfile.ZipFile(wheel).namelist())
    assert "optional C reader was not built" in log
    # The pure wheel, first on the path, reads and compresses a dump like the installed package does.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "from android_gym.xml import tree, compress_xml, synthetic_dump\n"
        f"assert tree.__file__.startswith({str(site)!r}), tree.__file__\n"
        "print(tree.NATIVE_READER)\n"
        "print(compress_xml(synthetic_dump(120, seed=4)).text)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    flag, _, text = out.partition("\n")
    assert flag == "False"
    from android_gym.xml import compress_xml, synthetic_dump

    assert text.rstrip("\n") == compress_xml(synthetic_dump(120, seed=4)).text
