"""SimDevice faults seen through the real adb: a crash drops the device, a hang stops answers, a disconnect reconnects."""

from __future__ import annotations

import subprocess
import time

import pytest

from android_gym.adbd import HostAdb, SimAdbd, find_adb
from android_gym.sim import SimDevice, SimPhone

pytestmark = pytest.mark.skipif(find_adb() is None, reason="the adb binary is not installed (apt-get install adb)")


@pytest.fixture(scope="module")
def adb(tmp_path_factory):
    with HostAdb(home=tmp_path_factory.mktemp("adb_home")) as host:
        yield host


def _faulty(kind: str, at_call: int = 2) -> SimDevice:
    return SimDevice(SimPhone(), faults=[(at_call, kind)])


def test_crash_drops_the_transport_and_the_device_goes_offline(adb: HostAdb):
    device = _faulty("crash")
    with SimAdbd(device) as server:
        adb.connect(server.serial)
        assert adb.run("-s", server.serial, "shell", "echo 1").stdout == b"1\n"
        crashed = adb.run("-s", server.serial, "shell", "echo 2")
        assert crashed.stdout == b""  # the line went dead before any output (adb 29 still exits 0)
        assert device.crashed and server.device_state() == "crashed"
        # it stays offline: reconnect attempts are accepted and dropped at once
        for _ in range(4):
            assert adb.devices().get(server.serial) == "offline"
            time.sleep(0.15)
        failed = adb.run("-s", server.serial, "shell", "echo 3")
        assert failed.returncode != 0 and b"offline" in failed.stderr
        server.recover()
        adb.wait_for_state(server.serial, "device", timeout=10)
        assert adb.run("-s", server.serial, "shell", "echo 4").stdout == b"4\n"
        assert device.health()
        adb.run("disconnect", server.serial)


def test_crashed_emulator_is_dropped_and_comes_back_after_a_console_snapshot_load(adb: HostAdb, tmp_path):
    home = tmp_path / "home"
    device = _faulty("crash", at_call=3)
    emu = HostAdb(server_port=adb.server_port, home=home)
    with SimAdbd(device, port=0, console_port=0, adb_server_port=adb.server_port,
                 auth_token_path=home / ".emulator_console_auth_token") as server:
        adb.wait_for_state(server.serial, "device", timeout=5)
        assert emu.text("-s", server.serial, "emu", "avd", "snapshot", "save", "good") == "OK\r\n"
        adb.run("-s", server.serial, "shell", "echo 1")
        adb.run("-s", server.serial, "shell", "echo 2")
        adb.run("-s", server.serial, "shell", "echo 3")  # the crash
        assert device.crashed
        # the emulator process (console) still answers while the system inside is down
        assert "virtual device is crashed" in emu.text("-s", server.serial, "emu", "avd", "status")
        assert emu.text("-s", server.serial, "emu", "avd", "snapshot", "load", "good") == "OK\r\n"
        adb.wait_for_state(server.serial, "device", timeout=10)
        assert adb.run("-s", server.serial, "shell", "echo back").stdout == b"back\n"


def test_hang_stops_answering_until_recovery(adb: HostAdb):
    device = _faulty("hang")
    with SimAdbd(device) as server:
        adb.connect(server.serial)
        assert adb.run("-s", server.serial, "shell", "echo 1").stdout == b"1\n"
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            adb.run("-s", server.serial, "shell", "echo 2", timeout=1.0)
        assert time.monotonic() - t0 >= 1.0
        assert device.hung and server.device_state() == "hung"
        with pytest.raises(subprocess.TimeoutExpired):  # everything else hangs too, not only the first call
            adb.run("-s", server.serial, "exec-out", "echo 3", timeout=0.5)
        assert adb.devices().get(server.serial) == "device"  # adb cannot tell a hung device from a slow one
        server.recover()
        adb.wait_for_state(server.serial, "device", timeout=10)
        assert adb.run("-s", server.serial, "shell", "echo 4", timeout=10).stdout == b"4\n"
        adb.run("disconnect", server.serial)


def test_disconnect_closes_the_socket_and_adb_reconnects(adb: HostAdb):
    device = _faulty("disconnect")
    with SimAdbd(device) as server:
        adb.connect(server.serial)
        assert adb.run("-s", server.serial, "shell", "echo 1").stdout == b"1\n"
        dropped = adb.run("-s", server.serial, "shell", "echo 2")
        assert dropped.stdout == b""
        assert server.device_state() == "ok"  # a disconnect is transient: the host just reconnects
        waited = adb.wait_for_state(server.serial, "device", timeout=10)
        assert waited < 10
        assert adb.run("-s", server.serial, "shell", "echo 3").stdout == b"3\n"
        assert [kind for _call, _op, kind in device.faults.fired] == ["disconnect"]
        adb.run("disconnect", server.serial)


def test_file_transfer_fails_on_a_crashed_device(adb: HostAdb, tmp_path):
    device = _faulty("crash", at_call=1)
    device.phone.files.write("/sdcard/a.txt", b"abc")
    with SimAdbd(device) as server:
        adb.connect(server.serial)
        adb.run("-s", server.serial, "shell", "echo boom")
        assert device.crashed
        pulled = adb.run("-s", server.serial, "pull", "/sdcard/a.txt", str(tmp_path / "a.txt"))
        assert pulled.returncode != 0
        assert not (tmp_path / "a.txt").exists()
