"""Reading and driving the simulated phone's screen in app tests: compressed UI, tap by text or id, visible texts.

Shared by the ``test_app_*`` files; import it relatively (``from .sim_ui import tap_on``), which works under
pytest's ``--import-mode=importlib`` because the test modules get the package name ``tests.android_gym``.
"""

from __future__ import annotations

from android_gym.sim import SimPhone
from android_gym.xml import CompressedUI, compress_xml


def ui_of(phone: SimPhone) -> CompressedUI:
    """The phone's current screen, compressed as an agent sees it."""
    return compress_xml(phone.dump(), screen_size=(phone.width, phone.height))


def tap_on(phone: SimPhone, text: str = "", rid: str = "", long: bool = False) -> None:
    """Tap (or long-press) the topmost element showing ``text`` (text or content-desc) and/or with id ``rid``."""
    ui = ui_of(phone)
    for e in reversed(ui.elements):
        if (not text or text in (e.text, e.content_desc)) and (not rid or e.resource_id.endswith(":id/" + rid)):
            (phone.long_press if long else phone.tap)(*e.center)
            return
    raise AssertionError(f"nothing with text={text!r} rid={rid!r} on screen:\n{ui.text}")


def scroll_to_text(phone: SimPhone, text: str, tries: int = 6) -> None:
    """Swipe the screen's scrolling list up until an element shows ``text`` (a list longer than the screen)."""
    for _ in range(tries):
        if any(text in (e.text, e.content_desc) for e in ui_of(phone).elements):
            return
        lists = [e for e in ui_of(phone).elements if e.scrollable]
        x1, y1, x2, y2 = lists[-1].bounds if lists else (0, 0, phone.width, phone.height)
        phone.swipe((x1 + x2) // 2, y1 + (y2 - y1) * 3 // 4, (x1 + x2) // 2, y1 + (y2 - y1) // 4, 300)
    raise AssertionError(f"{text!r} not found after {tries} swipes")


def reveal_rid(phone: SimPhone, rid: str, tries: int = 6) -> None:
    """Hide the keyboard and swipe the screen's scrolling list up until the element with id ``rid`` shows."""
    if phone.keyboard_shown:
        phone.back()
    for _ in range(tries):
        if any(e.resource_id.endswith(":id/" + rid) for e in ui_of(phone).elements):
            return
        lists = [e for e in ui_of(phone).elements if e.scrollable]
        x1, y1, x2, y2 = lists[-1].bounds if lists else (0, 0, phone.width, phone.height)
        phone.swipe((x1 + x2) // 2, y1 + (y2 - y1) * 3 // 4, (x1 + x2) // 2, y1 + (y2 - y1) // 4, 300)
    raise AssertionError(f"no element with id {rid!r} after {tries} swipes")


def type_in(phone: SimPhone, rid: str, text: str) -> None:
    """Tap the field with id ``rid`` and type ``text`` into it."""
    tap_on(phone, rid=rid)
    phone.type_text(text)


def texts(phone: SimPhone) -> list[str]:
    """Every non-empty text on screen, top to bottom."""
    return [e.text for e in ui_of(phone).elements if e.text]


def descs(phone: SimPhone) -> list[str]:
    """Every non-empty content description on screen, top to bottom."""
    return [e.content_desc for e in ui_of(phone).elements if e.content_desc]
