"""The real adb binary (Debian's adb 29) and adbutils driving the simulated phone through SimAdbd."""

from __future__ import annotations

import io
import os
import re
import select
import socket
import subprocess
import threading
import time

import pytest
from PIL import Image

from android_gym.adbd import HostAdb, SimAdbd, find_adb
from android_gym.sim import SimDevice, SimPhone

pytestmark = pytest.mark.skipif(find_adb() is None, reason="the adb binary is not installed (apt-get install adb)")


@pytest.fixture(scope="module")
def adb(tmp_path_factory):
    """A private adb server (own port and HOME) for this module."""
    with HostAdb(home=tmp_path_factory.mktemp("adb_home")) as host:
        yield host


@pytest.fixture(scope="module")
def shared(adb: HostAdb):
    """One connected simulated phone for the tests that do not change its screen."""
    with SimAdbd(SimPhone()) as server:
        adb.connect(server.serial)
        yield server


def _adb_ok(adb: HostAdb, serial: str, *args: str, timeout: float = 20.0) -> bytes:
    proc = adb.run("-s", serial, *args, timeout=timeout)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def test_connect_lists_the_device_with_its_banner(adb: HostAdb, shared: SimAdbd):
    assert adb.devices()[shared.serial] == "device"
    listing = adb.text("devices", "-l")
    line = next(ln for ln in listing.splitlines() if ln.startswith(shared.serial))
    assert "product:oriole" in line and "model:Pixel_6" in line and "device:oriole" in line
    assert adb.text("-s", shared.serial, "get-state").strip() == "device"
    features = adb.text("-s", shared.serial, "features").split()
    assert {"shell_v2", "cmd", "stat_v2"} <= set(features)


def test_shell_output_and_exit_codes(adb: HostAdb, shared: SimAdbd):
    assert _adb_ok(adb, shared.serial, "shell", "echo", "hi") == b"hi\n"
    assert _adb_ok(adb, shared.serial, "shell", "getprop ro.build.version.sdk") == b"33\n"
    assert adb.run("-s", shared.serial, "shell", "false").returncode == 1
    missing = adb.run("-s", shared.serial, "shell", "no_such_tool --flag")
    assert missing.returncode == 127 and b"no_such_tool: inaccessible or not found" in missing.stdout
    assert adb.run("-s", shared.serial, "shell", "true && false || true").returncode == 0
    # -x turns the shell protocol off: plain "shell:" carries output but no exit status
    plain = adb.run("-s", shared.serial, "shell", "-x", "false; echo done")
    assert plain.returncode == 0 and plain.stdout == b"done\n"


def test_uiautomator_dump_then_pull(adb: HostAdb, shared: SimAdbd, tmp_path):
    out = _adb_ok(adb, shared.serial, "shell", "uiautomator", "dump", "/sdcard/x.xml")
    assert b"dumped to: /sdcard/x.xml" in out
    target = tmp_path / "x.xml"
    _adb_ok(adb, shared.serial, "pull", "/sdcard/x.xml", str(target))
    assert target.read_text() == shared.phone.files.read_text("/sdcard/x.xml")
    assert target.read_text().startswith("<?xml") and "<hierarchy" in target.read_text()


def test_exec_out_screencap_is_a_png_of_the_screen_size(adb: HostAdb, shared: SimAdbd):
    png = _adb_ok(adb, shared.serial, "exec-out", "screencap", "-p")
    assert png == shared.phone.screenshot_png()
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (shared.phone.width, shared.phone.height)


def test_exec_out_is_binary_safe_for_megabytes(adb: HostAdb, shared: SimAdbd):
    blob = os.urandom(1_500_000) + bytes(range(256)) + b"\r\n\n\r\x00" * 1000
    shared.phone.files.write("/sdcard/Download/blob.bin", blob)
    assert _adb_ok(adb, shared.serial, "exec-out", "cat /sdcard/Download/blob.bin") == blob


def test_push_pull_round_trip_200k(adb: HostAdb, shared: SimAdbd, tmp_path):
    data = os.urandom(200 * 1024)
    src, back = tmp_path / "up.bin", tmp_path / "down.bin"
    src.write_bytes(data)
    _adb_ok(adb, shared.serial, "push", str(src), "/sdcard/Download/")
    assert shared.phone.files.read("/sdcard/Download/up.bin") == data
    _adb_ok(adb, shared.serial, "pull", "/sdcard/Download/up.bin", str(back))
    assert back.read_bytes() == data
    listing = adb.text("-s", shared.serial, "shell", "ls /sdcard/Download")
    assert "up.bin" in listing.split()
    missing = adb.run("-s", shared.serial, "pull", "/sdcard/nope.bin", str(tmp_path / "n"))
    assert missing.returncode != 0 and b"No such file or directory" in missing.stdout + missing.stderr


