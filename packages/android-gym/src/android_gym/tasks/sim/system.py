"""Launcher tasks re-created from AndroidWorld: open an app, and turn on Wi-Fi then open an app.

Success is read from ``dumpsys window`` (the focused window's package), as AndroidWorld does.
AndroidWorld draws ``app_name`` from camera, clock, contacts, settings and dialer; the sim draws
from those of them it has installed.
"""

from __future__ import annotations

import random
from typing import Any

from android_gym.actions import Finished, OpenApp
from android_gym.apps import resolve_package
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import foreground_package, go_home, read_setting, write_setting
from android_gym.tasks.expert import grant_permission_popup
from android_gym.tasks.sim.settings import SETTINGS_PACKAGE, toggle_wifi_expert
from android_gym.tasks.suites import SUITES_AW

AW_OPEN_APP_NAMES = ("camera", "clock", "contacts", "settings", "dialer")


def installed_app_names() -> list[str]:
    """AndroidWorld's open-app names whose package the simulated phone installs (sorted)."""
    from android_gym.sim.phone import discover_apps

    installed = discover_apps()
    names = []
    for name in AW_OPEN_APP_NAMES:
        try:
            package = resolve_package(name)
        except ValueError:
            continue
        if package in installed:
            names.append(name)
    return names


def _package_for(app_name: str) -> str:
    try:
        return resolve_package(app_name)
    except ValueError as exc:
        raise TaskError(f"app {app_name!r} has no known package") from exc


@register_task
class OpenAppTaskEval(Task):
    """Open a named app from the home screen."""

    name = "OpenAppTaskEval"
    template = ("Open the {app_name} app. Clear any pop-ups that may appear by granting all permissions "
                "that are required.")
    difficulty = "easy"
    complexity = 1.0
    app_names = AW_OPEN_APP_NAMES
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"app_name": rng.choice(installed_app_names())}

    def initialize(self, device: Any) -> None:
        go_home(device, _package_for(self.params["app_name"]))

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if foreground_package(device) == _package_for(self.params["app_name"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(self.params["app_name"])
        yield from grant_permission_popup(ui)
        yield Finished()


@register_task
class TurnOnWifiAndOpenApp(Task):
    """Wi-Fi starts off; turn it on, then open the app (half credit for each, as in AndroidWorld)."""

    name = "TurnOnWifiAndOpenApp"
    template = "Turn on Wifi, then open the {app_name} app"
    difficulty = "easy"
    complexity = 2.0
    app_names = ("settings",)
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return OpenAppTaskEval.generate_random_params(rng)

    def initialize(self, device: Any) -> None:
        go_home(device, *sorted({SETTINGS_PACKAGE, _package_for(self.params["app_name"])}))
        write_setting(device, "global", "wifi_on", 0)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        wifi = 1.0 if read_setting(device, "global", "wifi_on") in ("1", "2") else 0.0
        app = 1.0 if foreground_package(device) == _package_for(self.params["app_name"]) else 0.0
        return (wifi + app) / 2.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from toggle_wifi_expert(ui, True)
        ui = yield OpenApp(self.params["app_name"])
        yield from grant_permission_popup(ui)
        yield Finished()
