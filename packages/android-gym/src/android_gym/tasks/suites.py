"""The ``suites`` tuples task classes declare: every simulated task is in "sim"; re-creations add their benchmark."""

from __future__ import annotations

SUITES_SIM: tuple[str, ...] = ("sim",)
"""A task of the simulated suite only."""

SUITES_AW: tuple[str, ...] = ("sim", "android_world")
"""A simulated re-creation of an AndroidWorld task (same name and template)."""

SUITES_LAB: tuple[str, ...] = ("sim", "androidlab")
"""A simulated re-creation of an AndroidLab task (name = its task_id, template = its task text)."""

__all__ = ["SUITES_AW", "SUITES_LAB", "SUITES_SIM"]
