"""EmulatorPool with the stand-in ``emulator`` executable (the simulated phone behind the simulated adbd).

The stand-in takes the real emulator's flags, registers with the (private) adb server as
``emulator-C`` like the real one, and crashes, hangs or fails to boot on request (env knobs in
``fake_emulator/emulator``).
"""

from __future__ import annotations

import signal
import socket
import sys
from pathlib import Path

import pytest

from android_gym import AndroidEnv, Click
from android_gym.device import DeviceCrashed, DeviceTimeout
from android_gym.drivers import EmulatorError, EmulatorPool, emulator_command, find_port_pair
from android_gym.drivers.pool import listening_sessions, port_holders

ADB = "/usr/bin/adb"
FAKE_EMULATOR = Path(__file__).with_name("fake_emulator") / "emulator"
AVD = "Pixel_6_API_33"


def test_emulator_command_has_the_headless_flags_and_port_pair():
    assert emulator_command("/sdk/emulator/emulator", AVD, 5556) == [
        "/sdk/emulator/emulator", "-avd", AVD, "-no-window", "-no-audio", "-no-boot-anim", "-read-only",
        "-ports", "5556,5557", "-no-snapshot"]
    assert emulator_command("emulator", AVD, 5554, snapshot="clean", extra_args=["-gpu", "swiftshader_indirect"])[-4:] \
        == ["-snapshot", "clean", "-gpu", "swiftshader_indirect"]
    with pytest.raises(ValueError, match="bad snapshot name"):
        emulator_command("emulator", AVD, 5554, snapshot="a b")


def test_find_port_pair_skips_taken_and_busy_ports():
    console, adb = find_port_pair(20000, 20100)
    assert console % 2 == 0 and adb == console + 1
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", adb))
        busy.listen()
        later = find_port_pair(console, 20100)
        assert later[0] > console and later[0] % 2 == 0
    assert find_port_pair(console, 20100, taken=[console])[0] > console
    with pytest.raises(EmulatorError, match="no free emulator port pair"):
        find_port_pair(20001, 20001, taken=[20002])


def test_pool_arguments_are_checked():
    with pytest.raises(ValueError, match="at least one"):
        EmulatorPool(AVD, 0, start=False)
    with pytest.raises(ValueError, match="bad AVD name"):
        EmulatorPool("my avd", start=False)
    with pytest.raises(ValueError, match="-grpc"):
        EmulatorPool(AVD, extra_args=["-grpc", "8554"], start=False)
    with pytest.raises(EmulatorError, match="emulator binary not found"):
        EmulatorPool(AVD, emulator_path="/nonexistent/emulator")



def test_listening_sessions_reads_past_a_file_that_closes_during_the_scan(tmp_path):
    """A booting emulator opens and closes files while the pool reads its /proc fds: an fd gone before its readlink
    must not hide the listening socket (that made the pool take its own emulator for another's, stop 33's CI)."""
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    listen = "   0: 0100007F:15F5 00000000:0000 0A 00000000:00000000 00:00000000 00000000  0  0 4242 1 0 100 0 0 10 0\n"
    (proc / "net" / "tcp").write_text(header + listen)  # 127.0.0.1:5621 listening, socket inode 4242
    fds = proc / "777" / "fd"
    fds.mkdir(parents=True)
    (proc / "777" / "stat").write_text("777 (python3) S 1 777 777 0 -1 4194560 0 0 0 0\n")
    (fds / "3").write_text("")  # a plain file: its readlink fails, as for an fd closed after the listing
    (fds / "4").symlink_to("socket:[4242]")
    assert listening_sessions(5621, proc=str(proc)) == {777}
    assert listening_sessions(5623, proc=str(proc)) == set()
    (proc / "777" / "cmdline").write_bytes(b"emulator\0-avd\0Pixel\0-ports\x005620,5621\0")
    assert port_holders(5621, proc=str(proc)) == "pid 777 (emulator -avd Pixel -ports 5620,5621)"  # the pool's errors
    assert port_holders(5623, proc=str(proc)) == "nothing listening now"
    (fds / "4").unlink()  # the listener's process is not visible: unknown (None), not "nobody"
    assert listening_sessions(5621, proc=str(proc)) == {None}
    assert port_holders(5621, proc=str(proc)) == "a process this user cannot see"


