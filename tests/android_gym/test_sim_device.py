"""SimDevice: the Device protocol, snapshots, the latency model and fault injection."""

from __future__ import annotations

import pytest

from android_gym.actions import Click, Finished, LongPress, OpenApp, PressBack, PressHome, Scroll, Type, Wait
from android_gym.device import Device, DeviceCrashed, DeviceDisconnected, DeviceTimeout
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.sim.faults import FaultPlan
from android_gym.sim.latency import PRESETS, LatencyModel


class SleepRecorder:
    """A stand-in for time.sleep that records the requested delays."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def test_sim_device_is_a_device_and_observes():
    dev = SimDevice()
    assert isinstance(dev, Device)
    assert dev.serial.startswith("sim-")
    assert dev.screen_size == (1080, 2400)
    screen = dev.observe()
    assert screen.xml.startswith("<?xml") and screen.screenshot is None
    assert screen.package == "com.google.android.apps.nexuslauncher"
    assert screen.activity == "com.google.android.apps.nexuslauncher/.NexusLauncherActivity"
    shot = dev.observe(screenshot=True).screenshot
    assert shot.shape == (2400, 1080, 3)


def test_execute_every_action_kind():
    dev = SimDevice()
    dev.execute(OpenApp("Settings"))
    assert dev.observe().package == "com.android.settings"
    dev.execute(Scroll("down"))
    dev.execute(Scroll("up"))
    dev.execute(Click(540, 660))  # "Search settings" (below the avatar and the title, as on the emulator)
    dev.execute(Type("dark", submit=True))
    assert dev.phone.focused_field().text == "dark"
    dev.execute(LongPress(540, 160))
    dev.execute(PressBack())
    dev.execute(Wait())
    dev.execute(Finished("done"))
    dev.execute(PressHome())
    assert dev.observe().package == "com.google.android.apps.nexuslauncher"
    with pytest.raises(ValueError, match="unknown app"):
        dev.execute(OpenApp("No Such App Anywhere"))


def test_dragging_settings_search_results_hides_the_keyboard():
    # the real SystemBrightnessMaxVerify run: Gboard is gone once AndroidWorld scrolls the results; Back then
    # leaves the search page at once
    dev = SimDevice()
    dev.execute(OpenApp("Settings"))
    dev.execute(Click(540, 660))  # "Search settings"
    dev.execute(Type("brightness", submit=True))
    phone = dev.phone
    assert phone.keyboard_shown
    rows = [e for e in phone.frame.entries if e.view.text == "Brightness level"]
    assert rows and rows[0].view.resource_id == "android:id/title"
    results = next(e for e in phone.frame.entries if e.view.scroll_key == "search:results")
    x1, y1, x2, y2 = results.bounds
    phone.swipe((x1 + x2) // 2, (y1 + y2) // 2, (x1 + x2) // 2, y1, 300)
    assert not phone.keyboard_shown and phone.focus == "settings_search"
    dev.execute(PressBack())
    assert phone.apps["com.android.settings"].page == "main"


def test_snapshot_round_trip_restores_everything():
    dev = SimDevice()
    phone = dev.phone
    dev.execute(OpenApp("Settings"))
    phone.shell("settings put global wifi_on 0")
    phone.shell("echo keep > /sdcard/keep.txt")
    dev.snapshot_save("s1")
    xml_before, clock_before = phone.dump(), phone.now()
    phone.shell("settings put global wifi_on 1")
    phone.shell("rm /sdcard/keep.txt")
    dev.execute(Click(540, 600))
    dev.execute(PressHome())
    assert phone.dump() != xml_before
    dev.snapshot_load("s1")
    assert phone.dump() == xml_before and phone.now() == clock_before
    assert phone.shell("cat /sdcard/keep.txt") == "keep\n"
    assert phone.shell("settings get global wifi_on").strip() == "0"
    assert dev.snapshot_list() == ["s1"]
    dev.snapshot_delete("s1")
    with pytest.raises(KeyError, match="no snapshot named 's1'"):
        dev.snapshot_load("s1")


def test_snapshots_are_independent_copies():
    phone = SimPhone()
    phone.snapshot_save("a")
    phone.settings_put("global", "bluetooth_on", "1")
    phone.snapshot_save("b")
    phone.snapshot_load("a")
    assert phone.settings_get("global", "bluetooth_on") == "0"
    phone.snapshot_load("b")
    assert phone.settings_get("global", "bluetooth_on") == "1"


def test_emulator_latency_preset_sleeps_per_operation():
    rec = SleepRecorder()
    dev = SimDevice(latency="emulator", sleep=rec)
    dev.observe()
    dev.execute(Click(10, 1000))
    dev.execute(OpenApp("Settings"))
    dev.observe(screenshot=True)
    e = PRESETS["emulator"]
    assert rec.calls == [e["dump"], e["tap"], e["launch"], e["dump"], e["screenshot"]]
    assert dev.latency.total == pytest.approx(sum(rec.calls))


def test_latency_time_scale_and_zero_default():
    rec = SleepRecorder()
    dev = SimDevice(latency=LatencyModel.preset("emulator", time_scale=0.5, sleep=rec), sleep=rec)
    dev.shell("input keyevent 4")
    assert rec.calls == [PRESETS["emulator"]["keyevent"] * 0.5]
    rec2 = SleepRecorder()
    dev2 = SimDevice(sleep=rec2)
    dev2.observe()
    dev2.execute(Click(1, 1000))
    assert rec2.calls == []
    with pytest.raises(ValueError, match="unknown latency preset"):
        LatencyModel.preset("warp")


def _fault_trace(seed: int) -> list[tuple[int, str, str]]:
    dev = SimDevice(faults=FaultPlan(rates={"slow": 0.2, "crash": 0.05}, seed=seed), sleep=SleepRecorder())
    for _ in range(60):
        try:
            dev.observe()
        except DeviceCrashed:
            dev.reboot()
    return dev.faults.fired


def test_faults_are_deterministic_for_a_seed():
    assert _fault_trace(3) == _fault_trace(3)
    assert _fault_trace(3) != _fault_trace(4)
    assert {k for _, _, k in _fault_trace(3)} <= {"slow", "crash"}


def test_crash_stays_dead_until_reboot():
    dev = SimDevice(faults=[(2, "crash")], sleep=SleepRecorder())
    dev.observe()
    with pytest.raises(DeviceCrashed):
        dev.observe()
    assert not dev.health()
    with pytest.raises(DeviceCrashed):
        dev.shell("echo hi")
    dev.reboot()
    assert dev.health() and dev.shell("echo hi") == "hi\n"


def test_hang_waits_the_callers_timeout_then_raises():
    rec = SleepRecorder()
    dev = SimDevice(faults=[(1, "hang")], sleep=rec, timeout=12.0)
    with pytest.raises(DeviceTimeout):
        dev.shell("echo hi", timeout=5.0)
    assert rec.calls == [5.0]
    with pytest.raises(DeviceTimeout):
        dev.observe()
    assert rec.calls == [5.0, 12.0]
    dev.reboot()
    assert dev.observe().xml


def test_disconnect_until_reconnect_and_slow_adds_delay():
    rec = SleepRecorder()
    dev = SimDevice(faults=[(1, "disconnect"), (2, "slow")], sleep=rec)
    with pytest.raises(DeviceDisconnected):
        dev.observe()
    with pytest.raises(DeviceDisconnected):
        dev.observe()
    dev.reconnect()
    dev.observe()  # call 2: slow
    assert rec.calls == [dev.faults.slow_seconds]
    dev.close()
    with pytest.raises(DeviceDisconnected):
        dev.observe()


def test_bad_fault_and_latency_specs_are_rejected():
    with pytest.raises(ValueError, match="unknown fault kind"):
        FaultPlan(rates={"explode": 0.1})
    with pytest.raises(ValueError, match="sum to more than 1"):
        FaultPlan(rates={"crash": 0.6, "hang": 0.6})
    with pytest.raises(ValueError, match="unknown latency operation"):
        LatencyModel({"teleport": 1.0})