def test_forward_carries_data_to_an_echo_server(adb: HostAdb, shared: SimAdbd):
    server = socket.create_server(("127.0.0.1", 0))
    target = server.getsockname()[1]

    def echo() -> None:
        conn, _ = server.accept()
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    local = int(adb.text("-s", shared.serial, "forward", "tcp:0", f"tcp:{target}").strip())
    try:
        payload = os.urandom(300_000)
        with socket.create_connection(("127.0.0.1", local), timeout=10) as client:
            client.sendall(payload)
            got = b""
            while len(got) < len(payload):
                chunk = client.recv(65536)
                assert chunk, "forwarded connection closed early"
                got += chunk
        assert got == payload
    finally:
        adb.run("-s", shared.serial, "forward", "--remove", f"tcp:{local}")
        server.close()


def test_refused_services_read_as_closed(adb: HostAdb, shared: SimAdbd):
    proc = adb.run("-s", shared.serial, "reverse", "--list")
    assert proc.returncode != 0 and b"closed" in proc.stderr


def test_interactive_shell_reads_lines_from_stdin(adb: HostAdb, shared: SimAdbd):
    proc = adb.run("-s", shared.serial, "shell", input=b"echo one\ngetprop ro.product.model\nexit\n")
    assert proc.returncode == 0
    assert proc.stdout.split(b"oriole:/ $ ") == [b"", b"one\n", b"Pixel 6\n", b""]


