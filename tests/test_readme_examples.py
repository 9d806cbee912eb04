"""Every README's Python examples run as written: the blocks of one README run in order, in a fresh interpreter."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted((ROOT / "packages").glob("*/README.md"))]
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _examples(readme: Path) -> str:
    return "\n\n".join(block for block in _BLOCK.findall(readme.read_text()))


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_python_examples_run(readme: Path, tmp_path: Path):
    code = _examples(readme)
    if not code.strip():
        pytest.skip(f"{readme.relative_to(ROOT)} has no python examples")
    script = tmp_path / "readme_example.py"
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{readme.name} examples failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
