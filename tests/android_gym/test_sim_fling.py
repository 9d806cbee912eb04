"""A swipe moves a list by its drag plus the fling it leaves, and Settings' home header collapses first: the real
emulator's numbers (tests/android_gym/data/real_episodes, see android_gym.sim.fling)."""

from __future__ import annotations

import pytest

from android_gym.actions import androidworld_scroll
from android_gym.sim import SimPhone
from android_gym.sim.fling import scroll_travel

from .sim_ui import ui_of

SETTINGS = "com.android.settings"


def top_of(phone: SimPhone, text: str) -> int | None:
    return next((e.bounds[1] for e in ui_of(phone).elements if e.text == text), None)


def list_top(phone: SimPhone) -> int:
    return next(e.bounds[1] for e in ui_of(phone).elements if e.resource_id.endswith("main_content_scrollable_container"))


def test_scroll_travel_is_the_drag_past_the_slop_plus_the_fling():
    assert scroll_travel(-1200, 300, 420) == pytest.approx(-2201, abs=25)  # the real runs: 2,187 / 2,205 / 2,210
    assert scroll_travel(-783, 300, 420) == pytest.approx(-1221, abs=25)  # the real index-3 scroll: 1,221
    assert scroll_travel(900, 300, 420) == -scroll_travel(-900, 300, 420) > 900  # a quick swipe flings on
    assert 0 < scroll_travel(900, 1500, 420) < 950  # a slow drag hardly does
    assert scroll_travel(15, 300, 420) == 0  # within the touch slop nothing moves


def test_androidworld_scroll_is_its_executors_swipe():
    whole = androidworld_scroll("down", None, (1080, 2400))
    assert (whole.x, whole.y, whole.end_x, whole.end_y) == (540, 1200, 540, 0)
    box = androidworld_scroll("down", (0, 770, 1080, 2337), (1080, 2400))
    assert (box.x, box.y, box.end_x, box.end_y) == (540, 1553, 540, 770)
    up = androidworld_scroll("up", (0, 770, 1080, 2337), (1080, 2400))
    assert (up.y, up.end_y) == (1553, 2337)


def test_settings_home_scrolls_as_the_emulator_does():
    phone = SimPhone()
    phone.launch(SETTINGS)
    assert list_top(phone) == 769 and top_of(phone, "Network & internet") == 823  # real: 770, 824
    phone.swipe(540, 1200, 540, 0)  # AndroidWorld's scroll down without an index
    assert list_top(phone) == 349  # the header collapsed (421 px of the travel)
    assert top_of(phone, "Wallpaper & style") == pytest.approx(474, abs=15)  # real: 485, 467, 462
    assert top_of(phone, "Display") is None  # scrolled past: an index tap no longer opens it


def test_settings_home_index_scroll_and_the_header_coming_back():
    phone = SimPhone()
    phone.launch(SETTINGS)
    phone.swipe(540, 1553, 540, 770)  # AndroidWorld's scroll down on the list (index 3)
    assert top_of(phone, "Battery") == pytest.approx(527, abs=30)  # real: 527
    phone.swipe(540, 1000, 540, 1900)  # back up: the list first, then the header
    assert list_top(phone) == 769 and top_of(phone, "Network & internet") == 823