def make_pool(host_adb, tmp_path, size=1, env=None, start=True, **kwargs) -> EmulatorPool:
    token = str(host_adb.home / ".emulator_console_auth_token")
    fake_env = {"FAKE_EMULATOR_PYTHON": sys.executable, "HOME": str(host_adb.home),
                "FAKE_EMULATOR_STATE_DIR": str(tmp_path / "fired"), "FAKE_EMULATOR_HOME": str(tmp_path / "avd"),
                # a fault fires once per test: when a relaunch finds its ports taken (by another worker's process) the
                # pool moves to the next pair, as designed, and that emulator must not crash or hang again
                "FAKE_EMULATOR_FAULT_ONCE": "dir", **(env or {})}
    # console ports from 5620: the distributed tests' emulators (other pytest-xdist workers) start at 5554, and a port
    # another worker's emulator holds makes the pool move on (what these checks would then see is that, not theirs)
    options = {"emulator_path": FAKE_EMULATOR, "adb_port": host_adb.server_port, "env": fake_env, "base_port": 5620,
               "boot_timeout": 20.0, "grace_period": 2.0, "log_dir": tmp_path / "logs",
               "device_kwargs": {"timeout": 2.0, "console_token_path": token, "recover_timeout": 30.0}}
    options.update(kwargs)
    return EmulatorPool(AVD, size, start=start, **options)


def test_pool_boots_lends_and_shuts_down_cleanly(host_adb, tmp_path):
    with make_pool(host_adb, tmp_path, size=2) as pool:
        serials = [s.serial for s in pool.slots]
        assert all(s.startswith("emulator-") for s in serials) and len(set(serials)) == 2
        listed = host_adb.devices()
        assert all(listed.get(s) == "device" for s in serials)
        first = pool.acquire()
        second = pool.acquire()
        assert {first.serial, second.serial} == set(serials)
        assert first.shell("settings get global window_animation_scale").strip() == "0"
        assert first.supports_snapshots and first.console.port == pool.slots[0].console_port
        with pytest.raises(EmulatorError, match="no free emulator"):
            pool.acquire(timeout=0.2)
        pool.release(first)
        with pool.device(timeout=1.0) as again:
            assert again is first and again.health()
        pool.release(second)
        assert pool.health_check() == dict.fromkeys(serials, True)
        processes = [s.process for s in pool.slots]
    assert [p.returncode for p in processes] == [0, 0]  # they exited through the console "kill"
    assert "killed through the console" in pool.slots[0].log_path.read_text()
    with pytest.raises(EmulatorError, match="closed"):
        pool.acquire(timeout=0.1)


def test_crashed_emulator_is_reported_and_relaunched_by_recover(host_adb, tmp_path):
    with make_pool(host_adb, tmp_path, env={"FAKE_EMULATOR_CRASH_ON": "input tap"}) as pool:
        device = pool.acquire()
        old_pid = pool.slots[0].process.pid
        with pytest.raises(DeviceCrashed, match="emulator process is gone"):
            device.execute(Click(10, 10))
        assert pool.slots[0].process.returncode == 139
        device.recover()
        assert pool.slots[0].restarts == 1 and pool.slots[0].process.pid != old_pid
        device.execute(Click(10, 10))  # the fault fired once; the relaunched emulator is healthy
        assert device.health()


def test_hung_emulator_times_out_and_health_check_restarts_it(host_adb, tmp_path):
    token = str(host_adb.home / ".emulator_console_auth_token")
    with make_pool(host_adb, tmp_path, env={"FAKE_EMULATOR_HANG_ON": "input swipe"},
                   device_kwargs={"timeout": 1.0, "console_token_path": token}) as pool:
        device = pool.acquire()
        with pytest.raises(DeviceTimeout):
            device.shell("input swipe 1 2 3 4 100")
        pool.release(device)
        report = pool.health_check()
        assert report == {pool.slots[0].serial: False} and pool.slots[0].restarts == 1
        assert device.health()


