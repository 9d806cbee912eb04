"""Fixtures shared by the android-gym tests."""

from __future__ import annotations

import os

import pytest

ADB = "/usr/bin/adb"


@pytest.fixture(scope="module")
def host_adb(tmp_path_factory):
    """A private adb server (Debian's real adb binary) for one test module; ``home`` is its HOME and
    ``token_path`` the emulator console auth token file there. Skips where adb is not installed."""
    if not os.access(ADB, os.X_OK):
        pytest.skip(f"{ADB} not installed (apt-get install adb)")
    from android_gym.adbd import HostAdb

    home = tmp_path_factory.mktemp("adb_home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ADBUTILS_ADB_PATH", ADB)
        host = HostAdb(adb=ADB, home=home)
        host.start_server()
        host.home = home
        host.token_path = str(home / ".emulator_console_auth_token")
        try:
            yield host
        finally:
            host.kill_server()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Debian's chromium, headless with a fresh profile, driven by Playwright, for one test module. Skips, saying
    why, where chromium or Playwright is missing (``.ci/run`` installs chromium, ``tools/requirements-dev.txt``
    Playwright; never ``playwright install``, which downloads another browser)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium; .ci/run does)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (tools/requirements-dev.txt)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 950})
        try:
            yield context
        finally:
            context.close()
