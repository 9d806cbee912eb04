"""The simulator's speed-ups change no pixel and no dump: pre-blended text tiles and one-pass pixel export
against plain masked pastes and ``np.asarray``; reused status bar, navigation bar and keyboard windows
against a dump built from scratch."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from android_gym.sim import SimPhone, render
from android_gym.sim.hierarchy import to_xml


def _screens(phone: SimPhone):
    """Walk a few different screens (list, scrolled list, keyboard, dialog-like pages, dark theme, toast)."""
    settings = phone.app("com.android.settings")
    phone.launch("com.android.settings")
    yield "settings"
    phone.swipe(540, 1800, 540, 900, 300)
    yield "scrolled"
    settings.push("search")
    yield "search with keyboard"
    phone.type_text("wi")
    yield "typed"
    phone.back()
    phone.back()
    settings.push("bluetooth")
    phone.settings_put("global", "bluetooth_on", "1")
    yield "bluetooth on"
    phone.settings_put("secure", "ui_night_mode", "2")
    yield "dark"
    phone.toast("Saved")
    yield "toast"
    phone.home()
    yield "home"


def test_tiles_and_export_match_plain_rendering(monkeypatch: pytest.MonkeyPatch):
    phone = SimPhone()
    for name in _screens(phone):
        frame = phone.frame
        fast = render.render_frame(phone, frame)
        fast_again = render.render_frame(phone, frame)  # tiles now come from the cache
        monkeypatch.setattr(render._TILES, "enabled", False)
        plain = render.render_frame(phone, frame)
        monkeypatch.setattr(render._TILES, "enabled", True)
        assert np.array_equal(fast, plain), name
        assert np.array_equal(fast_again, plain), name
        assert fast.shape == (phone.height, phone.width, 3) and fast.dtype == np.uint8
        img = Image.fromarray(plain)
        assert np.array_equal(render._pixels(img), np.asarray(img)), name


def test_reused_system_windows_give_the_same_dump():
    phone = SimPhone()
    dumps = set()
    for name in _screens(phone):
        frame = phone.frame
        assert frame.known_xml, name  # the bars (and keyboard) were reused
        assert frame.xml == to_xml(frame.entries), name
        dumps.add(frame.xml)
    assert len(dumps) >= 7  # the dark theme changes pixels, not the dump


def test_status_bar_follows_settings_and_clock():
    phone = SimPhone()
    assert "Airplane mode." not in phone.dump()
    phone.settings_put("global", "airplane_mode_on", "1")
    assert "Airplane mode." in phone.dump()
    clock = next(e.text for e in phone.frame.entries if e.resource_id.endswith(":id/clock"))
    phone.advance_clock(60_000)
    assert next(e.text for e in phone.frame.entries if e.resource_id.endswith(":id/clock")) != clock
    phone.settings_put("global", "airplane_mode_on", "0")
    assert "Airplane mode." not in phone.dump() and phone.dump() == to_xml(phone.frame.entries)
