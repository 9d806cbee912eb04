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
