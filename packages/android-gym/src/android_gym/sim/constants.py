"""What every part of the simulated phone agrees on, in a module that imports none of them.

The phone (:mod:`android_gym.sim.phone`), its shell, its apps and sim-adbd read the launcher's package and the
moment the clock starts from here, so none of them has to import the phone (which imports them) to know it.
"""

from __future__ import annotations

import datetime as _dt

__all__ = ["LAUNCHER_PACKAGE", "START_TIME"]

LAUNCHER_PACKAGE = "com.google.android.apps.nexuslauncher"
"""The home screen's package (the Pixel launcher of AndroidWorld's emulator image)."""

START_TIME = _dt.datetime(2023, 10, 15, 15, 34, 0)
"""The simulated clock at boot: AndroidWorld's fixed emulator date and time."""