def test_env_on_a_pool_device_recovers_from_an_emulator_crash_mid_episode(host_adb, tmp_path):
    with make_pool(host_adb, tmp_path, env={"FAKE_EMULATOR_CRASH_ON": "input tap 540 1234"}) as pool:
        device = pool.acquire()
        env = AndroidEnv(suite="android_world", task="SystemWifiTurnOff", device=device)
        env.reset(seed=3)
        _, _, terminated, truncated, info = env.step(Click(540, 1234))
        assert truncated and not terminated and info["error"].startswith("DeviceCrashed")
        _, info = env.reset(seed=3)  # recover() relaunches the emulator; the clean snapshot is reloaded
        assert pool.slots[0].restarts == 1 and "wifi" in info["goal"].lower()
        for _ in range(10):
            _, reward, terminated, truncated, info = env.step(env.expert_action())
            if terminated or truncated:
                break
        assert terminated and reward == 1.0
        env.close()  # closes the borrowed driver; the pool lends it out again
        pool.release(device)
        assert pool.acquire(timeout=1.0).health()


def test_boot_failures_are_reported_with_the_emulator_log(host_adb, tmp_path):
    with pytest.raises(EmulatorError, match="(?s)exited with status 1.*fake boot failure"):
        make_pool(host_adb, tmp_path, env={"FAKE_EMULATOR_FAIL_BOOT": "exit"})
    # two launches: a port another process takes while the hung emulator (which never binds) boots makes the pool
    # relaunch on the next pair, which hangs the same way. (The CI runs that met one were another xdist worker's
    # emulator pool from this module: the "ports" group did not hold under pytest 9, tests/test_xdist_groups.py)
    pool = make_pool(host_adb, tmp_path / "hang", env={"FAKE_EMULATOR_FAIL_BOOT": "hang"}, start=False,
                     boot_timeout=1.5, launch_attempts=2)
    try:
        with pytest.raises(EmulatorError, match="not in adb as 'device' after 1.5 s"):
            pool.start()
        assert pool.slots[0].process.returncode is not None  # nothing left running
    finally:
        pool.close()  # a failed check must not leave the hung emulator behind for the next test


def test_another_emulator_that_takes_the_pools_port_is_not_lent_as_its_own(host_adb, tmp_path, monkeypatch):
    """Between the pool's free-port check and its emulator binding the port, another emulator (another pool, test
    worker or user, registered with this adb server as adb's port scan would) takes it: the pool must not take
    that 'emulator-C' for its own, and boots its emulator on the next free pair instead."""
    from android_gym.adbd import SimAdbd
    from android_gym.sim import SimPhone

    # three launches: the racer costs one; a clean-clone CI try once found the next pair's adb port (5623) taken
    # as well, by something outside this test, between the pool's free-port check and the relaunch's bind
    pool = make_pool(host_adb, tmp_path, start=False, launch_attempts=3)
    racers = []
    launch = pool._launch

    def launch_then_lose_the_port(slot):
        launch(slot)
        if not racers:  # the other emulator comes up first, once
            racers.append(SimAdbd(SimPhone(), port=slot.adb_port, console_port=0,
                                  adb_server_port=host_adb.server_port, auth_token_path=host_adb.token_path).start())

    monkeypatch.setattr(pool, "_launch", launch_then_lose_the_port)
    try:
        pool.start()
        stolen = racers[0].port
        assert pool.slots[0].adb_port != stolen and pool.slots[0].restarts == 0
        device = pool.acquire()
        device.shell("settings put global airplane_mode_on 1")
        assert racers[0].phone.settings_get("global", "airplane_mode_on") != "1"  # the racer's phone untouched
        assert device.shell("settings get global airplane_mode_on").strip() == "1"
        pool.release(device)
    finally:
        pool.close()
        for racer in racers:
            racer.stop()


def test_close_escalates_to_sigkill_when_sigterm_is_ignored(host_adb, tmp_path):
    pool = make_pool(host_adb, tmp_path, env={"FAKE_EMULATOR_FAIL_BOOT": "hang", "FAKE_EMULATOR_IGNORE_SIGTERM": "1"},
                     start=False, boot_timeout=1.0, launch_attempts=1, grace_period=0.5)
    with pytest.raises(EmulatorError):
        pool.start()
    assert pool.slots[0].process.returncode == -signal.SIGKILL
