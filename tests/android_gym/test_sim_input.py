"""Input semantics of the simulated phone: taps, scrolling, keyboard, text selection, back stack, launcher."""

from __future__ import annotations

import pytest

from android_gym.sim import LAUNCHER_PACKAGE, SimPhone

SETTINGS = "com.android.settings"


def center(phone: SimPhone, text: str) -> tuple[int, int]:
    for e in phone.frame.entries:
        if text in (e.text, e.view.content_desc):
            x1, y1, x2, y2 = e.bounds
            return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(f"{text!r} not on screen")


def visible(phone: SimPhone, text: str) -> bool:
    return any(text in (e.text, e.view.content_desc) for e in phone.frame.entries)


@pytest.fixture()
def phone() -> SimPhone:
    return SimPhone()


def test_launcher_home_icons_drawer_by_swipe_up_and_search_bar(phone):
    assert phone.foreground == LAUNCHER_PACKAGE and visible(phone, "Settings")
    phone.swipe(540, 1600, 540, 600, 300)
    labels = [e.text for e in phone.frame.entries if e.resource_id.endswith(":id/icon")]
    assert labels == sorted(labels, key=str.lower) and "Settings" in labels
    phone.home()
    phone.tap(*center(phone, "Google app"))  # the search bar opens the drawer (the home screen has no "Apps list")
    assert visible(phone, "Search your phone and more")
    phone.tap(*center(phone, "Search your phone and more"))
    phone.type_text("sett")
    assert [e.text for e in phone.frame.entries if e.resource_id.endswith(":id/icon")] == ["Settings"]
    phone.tap(*center(phone, "Settings"))
    assert phone.foreground == SETTINGS and not phone.keyboard_shown


def test_tap_navigates_and_back_pops_then_leaves_app(phone):
    phone.launch(SETTINGS)
    phone.tap(*center(phone, "Network & internet"))
    phone.tap(*center(phone, "Internet"))
    assert phone.current_activity().endswith("NetworkProviderSettingsActivity")
    phone.keyevent(4)
    assert visible(phone, "Airplane mode")
    phone.tap(*center(phone, "Navigate up"))
    assert visible(phone, "Search settings")
    phone.keyevent("KEYCODE_BACK")
    assert phone.foreground == LAUNCHER_PACKAGE


def test_scroll_long_list_reveals_items_and_clips_partial_rows(phone):
    phone.launch(SETTINGS)
    assert not visible(phone, "About emulated device")
    for _ in range(3):
        phone.swipe(540, 1900, 540, 700, 300)
    assert visible(phone, "About emulated device") and not visible(phone, "Network & internet")
    entries = phone.frame.entries
    at = next(i for i, e in enumerate(entries) if e.view.scroll_key == "main:list")
    lst = entries[at]
    inside = []
    for e in entries[at + 1:]:  # the list's descendants follow it in the dump, deeper than it
        if e.depth <= lst.depth:
            break
        inside.append(e)
    assert inside
    for e in inside:
        assert lst.bounds[1] <= e.bounds[1] and e.bounds[3] <= lst.bounds[3]
    for _ in range(5):
        phone.swipe(540, 700, 540, 1900, 300)
    assert visible(phone, "Network & internet")


def test_dock_search_bar_opens_the_search_panel_and_up_from_the_gesture_bar_goes_home(phone):
    """As on AndroidWorld's emulator: the dock's search bar opens the launcher's search panel (suggested apps, then
    the offline web suggestions, "Search null"); typing narrows the apps; a swipe up from the gesture bar is the
    system's home gesture, not the app drawer."""
    phone.tap(*center(phone, "Search"))
    assert visible(phone, "Search apps, web and more") and not phone.keyboard_shown
    assert [e.text for e in phone.frame.entries if e.text in ("Gmail", "YouTube", "Photos", "Clock")] == [
        "Gmail", "YouTube", "Photos", "Clock"]
    phone.tap(*center(phone, "Search apps, web and more"))
    phone.type_text("sett")
    assert visible(phone, "Clear search box") and visible(phone, "sett0") and not visible(phone, "Gmail")
    phone.tap(*center(phone, "Settings"))
    assert phone.foreground == SETTINGS
    phone.swipe(540, phone.height - 1, 540, 0, 500)
    assert phone.foreground == LAUNCHER_PACKAGE and phone.app(LAUNCHER_PACKAGE).page == "home"
    phone.swipe(540, phone.height - 1, 540, 0, 500)  # on the home screen it stays there
    assert phone.app(LAUNCHER_PACKAGE).page == "home" and not visible(phone, "Search your phone and more")


