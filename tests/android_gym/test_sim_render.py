"""Screenshots of the simulated phone: shape, dtype, and that they follow the state."""

from __future__ import annotations

import numpy as np

from android_gym.sim import SimPhone


def test_screenshot_shape_dtype_and_cache():
    phone = SimPhone()
    shot = phone.screenshot()
    assert shot.shape == (2400, 1080, 3) and shot.dtype == np.uint8
    assert phone.screenshot() is shot  # cached until the screen changes
    assert shot.std() > 5  # not a blank image


def test_screenshot_respects_screen_size():
    phone = SimPhone(width=720, height=1280, density=320)
    assert phone.screenshot().shape == (1280, 720, 3)


def test_screenshot_differs_when_state_differs():
    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("internet")
    on = phone.screenshot().copy()
    phone.settings_put("global", "wifi_on", "0")
    off = phone.screenshot()
    diff = np.any(on != off, axis=2)
    assert diff.sum() > 1000
    assert diff[: phone.status_bar_height].any()  # the status bar's Wi-Fi icon went away too


def test_switch_drawn_on_and_off_differently():
    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("bluetooth")
    switch = next(e for e in phone.frame.entries if e.view.cls == "android.widget.Switch")
    x1, y1, x2, y2 = switch.bounds
    off = phone.screenshot()[y1:y2, x1:x2].copy()
    phone.settings_put("global", "bluetooth_on", "1")
    switch = next(e for e in phone.frame.entries if e.view.cls == "android.widget.Switch")
    assert switch.bounds == (x1, y1, x2, y2)
    on = phone.screenshot()[y1:y2, x1:x2]
    assert np.abs(on.astype(int) - off.astype(int)).sum() > 10000


def test_dark_theme_darkens_the_page():
    phone = SimPhone()
    phone.launch("com.android.settings")
    light = phone.screenshot().mean()
    phone.settings_put("secure", "ui_night_mode", "2")
    assert phone.screenshot().mean() < light - 50


def test_keyboard_is_drawn():
    phone = SimPhone()
    phone.launch("com.android.settings")
    before = phone.screenshot().copy()
    phone.app("com.android.settings").push("search")
    kb = phone.frame.keyboard_area
    assert kb is not None
    after = phone.screenshot()
    x1, y1, x2, y2 = kb
    assert np.any(before[y1:y2, x1:x2] != after[y1:y2, x1:x2])