def test_input_tap_changes_the_phone(adb: HostAdb):
    phone = SimPhone()
    with SimAdbd(phone) as server:
        adb.connect(server.serial)
        focus = "dumpsys window | grep mCurrentFocus"
        before = adb.text("-s", server.serial, "shell", focus)
        assert "nexuslauncher" in before
        _adb_ok(adb, server.serial, "shell", "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
        assert phone.foreground == "com.android.settings"
        xml = phone.dump()
        bounds = re.search(r'text="Network &amp; internet"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml)
        assert bounds is not None
        x1, y1, x2, y2 = map(int, bounds.groups())
        _adb_ok(adb, server.serial, "shell", "input", "tap", str((x1 + x2) // 2), str((y1 + y2) // 2))
        after = adb.text("-s", server.serial, "exec-out", "uiautomator dump /dev/tty")
        assert after.startswith(phone.dump()) and phone.dump() != xml
        assert 'text="Internet"' in after or 'text="Wi-Fi"' in after or "Airplane" in after
        _adb_ok(adb, server.serial, "shell", "input keyevent 3")
        assert "nexuslauncher" in adb.text("-s", server.serial, "shell", focus)


def test_several_devices_at_once(adb: HostAdb):
    phones = [SimPhone(seed=i) for i in range(3)]
    servers = [SimAdbd(p).start() for p in phones]
    try:
        for i, server in enumerate(servers):
            adb.connect(server.serial)
            _adb_ok(adb, server.serial, "shell", f"settings put system screen_brightness {10 + i}")
        listed = adb.devices()
        for i, server in enumerate(servers):
            assert listed[server.serial] == "device"
            assert adb.text("-s", server.serial, "shell", "settings get system screen_brightness").strip() == str(10 + i)
            assert phones[i].settings_get("system", "screen_brightness") == str(10 + i)
        results: dict[str, bytes] = {}

        def hammer(server: SimAdbd) -> None:
            results[server.serial] = b"".join(
                adb.run("-s", server.serial, "shell", f"echo {server.port}-{k}").stdout for k in range(5))

        threads = [threading.Thread(target=hammer, args=(s,)) for s in servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        for server in servers:
            assert results[server.serial] == b"".join(f"{server.port}-{k}\n".encode() for k in range(5))
    finally:
        for server in servers:
            adb.run("disconnect", server.serial)
            server.stop()


def test_reboot_drops_the_transport_and_the_device_comes_back(adb: HostAdb):
    phone = SimPhone()
    with SimAdbd(phone) as server:
        adb.connect(server.serial)
        _adb_ok(adb, server.serial, "shell", "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
        _adb_ok(adb, server.serial, "reboot")
        adb.wait_for_state(server.serial, "device", timeout=10)
        assert "nexuslauncher" in adb.text("-s", server.serial, "shell", "dumpsys window | grep mCurrentFocus")
        adb.run("disconnect", server.serial)


def test_emulator_pair_registers_and_adb_emu_snapshots(adb: HostAdb, tmp_path):
    token = tmp_path / "home" / ".emulator_console_auth_token"
    phone = SimPhone()
    emu_adb = HostAdb(server_port=adb.server_port, home=tmp_path / "home")  # adb emu reads $HOME's token
    with SimAdbd(phone, port=0, console_port=0, adb_server_port=adb.server_port, auth_token_path=token) as server:
        assert server.serial == f"emulator-{server.console_port}" and server.announced
        adb.wait_for_state(server.serial, "device", timeout=5)
        assert token.read_text().strip()  # created, non-empty: adb emu must authenticate with it
        assert emu_adb.text("-s", server.serial, "emu", "avd", "name") == "Pixel_6_API_33\r\nOK\r\n"
        assert emu_adb.text("-s", server.serial, "emu", "avd", "snapshot", "save", "home") == "OK\r\n"
        _adb_ok(adb, server.serial, "shell", "settings put global airplane_mode_on 1")
        assert phone.settings_get("global", "airplane_mode_on") == "1"
        assert emu_adb.text("-s", server.serial, "emu", "avd", "snapshot", "load", "home") == "OK\r\n"
        assert adb.text("-s", server.serial, "shell", "settings get global airplane_mode_on").strip() == "0"
        assert "home" in emu_adb.text("-s", server.serial, "emu", "avd", "snapshot", "list")
        # without -s, adb emu picks the only emulator (an unrelated emulator on ports 5554-5585 that this
        # adb server found when it started would make that ambiguous, so only check it when we are alone)
        if [s for s in adb.devices() if s.startswith("emulator-")] == [server.serial]:
            assert emu_adb.text("emu", "ping") == "I am alive!\r\nOK\r\n"
        # adb emu only knows emulator-NNNN serials: an adb-connect'ed serial has no console
        tcp_serial = f"127.0.0.1:{server.port}"
        assert adb.run("-s", tcp_serial, "emu", "ping").returncode != 0
        assert emu_adb.text("-s", server.serial, "emu", "kill").startswith("OK: killing emulator")
        adb.wait_for_state(server.serial, None, timeout=5)
        assert server.killed


def test_adbutils_client_drives_the_device(adb: HostAdb, shared: SimAdbd, monkeypatch):
    adbutils = pytest.importorskip("adbutils")
    monkeypatch.setenv("ADBUTILS_ADB_PATH", adb.adb)
    client = adbutils.AdbClient(host="127.0.0.1", port=adb.server_port)
    device = client.device(shared.serial)
    assert device.shell("echo hello") == "hello"
    result = device.shell2("echo out; false", v2=True)
    assert result.returncode == 1 and result.output == "out\n"
    assert device.prop.model == "Pixel 6"
    assert device.screenshot().size == (shared.phone.width, shared.phone.height)
    device.sync.push(b"from adbutils", "/sdcard/Documents/a.txt")
    assert shared.phone.files.read("/sdcard/Documents/a.txt") == b"from adbutils"
    assert device.sync.read_bytes("/sdcard/Documents/a.txt") == b"from adbutils"
    assert "a.txt" in [f.path for f in device.sync.list("/sdcard/Documents")]
    assert device.sync.stat("/sdcard/Documents/a.txt").size == len(b"from adbutils")


def test_latency_model_applies_to_adb_traffic(adb: HostAdb):
    device = SimDevice(SimPhone(), latency={"tap": 0.3})
    with SimAdbd(device) as server:
        adb.connect(server.serial)
        t0 = time.monotonic()
        _adb_ok(adb, server.serial, "shell", "echo fast")
        fast = time.monotonic() - t0
        t0 = time.monotonic()
        _adb_ok(adb, server.serial, "shell", "input tap 10 500")
        slow = time.monotonic() - t0
        assert slow >= 0.3 > fast
        assert device.latency.counts["tap"] == 1
        adb.run("disconnect", server.serial)


def test_interactive_shell_on_a_terminal_echoes_like_a_pty(adb: HostAdb, shared: SimAdbd):
    master, slave = os.openpty()
    proc = subprocess.Popen([adb.adb, "-s", shared.serial, "shell"], stdin=slave, stdout=slave, stderr=slave,
                            env=adb.env)
    os.close(slave)

    def read_until(marker: bytes, timeout: float = 10.0) -> bytes:
        out, deadline = b"", time.monotonic() + timeout
        while marker not in out and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
        return out

    try:
        assert read_until(b"$ ").endswith(b"oriole:/ $ ")
        os.write(master, b"getprop ro.product.model\r")
        assert read_until(b"Pixel 6\r\noriole:/ $ ") == b"getprop ro.product.model\r\nPixel 6\r\noriole:/ $ "
        os.write(master, b"exit\r")
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