def test_switch_toggles_setting_and_no_bluetooth_icon_without_a_connected_device(phone):
    phone.launch(SETTINGS)
    phone.tap(*center(phone, "Connected devices"))
    phone.tap(*center(phone, "Bluetooth"))
    before = phone.dump()
    switch = next(e for e in phone.frame.entries if e.view.cls == "android.widget.Switch")
    x1, y1, x2, y2 = switch.bounds
    phone.tap((x1 + x2) // 2, (y1 + y2) // 2)
    assert phone.settings_get("global", "bluetooth_on") == "1"
    assert "Bluetooth on." not in phone.dump() and phone.dump() != before  # as on the emulator: no status icon
    assert next(e for e in phone.frame.entries if e.view.cls == "android.widget.Switch").view.checked


def test_seekbar_tap_sets_brightness_by_x(phone):
    phone.launch(SETTINGS)
    phone.swipe(540, 1900, 540, 1300, 300)  # Display sits just below the first screen, as on the emulator
    phone.tap(*center(phone, "Display"))
    phone.tap(*center(phone, "Brightness level"))  # System UI's brightness dialog, as on the emulator
    bar = next(e for e in phone.frame.entries if e.view.cls == "android.widget.SeekBar")
    assert bar.package == "com.android.systemui" and bar.text == "Display brightness" and not bar.view.clickable
    x1, y1, x2, y2 = bar.bounds
    phone.tap(x2 - 2, (y1 + y2) // 2)
    assert phone.settings_get("system", "screen_brightness") == "255"
    phone.tap(x1 + 1, (y1 + y2) // 2)
    assert phone.settings_get("system", "screen_brightness") == "1"
    phone.swipe(x1 + 1, (y1 + y2) // 2, (x1 + x2) // 2, (y1 + y2) // 2, 500)  # drag the thumb to the middle
    assert 120 <= int(phone.settings_get("system", "screen_brightness")) <= 135
    phone.tap(540, 1800)  # beside the slider: the dialog closes, the row shows the new level
    assert phone.shade == 0 and visible(phone, "50%") and phone.foreground == SETTINGS


def test_keyboard_appears_resizes_content_types_deletes_and_back_hides_it(phone):
    phone.launch(SETTINGS)
    full = phone.frame.app_area
    phone.tap(*center(phone, "Search settings"))
    assert phone.keyboard_shown
    assert phone.frame.app_area[3] < full[3]
    assert any(e.package == "com.google.android.inputmethod.latin" for e in phone.frame.entries)
    for key in ("Shift", "B", "l", "u", "e"):  # shift shows capitals for one letter
        phone.tap(*center(phone, key))
    assert phone.focused_field().text == "Blue"
    phone.tap(*center(phone, "Delete"))
    phone.tap(*center(phone, "Symbol keyboard"))  # Gboard's name for its ?123 key
    phone.tap(*center(phone, "7"))
    assert phone.focused_field().text == "Blu7"
    phone.keyevent(67)
    phone.keyevent(67)
    phone.type_text("uetooth")
    assert visible(phone, "Connected devices > Connection preferences")
    phone.back()
    assert not phone.keyboard_shown and phone.foreground == SETTINGS
    assert visible(phone, "Bluetooth")  # the search page is still there


def test_long_press_select_all_copy_paste_and_replace(phone):
    phone.launch(SETTINGS)
    phone.tap(*center(phone, "Search settings"))
    phone.type_text("display")
    phone.long_press(*center(phone, "display"))
    assert visible(phone, "Copy") and visible(phone, "Cut") and visible(phone, "Select all") is False
    phone.tap(*center(phone, "Copy"))
    assert phone.clipboard == "display"
    phone.long_press(*center(phone, "display"))
    phone.type_text("wifi")  # typing replaces the selection
    assert phone.focused_field().text == "wifi"
    phone.long_press(*center(phone, "wifi"))
    phone.tap(*center(phone, "Paste"))  # paste replaces the selection with the clipboard
    assert phone.focused_field().text == "display"
    phone.keyevent(67)
    phone.tap(*center(phone, "displa"))
    phone.long_press(*center(phone, "displa"))
    phone.keyevent(67)  # delete removes the selection
    assert phone.focused_field().text == ""


def test_long_press_via_input_swipe_duration(phone):
    phone.launch(SETTINGS)
    phone.tap(*center(phone, "Search settings"))
    phone.type_text("abc")
    x, y = center(phone, "abc")
    phone.shell(f"input swipe {x} {y} {x} {y} 1000")
    assert phone.text_toolbar and phone.selection


def test_enter_submits_or_hides_keyboard(phone):
    phone.launch(SETTINGS)
    phone.tap(*center(phone, "Search settings"))
    phone.type_text("x")
    phone.keyevent(66)
    assert phone.keyboard_shown  # Settings' search runs the query and keeps the keyboard up, as on the emulator
    assert phone.focused_field().text == "x"  # single-line field: Enter does not add a newline
    phone.back()
    assert not phone.keyboard_shown and phone.focused_field() is not None


def test_recents_overview_switches_apps(phone):
    phone.launch(SETTINGS)
    phone.swipe(540, 1900, 540, 1300, 300)  # Display sits just below the first screen, as on the emulator
    phone.tap(*center(phone, "Display"))
    phone.home()
    phone.keyevent("KEYCODE_APP_SWITCH")  # gesture navigation: no Overview button
    assert visible(phone, "Settings")
    phone.tap(*center(phone, "Settings"))
    assert phone.foreground == SETTINGS and visible(phone, "Brightness level")  # resumed, not restarted


def test_toast_shows_for_a_couple_of_inputs(phone):
    phone.toast("Saved")
    toast = [e for e in phone.frame.entries if e.view.cls == "android.widget.Toast"]
    assert toast and toast[0].text == "Saved"
    phone.keyevent(0)
    phone.keyevent(0)
    assert visible(phone, "Saved")
    phone.keyevent(0)
    assert not visible(phone, "Saved")


def test_clock_is_frozen_in_oct_2023_and_advances_per_input(phone):
    t0 = phone.now()
    assert (t0.year, t0.month, t0.day) == (2023, 10, 15)
    phone.tap(5, 1000)
    assert (phone.now() - t0).total_seconds() == 2
    assert SimPhone().now() == t0  # deterministic


def test_swipe_down_on_home_opens_the_shade_whose_quick_settings_set_wifi_and_brightness(phone):
    """The shade as the emulator lists it (tiles, Silent, footer, header, notifications); a second swipe down
    expands Quick Settings with the brightness slider; Back closes it."""
    phone.swipe(540, 800, 540, 1600, 300)
    assert phone.shade == 1 and all(e.package == "com.android.systemui" for e in phone.frame.entries)
    assert visible(phone, "Serial console enabled") and visible(phone, "Virtual SD card")
    phone.tap(*center(phone, "Internet,AndroidWifi"))
    assert phone.settings_get("global", "wifi_on") == "0" and visible(phone, "Internet")
    phone.swipe(540, 800, 540, 1600, 300)
    assert phone.shade == 2
    slider = next(e for e in phone.frame.entries if e.text == "Display brightness")
    x1, y1, _, y2 = slider.bounds
    phone.tap(x1 + 1, (y1 + y2) // 2)
    assert int(phone.settings_get("system", "screen_brightness")) <= 10
    phone.back()
    assert phone.shade == 0 and phone.foreground == LAUNCHER_PACKAGE and visible(phone, "Gmail")


def test_gboard_stays_up_without_a_field_after_enter_in_the_launcher_search(phone):
    # the real MarkorMoveNote runs: after AndroidWorld types into the search panel and presses Enter, the keyboard
    # stays (digits row, Enter) and Markor, opened from the results, opens under it; Back takes it away
    phone.apps[LAUNCHER_PACKAGE].open_search()
    phone.set_focus("launcher_search")
    phone.type_text("Markor")
    phone.keyevent(66)
    keys = [e.view.content_desc for e in phone.frame.entries if e.window == "keyboard"]
    assert "1" in keys and "Enter" in keys and "More features" not in keys
    tile = next(e for e in phone.frame.entries if e.view.content_desc == "Markor" and e.view.clickable)
    phone.tap((tile.bounds[0] + tile.bounds[2]) // 2, (tile.bounds[1] + tile.bounds[3]) // 2)
    assert phone.foreground == "net.gsantner.markor" and phone.focus is None
    assert any(e.window == "keyboard" for e in phone.frame.entries)
    phone.back()
    assert not any(e.window == "keyboard" for e in phone.frame.entries) and phone.foreground == "net.gsantner.markor"


def test_gboard_left_without_a_field_is_a_flag_that_survives_a_saved_state(phone):
    # ``ime_detached`` says only whether Gboard was left up without a field (it once held a package nobody read)
    assert phone.ime_detached is False
    phone.apps[LAUNCHER_PACKAGE].open_search()
    phone.set_focus("launcher_search")
    phone.type_text("Markor")
    phone.keyevent(66)
    assert phone.ime_detached is True
    state = phone.state_bytes()
    phone.back()
    assert phone.ime_detached is False
    phone.load_state_bytes(state)
    assert phone.ime_detached is True and any(e.window == "keyboard" for e in phone.frame.entries)
