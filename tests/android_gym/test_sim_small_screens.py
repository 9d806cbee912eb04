"""The simulated phone on small screens: dialogs fit above the soft keyboard, and every expert still succeeds.

Real 720x1600 phones run at about 320 dpi and 540x1200 ones at about 240 (both 360x800 dp); a few
denser, shorter screens (fewer dp) check that the layout degrades by scrolling rather than hiding buttons.
"""

from __future__ import annotations

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.sim.hierarchy import Entry
from android_gym.tasks.base import get_task_class, list_tasks
from android_gym.tasks.runner import run_expert

MARKOR = "net.gsantner.markor"
SETTINGS = "com.android.settings"
NOTE = "- Files and folders are not overwritten"  # the last line of Markor's New file dialog
CLOCK = "com.google.android.deskclock"
SIM_TASKS = list_tasks("sim")


def entry(phone: SimPhone, text: str = "", rid: str = "") -> Entry | None:
    """The topmost visible node showing ``text`` (text or content-desc) and/or whose id ends with ``rid``."""
    for e in reversed(phone.frame.entries):
        if (not text or text in (e.text, e.view.content_desc)) and (not rid or e.resource_id.endswith(rid)):
            return e
    return None


def tap(phone: SimPhone, text: str = "", rid: str = "") -> None:
    e = entry(phone, text, rid)
    assert e is not None, f"{text or rid!r} not on screen"
    x1, y1, x2, y2 = e.bounds
    phone.tap((x1 + x2) // 2, (y1 + y2) // 2)


def fully_shown(phone: SimPhone, e: Entry) -> bool:
    """The node is shown whole (not clipped) inside the dialog and above the keyboard."""
    frame = phone.frame
    assert frame.dialog_area is not None
    top, bottom = frame.dialog_area[1], frame.dialog_area[3]
    if frame.keyboard_area is not None:
        bottom = min(bottom, frame.keyboard_area[1])
    return e.bounds == e.view.bounds and top <= e.bounds[1] and e.bounds[3] <= bottom


def open_markor_new_file(phone: SimPhone) -> None:
    phone.launch(MARKOR)
    tap(phone, "Create a new file or folder")
    assert phone.keyboard_shown and entry(phone, rid="new_file_dialog__name").view.focused


def test_dialog_body_scrolls_so_its_buttons_stay_above_the_keyboard_on_a_short_screen():
    phone = SimPhone(width=540, height=1050, density=280)  # short enough that the body must scroll
    open_markor_new_file(phone)
    for label in ("OK", "CANCEL", "FOLDER"):
        button = entry(phone, label)
        assert button is not None and fully_shown(phone, button), label
    body = entry(phone, rid="new_file_dialog__name")
    assert fully_shown(phone, body)
    scroller = next(e for e in phone.frame.entries if e.window == "dialog" and e.view.scrollable and e.view.scroll_key)
    assert entry(phone, NOTE) is None  # the dialog's last note is below the fold...
    x1, y1, x2, y2 = scroller.bounds
    phone.swipe((x1 + x2) // 2, y2 - 5, (x1 + x2) // 2, y1 + 5, 300)
    assert entry(phone, NOTE) is not None  # ...and a swipe on the dialog's body brings it up
    phone.type_text("small")  # the name field kept the focus
    tap(phone, "OK")
    assert phone.frame.dialog_area is None and phone.app(MARKOR).build_dialog() is None


def test_a_dialog_that_fits_keeps_its_content_height_and_does_not_scroll():
    phone = SimPhone()  # 1080x2400 at 420 dpi
    open_markor_new_file(phone)
    assert not any(e.view.scrollable and e.view.scroll_key for e in phone.frame.entries if e.window == "dialog")
    assert entry(phone, NOTE) is not None and fully_shown(phone, entry(phone, "OK"))


def test_focusing_a_field_low_in_a_dialog_scrolls_it_into_view_once():
    phone = SimPhone(width=720, height=1600, density=420)
    phone.launch(SETTINGS)
    tap(phone, "Network & internet")
    phone.swipe(360, 1400, 360, 700, 300)  # under Android 13's tall page header, Private DNS is below the fold
    tap(phone, "Private DNS")
    tap(phone, "Private DNS provider hostname")  # focuses the hostname field: the keyboard comes up
    field = entry(phone, rid="private_dns_mode_provider_hostname")
    assert phone.keyboard_shown and field is not None and field.view.focused and fully_shown(phone, field)
    assert fully_shown(phone, entry(phone, "Save"))
    scroller = next(e for e in phone.frame.entries if e.window == "dialog" and e.view.scrollable and e.view.scroll_key)
    x1, y1, x2, y2 = scroller.bounds
    phone.swipe((x1 + x2) // 2, y1 + 5, (x1 + x2) // 2, y2 - 5, 300)  # back to the top, away from the field
    assert entry(phone, "Off") is not None  # not snapped back while the focus stays put


@pytest.mark.parametrize("size", [(1080, 2400, 420), (720, 1600, 360), (720, 1600, 420)])
def test_timer_keypad_shows_every_key_and_start_on_a_short_screen(size):
    width, height, density = size
    phone = SimPhone(width=width, height=height, density=density)
    phone.launch(CLOCK)
    tap(phone, rid="tab_menu_timer")
    for key in ("1", "0", "00"):
        tap(phone, rid=f"timer_setup_digit_{key}")
    start = entry(phone, "Start")
    tabs = entry(phone, rid="bottom_navigation")
    assert start is not None and tabs is not None and start.bounds == start.view.bounds
    assert start.bounds[3] <= tabs.bounds[1]
    if size == (1080, 2400, 420):  # a screen tall enough keeps the 88 dp keys
        key = entry(phone, rid="timer_setup_digit_5")
        assert key.bounds[3] - key.bounds[1] == round(88 * density / 160)


# Both sizes are 360x800 dp; 540x1200 only adds rounding at a lower density, so it runs with the slow tests.
@pytest.mark.parametrize("size", [pytest.param((720, 1600, 320), id="720x1600"),
                                  pytest.param((540, 1200, 240), id="540x1200", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", SIM_TASKS)
def test_expert_succeeds_on_small_screens(name, size):
    from android_gym.sim.web import web_engine_available

    if "chrome" in get_task_class(name).app_names and not web_engine_available():
        pytest.skip("chromium is not installed: the simulated Chrome runs pages in it (apt-get install chromium)")
    width, height, density = size
    for seed in (0, 1):
        task = get_task_class(name)(seed=seed)
        result = run_expert(task, SimDevice(SimPhone(width=width, height=height, density=density, seed=seed)))
        assert result.success == 1.0, (name, seed, size, [a.to_dict() for a in result.actions])
        assert result.steps <= task.max_steps
