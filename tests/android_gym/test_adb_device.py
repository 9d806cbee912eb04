"""AdbDevice against the simulated phone behind the simulated adbd, driven through Debian's real adb server.

Every integration test talks to a private adb server (its own port, its own HOME for the console
token), so nothing here touches an adb server or token of the machine.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import android_gym
from android_gym import AndroidEnv, Click, Finished, OpenApp, PressBack, Scroll, Swipe, Type, Wait
from android_gym.device import (
    DeviceCrashed,
    DeviceDisconnected,
    DeviceError,
    DeviceTimeout,
    action_to_commands,
    input_text_commands,
    quote_input_text,
    split_input_text,
)
from android_gym.drivers import AdbDevice, AppDataSnapshots, TextInputWarning, UiAutomator2Unavailable
from android_gym.drivers.adb import (
    action_commands,
    adb_server_request,
    extract_xml,
    kill_adb_server,
    parse_focus,
    parse_rotation,
    parse_wm_size,
)
from android_gym.drivers.text_input import (
    ADB_KEYBOARD,
    UIAUTOMATOR2_KEYBOARD,
    detect_broadcast_ime,
    split_typeable,
    text_entry_commands,
)
from android_gym.sim import SimDevice, SimPhone
from android_gym.sim.faults import make_faults

ADB = "/usr/bin/adb"
MARKOR = "net.gsantner.markor"
HOSTILE = ("it's \"quoted\" ; touch /sdcard/pwned && echo $(id) `reboot` | cat > /sdcard/x "
           "%s 100% \\%s a\\ b %%s ${HOME} 'q' \\' end\nsecond line\twith tab &")
UNICODE = "héllo 😀 中文 ok"


# --- how Android's ``input text`` reads its argument (InputShellCommand.sendText) ----------------------
def android_input_text(arg: str) -> str:
    """The characters Android types for one ``input text`` argument: ``%s`` is a space, nothing else is special."""
    out: list[str] = []
    escape = False
    for ch in arg:
        if escape:
            escape = False
            if ch == "s":
                out[-1] = " "
                continue
        out.append(ch)
        if ch == "%":
            escape = True
    return "".join(out)


def sh_argument(quoted: str) -> str:
    """What the real ``sh`` hands ``input`` for a quoted argument (run by dash/sh, nothing else)."""
    proc = subprocess.run(["sh", "-c", f"printf '%s' {quoted}"], capture_output=True, check=True, timeout=10)
    return proc.stdout.decode()


# --- text quoting: pure, and through a real sh --------------------------------------------------
@pytest.mark.parametrize("text", [HOSTILE, "%s", "%%s", "a%", "%", "\\%", "\\ ", "100% sure", "x" * 1000, ""])
def test_input_text_commands_type_exactly_the_text_on_android(text):
    typed = ""
    for command in input_text_commands(text):
        assert command.startswith("input text '")
        typed += android_input_text(sh_argument(command[len("input text "):]))
    assert typed == text


def test_quoted_text_runs_nothing_in_a_real_shell(tmp_path):
    canary = tmp_path / "pwned"
    text = f"; touch {canary} && touch {canary}2 | touch {canary}3 $(touch {canary}4) `touch {canary}5`\ntouch {canary}6"
    for piece in split_input_text(text):
        arg = sh_argument(quote_input_text(piece))
        assert android_input_text(arg) == piece
    assert not list(tmp_path.iterdir())


def test_quote_refuses_a_literal_percent_s_and_split_cuts_it():
    with pytest.raises(ValueError, match="literal '%s'"):
        quote_input_text("50%sale")
    assert split_input_text("50%sale") == ["50%", "sale"]
    assert split_input_text("a\\%b\\ c") == ["a\\", "%b\\", " c"]
    assert [len(p) for p in split_input_text("y" * 900, max_chars=400)] == [400, 400, 100]


def test_sim_types_the_same_text_as_android_for_every_piece():
    phone = SimPhone()
    phone.launch(MARKOR)
    phone.apps[MARKOR].open_editor("/sdcard/Documents/quote.md")
    x1, y1, x2, y2 = next(e.bounds for e in phone.frame.entries if e.resource_id.endswith("highlighting_editor"))
    device = SimDevice(phone)
    device.execute(Type(HOSTILE, x=(x1 + x2) // 2, y=(y1 + y2) // 2))
    assert phone.apps[MARKOR].editor["text"] == HOSTILE
    assert not phone.files.exists("/sdcard/pwned") and not phone.files.exists("/sdcard/x")


# --- text that input text cannot type -----------------------------------------------------------
def test_unicode_without_ime_warns_with_the_dropped_characters_and_types_the_rest():
    with pytest.warns(TextInputWarning, match=r"'😀' \(U\+1F600\).*'中'") as record:
        commands = text_entry_commands(UNICODE)
    assert "typing 'hllo   ok'" in str(record[0].message)
    assert commands == input_text_commands("hllo   ok")
    assert split_typeable(UNICODE) == ("hllo   ok", "é😀中文")


def test_unicode_with_an_ime_goes_through_a_base64_broadcast_one_line_at_a_time():
    import base64

    commands = text_entry_commands("中文\n😀 x", ADB_KEYBOARD)
    assert commands[1] == "input keyevent 66"
    decoded = []
    for command in (commands[0], commands[2]):
        head, _, payload = command.rpartition(" ")
        assert head == "am broadcast -a ADB_INPUT_B64 --es msg"
        assert set(payload) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
        decoded.append(base64.b64decode(payload).decode())
    assert decoded == ["中文", "😀 x"]
    assert UIAUTOMATOR2_KEYBOARD.command("é").startswith("am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text ")


def test_detect_broadcast_ime_reads_enabled_then_installed():
    outputs = {"ime list -s": "com.google.android.inputmethod.latin/.LatinIME\n",
               "pm list packages": "package:com.android.adbkeyboard\npackage:android\n"}
    assert detect_broadcast_ime(outputs.__getitem__) == (ADB_KEYBOARD, False)
    outputs["ime list -s"] += "com.github.uiautomator/.AdbKeyboard\n"
    assert detect_broadcast_ime(outputs.__getitem__) == (UIAUTOMATOR2_KEYBOARD, True)
    assert detect_broadcast_ime(lambda cmd: "/system/bin/sh: ime: inaccessible or not found\n") == (None, False)


def test_adb_commands_equal_the_shared_translation_for_ascii_actions():
    size = (1080, 2400)
    actions = [Click(10, 20), Swipe(1, 2, 3, 4), Scroll("down"), PressBack(), Type(HOSTILE, x=5, y=6, submit=True),
               Wait(), Finished()]
    for action in actions:
        assert action_commands(action, size) == action_to_commands(action, size)
    with pytest.warns(TextInputWarning):
        mixed = action_commands(Type("a😀b", x=1, y=2, submit=True), size)
    assert mixed == ["input tap 1 2", "input text 'ab'", "input keyevent 66"]


# --- parsers for device output ------------------------------------------------------------------
def test_parsers_for_wm_size_rotation_focus_and_dump():
    assert parse_wm_size("Physical size: 1080x2400\n") == (1080, 2400)
    assert parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n") == (720, 1600)
    with pytest.raises(DeviceError, match="screen size"):
        parse_wm_size("wm: not found")
    assert parse_rotation("  mCurrentRotation=ROTATION_90\n") == 1
    assert parse_rotation("mDisplayRotation mRotation=3 ") == 3
    assert parse_rotation("<?xml version='1.0' ?><hierarchy rotation=\"2\"><node/>") == 2
    assert parse_rotation("nothing here") is None
    focus = ("  mCurrentFocus=Window{4f3c1a2 u0 com.android.settings/com.android.settings.Settings}\n"
             "  mFocusedApp=ActivityRecord{9e1b7c4 u0 com.android.settings/.Settings t12}\n")
    assert parse_focus(focus) == "com.android.settings/.Settings"
    assert parse_focus(focus.splitlines()[0]) == "com.android.settings/com.android.settings.Settings"
    dump = "UI hierchary dumped to: /sdcard/window_dump.xml\n<?xml version='1.0' ?><hierarchy rotation=\"0\"></hierarchy>\n"
    assert extract_xml(dump) == "<?xml version='1.0' ?><hierarchy rotation=\"0\"></hierarchy>"
    assert extract_xml("ERROR: could not get idle state.") is None


# --- app-data snapshots, with a real sh and real cp on a stand-in /data/data -------------------------
def test_app_data_snapshot_scripts_save_and_restore_app_data(tmp_path):
    data_root = tmp_path / "data" / "data"
    app = data_root / "com.example.app"
    (app / "databases").mkdir(parents=True)
    (app / "databases" / "notes.db").write_text("v1")
    (app / "shared_prefs.xml").write_text("<map/>")

    def run(script: str, timeout: float | None) -> str:
        proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=timeout)
        return proc.stdout + proc.stderr

    snaps = AppDataSnapshots(run, store=str(tmp_path / "store"), data_root=str(data_root))
    snaps.save("clean", ["com.example.app"])
    (app / "databases" / "notes.db").write_text("v2 changed by the agent")
    (app / "cache.tmp").write_text("junk")
    snaps.load("clean")
    assert (app / "databases" / "notes.db").read_text() == "v1"
    assert not (app / "cache.tmp").exists() and (app / "shared_prefs.xml").exists()
    assert snaps.packages("clean") == ["com.example.app"] and snaps.list() == ["clean"]
    with pytest.raises(DeviceError, match="no data directory"):
        snaps.save("other", ["com.example.missing"])
    with pytest.raises(ValueError, match="bad package name"):
        snaps.save_script("x", ["com.example.app; rm -rf /"])
    with pytest.raises(ValueError, match="bad snapshot name"):
        snaps.save_script("x y", ["com.example.app"])


# --- the simulated adbd behind a private adb server ---------------------------------------------

def start_adbd(host_adb, phone: SimPhone | None = None, emulator: bool = True, **adbd_kwargs):
    from android_gym.adbd import SimAdbd

    console = 0 if emulator else None
    adbd = SimAdbd(SimDevice(phone or SimPhone()), port=0, console_port=console, adb_server_port=host_adb.server_port,
                   auth_token_path=host_adb.token_path, announce=emulator, **adbd_kwargs)
    return adbd.start()


def connect(host_adb, adbd, **kwargs) -> AdbDevice:
    kwargs.setdefault("timeout", 3.0)
    return AdbDevice(adbd.serial, adb_port=host_adb.server_port, console_token_path=host_adb.token_path, **kwargs)


@pytest.fixture()
def phone_and_device(host_adb):
    phone = SimPhone()
    adbd = start_adbd(host_adb, phone)
    device = connect(host_adb, adbd)
    yield phone, device, adbd
    device.close()
    adbd.stop()


def test_shell_status_features_and_screen(phone_and_device):
    phone, device, _ = phone_and_device
    assert "shell_v2" in device.features
    assert device.shell("echo hi; false") == "hi\n" and device.last_status == 1
    assert device.shell("settings get global wifi_on") == phone.shell("settings get global wifi_on")
    assert device.screen_size == (1080, 2400) and device.rotation == 0
    assert device.health()


def test_observe_matches_the_phone_and_screenshot_is_its_pixels(phone_and_device):
    phone, device, _ = phone_and_device
    phone.launch("com.android.settings")
    screen = device.observe(screenshot=True)
    assert screen.xml == phone.dump()
    assert screen.activity == phone.current_activity() and screen.package == "com.android.settings"
    assert screen.screenshot.shape == (2400, 1080, 3) and screen.screenshot.dtype == np.uint8
    assert np.array_equal(screen.screenshot, phone.screenshot())
    assert screen.extras["hierarchy_source"] == "uiautomator"
    assert device.wait_for_idle(polls=2, interval=0.01)


def test_uiautomator2_auto_is_detected_off_once_without_cost(phone_and_device):
    _, device, _ = phone_and_device
    start = time.monotonic()
    device.dump_hierarchy()
    device.dump_hierarchy()
    assert time.monotonic() - start < 2.0
    assert "app_process" in device.uiautomator2_reason


def test_uiautomator2_required_but_impossible_fails_with_its_reason(host_adb):
    adbd = start_adbd(host_adb)
    try:
        device = connect(host_adb, adbd, use_uiautomator2=True)
        with pytest.raises(UiAutomator2Unavailable, match="uiautomator2.connect failed"):
            device.observe()
        assert device.observe().xml.startswith("<?xml")  # later calls use uiautomator dump
    finally:
        adbd.stop()


def test_hostile_text_is_typed_literally_and_runs_nothing(phone_and_device):
    phone, device, _ = phone_and_device
    phone.launch(MARKOR)
    phone.apps[MARKOR].open_editor("/sdcard/Documents/hostile.md")
    before = sorted(phone.files.listdir("/sdcard"))
    x1, y1, x2, y2 = next(e.bounds for e in phone.frame.entries if e.resource_id.endswith("highlighting_editor"))
    device.execute(Type(HOSTILE, x=(x1 + x2) // 2, y=(y1 + y2) // 2))
    assert phone.apps[MARKOR].editor["text"] == HOSTILE
    assert sorted(phone.files.listdir("/sdcard")) == before
    assert not phone.files.exists("/sdcard/pwned") and not phone.files.exists("/sdcard/x")
    with pytest.warns(TextInputWarning, match="U\\+1F600"):
        device.type_text(UNICODE)
    assert phone.apps[MARKOR].editor["text"] == HOSTILE + "hllo   ok"


def test_actions_open_app_and_wait(phone_and_device):
    phone, device, _ = phone_and_device
    device.execute(OpenApp("Settings"))
    assert phone.foreground == "com.android.settings"
    clock = phone.clock_ms
    device.execute(Wait())
    assert phone.clock_ms - clock >= 1000  # ``sleep 1`` on the device lets its time pass
    device.execute(PressBack())
    assert phone.foreground != "com.android.settings"
    with pytest.raises(ValueError, match="unknown app"):
        device.execute(OpenApp("No Such App"))
    with pytest.raises(ValueError, match="cannot open app 'chrome'"):
        device.open_app("chrome")  # a known app that is not installed on this phone


def test_a_dead_system_service_in_command_output_is_a_crash(phone_and_device):
    _, device, _ = phone_and_device
    with pytest.raises(DeviceCrashed, match="system server looks dead"):
        device.run_commands(["dumpsys input"])  # the sim's answer for a missing service: "Can't find service: input"


def test_console_snapshots_save_and_load_the_whole_phone(phone_and_device):
    phone, device, _ = phone_and_device
    assert device.supports_snapshots
    device.snapshot_save("before")
    device.shell("settings put global wifi_on 0")
    device.execute(OpenApp("Clock"))
    device.snapshot_load("before")
    assert phone.settings_get("global", "wifi_on") == "1" and phone.foreground != "com.google.android.deskclock"
    assert "before" in device.snapshot_list()
    device.snapshot_delete("before")
    assert "before" not in device.snapshot_list()
    with pytest.raises(ValueError, match="bad snapshot name"):
        device.snapshot_save("two words")


def test_app_data_snapshots_need_root_and_say_so(phone_and_device):
    _, device, _ = phone_and_device
    with pytest.raises(DeviceError, match="need root"):
        device.snapshot_save("apps", packages=[MARKOR])


def test_devices_without_shell_v2_use_legacy_shell_and_exec(host_adb):
    phone = SimPhone()
    adbd = start_adbd(host_adb, phone, features=("cmd", "stat_v2"))
    try:
        device = connect(host_adb, adbd)
        assert "shell_v2" not in device.features
        assert device.shell("echo hi; false") == "hi\n" and device.last_status is None
        assert np.array_equal(device.screenshot(), phone.screenshot())
        assert device.observe().xml == phone.dump()
    finally:
        adbd.stop()


def test_tcp_serial_without_console_has_no_snapshots(host_adb):
    adbd = start_adbd(host_adb, emulator=False)
    try:
        device = connect(host_adb, adbd)
        assert device.serial == f"127.0.0.1:{adbd.port}" and device.health()
        assert not device.supports_snapshots
        with pytest.raises(DeviceError, match="emulator console"):
            device.snapshot_save("x")
    finally:
        adbd.stop()


def test_missing_device_and_bad_serial_fail_fast(host_adb):
    start = time.monotonic()
    with pytest.raises(DeviceDisconnected, match="does not list 'emulator-5998'"):
        AdbDevice("emulator-5998", adb_port=host_adb.server_port)
    assert time.monotonic() - start < 5.0
    with pytest.raises(ValueError, match="bad adb serial"):
        AdbDevice("a b; rm", adb_port=host_adb.server_port)


def test_an_emulator_that_announces_itself_moments_after_the_device_is_opened_is_waited_for(host_adb):
    """A running adb server lists a just-started emulator only after connecting back to it: opening the device at
    that moment must wait for the listing, not call the serial absent (CI once did, with the server busy)."""
    from android_gym.adbd import SimAdbd

    adbd = SimAdbd(SimDevice(SimPhone()), port=0, console_port=0, adb_server_port=host_adb.server_port,
                   auth_token_path=host_adb.token_path, announce=False).start()
    serial = f"emulator-{adbd.console_port}"
    timer = threading.Timer(1.0, adbd.announce)
    try:
        timer.start()
        device = AdbDevice(serial, adb_port=host_adb.server_port, console_token_path=host_adb.token_path, timeout=10.0)
        assert device.serial == serial and device.health()
        device.close()
    finally:
        timer.cancel()
        adbd.stop()


def test_a_local_adb_server_that_is_not_running_gets_started(host_adb):
    from android_gym.adbd import free_port

    port = free_port()
    try:
        with pytest.raises(DeviceDisconnected, match="does not list 'emulator-5996'"):
            AdbDevice("emulator-5996", adb_port=port, timeout=1.0)
        assert int(adb_server_request("host:version", port=port), 16) >= 39  # it runs now
    finally:
        kill_adb_server(port)


def test_hung_device_times_out_and_recovers_through_the_console(host_adb):
    phone = SimPhone()
    adbd = start_adbd(host_adb, phone)
    device = connect(host_adb, adbd, timeout=1.0, recover_timeout=20.0)
    try:
        device.snapshot_save("good")
        adbd.device.faults = make_faults([(1, "hang")])
        start = time.monotonic()
        with pytest.raises(DeviceTimeout):
            device.shell("echo hi")
        assert time.monotonic() - start < 2.5
        assert not device.health(timeout=0.5)
        device.recover()
        assert device.health() and device.shell("echo back") == "back\n"
    finally:
        adbd.stop()


def test_crashed_device_is_reported_and_recovered(host_adb):
    adbd = start_adbd(host_adb)
    device = connect(host_adb, adbd, timeout=2.0, recover_timeout=20.0)
    try:
        device.snapshot_save("good")
        adbd.device.faults = make_faults([(1, "crash")])
        with pytest.raises((DeviceDisconnected, DeviceCrashed)):
            device.execute(Click(100, 100))
        with pytest.raises(DeviceError):
            device.shell("echo still dead?")
        device.recover()
        assert device.health()
    finally:
        adbd.stop()


# --- the env on a device behind adb -----------------------------------------------------------------
EQUIVALENCE_TASKS = ["MarkorCreateNote", "ContactsAddContact", "SystemWifiTurnOff"]


@pytest.mark.parametrize("task", EQUIVALENCE_TASKS)
def test_same_episode_same_observations_and_reward_in_process_and_over_adb(host_adb, task):
    sim_env = AndroidEnv(suite="android_world", task=task)
    obs, _ = sim_env.reset(seed=7)
    expected, actions, done = [(obs["ui"], None, False)], [], False
    while not done:
        action = sim_env.expert_action()
        actions.append(action)
        obs, reward, terminated, truncated, _ = sim_env.step(action)
        done = terminated or truncated
        expected.append((obs["ui"], reward, terminated))
    sim_env.close()
    assert expected[-1][1] == 1.0

    # the sim behind adb stands in for AndroidWorld's emulator too (sim-adbd --android-world-emulator), as the
    # AndroidWorld suite marks an in-process SimDevice (its apps as that emulator shows them: Google Clock, the home
    # screen at the emulator's bounds); over adb the suite cannot tell a sim from the emulator
    served = SimPhone()
    served.android_world_emulator = True
    adbd = start_adbd(host_adb, served)
    try:
        env = AndroidEnv(suite="android_world", task=task, device=connect(host_adb, adbd))
        obs, _ = env.reset(seed=7)
        got = [(obs["ui"], None, False)]
        for action in actions:
            obs, reward, terminated, truncated, info = env.step(action)
            assert "error" not in info
            got.append((obs["ui"], reward, terminated))
        env.close()
    finally:
        adbd.stop()
    assert got == expected


def test_env_from_a_serial_string_recovers_from_a_crash_mid_episode(host_adb, monkeypatch, tmp_path):
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(host_adb.server_port))
    monkeypatch.setenv("HOME", str(tmp_path))  # console token for both sides
    from android_gym.adbd import SimAdbd

    adbd = SimAdbd(SimPhone(), port=0, console_port=0, announce=False).start()  # "adb connect" style serial
    try:
        env = gym.make("AndroidWorld-v0", task="SystemWifiTurnOff", device=f"127.0.0.1:{adbd.port}")
        device = env.unwrapped.device
        assert isinstance(device, AdbDevice) and device.console.port == adbd.console_port
        device.timeout, device.recover_timeout = 2.0, 20.0
        env.reset(seed=1)
        adbd.device.faults = make_faults([(1, "crash")])
        _, reward, terminated, truncated, info = env.step(Click(540, 1200))
        assert truncated and not terminated and info["error"].startswith(("DeviceDisconnected", "DeviceCrashed"))
        obs, info = env.reset(seed=1)
        assert "wifi" in info["goal"].lower() and obs["ui"]
        for _ in range(10):
            obs, reward, terminated, truncated, info = env.step(env.unwrapped.expert_action())
            if terminated or truncated:
                break
        assert terminated and reward == 1.0 and "error" not in info
        env.close()
    finally:
        adbd.stop()


def test_android_gym_registers_envs_that_take_adb_serials():
    assert "AndroidWorld-v0" in gym.registry and android_gym.AndroidEnv is AndroidEnv
    assert Path(__file__).with_name("fake_emulator").joinpath("emulator").is_file()
