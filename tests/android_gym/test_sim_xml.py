"""The hierarchy dump of the simulated phone has the shape of a real uiautomator dump."""

from __future__ import annotations

import re

import pytest
from lxml import etree

from android_gym.sim import App, Button, Column, Dialog, SimPhone, Text, View

ATTRS = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
         "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds", "hint"]
BOUNDS = re.compile(r"^\[(\d+),(\d+)\]\[(\d+),(\d+)\]$")


def screens() -> list[tuple[str, SimPhone]]:
    """A few different screens: home, drawer, Settings (scrolled), a page with the keyboard, a dialog."""
    out = []
    p = SimPhone()
    out.append(("home", p))
    p = SimPhone()
    p.swipe(540, 1600, 540, 500)
    out.append(("drawer", p))
    p = SimPhone()
    p.launch("com.android.settings")
    p.swipe(540, 1800, 540, 1000)
    out.append(("settings-scrolled", p))
    p = SimPhone()
    p.launch("com.android.settings")
    p.app("com.android.settings").push("search")
    p.type_text('a "quoted" <b> & \'x\'')
    out.append(("keyboard", p))
    p = SimPhone()
    p.toast("Hello\nworld")
    out.append(("toast", p))
    return out


@pytest.mark.parametrize("name,phone", screens(), ids=lambda v: v if isinstance(v, str) else "")
def test_dump_is_valid_uiautomator_xml(name, phone):
    xml = phone.dump()
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">")
    assert "\n" not in xml
    root = etree.fromstring(xml.encode())
    assert root.tag == "hierarchy"
    nodes = list(root.iter("node"))
    assert len(nodes) > 10
    for node in nodes:
        assert list(node.attrib) == ATTRS, f"attribute order/set differs on {node.attrib}"
        m = BOUNDS.match(node.get("bounds"))
        assert m, node.get("bounds")
        x1, y1, x2, y2 = map(int, m.groups())
        assert 0 <= x1 < x2 <= phone.width and 0 <= y1 < y2 <= phone.height
        for flag in ATTRS[6:16]:
            assert node.get(flag) in ("true", "false")
    for parent in nodes:
        kids = list(parent)
        assert [int(k.get("index")) for k in kids] == list(range(len(kids)))


def test_dump_has_real_window_structure():
    phone = SimPhone()
    phone.launch("com.android.settings")
    root = etree.fromstring(phone.dump().encode())
    windows = list(root)
    assert windows[0].get("class") == "android.widget.FrameLayout"
    assert windows[0].get("bounds") == "[0,0][1080,2400]"
    content = windows[0][0][0]
    assert content.get("resource-id") == "android:id/content"
    packages = [w.get("package") for w in windows]
    assert packages[0] == "com.android.settings" and packages[-1] == "com.android.systemui"
    ids = {n.get("resource-id") for n in root.iter("node")}
    assert "com.android.systemui:id/clock" in ids and "com.android.systemui:id/mobile_combo" in ids
    assert "com.android.settings:id/main_content_scrollable_container" in ids
    # gesture navigation, as on the AndroidWorld emulator: no Back/Home/Overview buttons in the dump
    nav = {n.get("content-desc") for n in root.iter("node") if n.get("clickable") == "true"}
    assert not {"Back", "Home", "Overview"} & nav


def test_text_is_escaped_and_round_trips():
    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("search")
    text = 'a "quoted" <b> & \'x\''
    phone.type_text(text)
    root = etree.fromstring(phone.dump().encode())
    assert any(n.get("text") == text and n.get("focused") == "true" for n in root.iter("node"))
    phone.toast("two\nlines")
    root = etree.fromstring(phone.dump().encode())
    assert any(n.get("text") == "two\nlines" and n.get("class") == "android.widget.Toast" for n in root.iter("node"))


class DialogApp(App):
    """A one-page app whose button opens a dialog."""

    package = "com.example.dialogs"
    label = "Dialogs"

    def build_main(self) -> View:
        return Column(Text("Page text"), Button("Ask", lambda: self.show_dialog("ask", q="Sure?")), weight=1)

    def dialog_ask(self, q: str) -> View:
        return Dialog("Question", q, [("No", self.close_dialog), ("Yes", self.close_dialog)])


def test_dialog_nodes_come_after_the_page_they_cover_and_sit_inside_it():
    phone = SimPhone(apps=[DialogApp])
    phone.launch("com.example.dialogs")
    phone.tap(*next(((e.bounds[0] + e.bounds[2]) // 2, (e.bounds[1] + e.bounds[3]) // 2)
                    for e in phone.frame.entries if e.text == "Ask"))
    root = etree.fromstring(phone.dump().encode())
    nodes = list(root.iter("node"))
    order = [n.get("text") for n in nodes]
    assert order.index("Question") > order.index("Page text")
    ids = {n.get("resource-id") for n in nodes}
    assert {"android:id/alertTitle", "android:id/message", "android:id/button1"} <= ids
    dialog_window = list(root)[1]
    assert dialog_window.get("package") == "com.example.dialogs"


def test_dump_is_cached_until_something_changes():
    phone = SimPhone()
    first = phone.dump()
    assert phone.dump() is first
    phone.tap(5, 1000)
    assert phone.dump() is not first


def test_compressor_reads_the_dump():
    xml_mod = pytest.importorskip("android_gym.xml")
    phone = SimPhone()
    phone.launch("com.android.settings")
    ui = xml_mod.compress_xml(phone.dump(), screen_size=(phone.width, phone.height))
    texts = {e.text for e in ui.elements}
    assert {"Network & internet", "Sound & vibration"} <= texts
    assert any(e.scrollable for e in ui.elements)


def test_text_fields_carry_their_hint_and_other_nodes_an_empty_one():
    from android_gym.xml import compress_xml, parse_ui

    phone = SimPhone()
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("search")
    nodes = parse_ui(phone.dump()).nodes
    field = next(n for n in nodes if n.resource_id.endswith(":id/open_search_view_edit_text"))
    assert (field.text, field.hint) == ("Search settings", "Search settings")  # empty: the hint shows as text
    phone.type_text("wifi")
    ui = compress_xml(phone.dump(), screen_size=(phone.width, phone.height))
    field = next(e for e in ui.elements if e.resource_id.endswith(":id/open_search_view_edit_text"))
    assert (field.text, field.hint) == ("wifi", "Search settings")
    assert all(n.hint == "" for n in parse_ui(phone.dump()).nodes if "EditText" not in n.class_name)
