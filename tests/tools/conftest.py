"""Shared fixture for the tests of the scripts under tools/bench (scripts run by path, not installed modules)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "tools" / "bench"


@pytest.fixture(scope="module")
def load_bench_script() -> Callable[[str], ModuleType]:
    """Import ``tools/bench/<name>.py`` as a module."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(f"{name}_bench", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
