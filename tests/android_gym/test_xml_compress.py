"""compress_xml: the three text styles, AndroidLab's pruning rules, occlusion, off-screen handling,
attribute whitelisting and the CompressedUI lookups, on hand-written and real dumps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from android_gym.xml import (
    STYLES,
    CompressedUI,
    UIElement,
    UnknownElementError,
    XMLParseError,
    compress_xml,
    parse_ui,
    synthetic_dump,
)

DATA = Path(__file__).parent / "data" / "xml"
ID = r"n[0-9a-f]{4,}"


def load(name: str) -> bytes:
    return (DATA / name).read_bytes()


def labels(ui: CompressedUI) -> list[str]:
    return [e.label for e in ui.elements]


def node(cls: str, bounds: str, **attrs: str) -> str:
    base = {
        "index": "0", "text": "", "resource-id": "", "class": cls, "package": "com.example", "content-desc": "",
        "checkable": "false", "checked": "false", "clickable": "false", "enabled": "true", "focusable": "false",
        "focused": "false", "scrollable": "false", "long-clickable": "false", "password": "false",
        "selected": "false", "bounds": bounds,
    }  # fmt: skip
    base.update({k.replace("_", "-"): v for k, v in attrs.items()})
    return "<node " + " ".join(f'{k}="{v}"' for k, v in base.items()) + " />"


def screen(*inner: str, size: str = "[0,0][1080,2400]") -> str:
    root = node("android.widget.FrameLayout", size)[:-3] + ">"
    return f'<?xml version="1.0"?><hierarchy rotation="0">{root}{"".join(inner)}</node></hierarchy>'


# ---------------------------------------------------------------- text styles


def test_androidlab_line_matches_the_reference_shape():
    xml = screen(
        node(
            "android.widget.Switch",
            "[900,280][1040,380]",
            clickable="true",
            checkable="true",
            focusable="true",
        )
    )
    ui = compress_xml(xml)
    assert re.fullmatch(
        rf"\[{ID}\] Switch ;click check ; unchecked ;;: bounds: \[900,280\]\[1040,380\]", ui.text
    )


def test_androidlab_style_on_a_settings_page():
    ui = compress_xml(load("appium.xml"))
    lines = [re.sub(ID, "ID", line) for line in ui.text.splitlines()]
    assert lines == [
        "[ID] RecyclerView ;scroll ; ;;: bounds: [0,220][1080,2340]",
        "  [ID]  ;click ; ;;: bounds: [0,220][1080,420]",
        "    [ID] TextView ;; ;;Wi‑Fi: bounds: [60,270][700,340]",
        "    [ID] Switch ;click check ; checked ;;ON: bounds: [880,270][1020,370]",
        "  [ID] CheckBox ;click check ; unchecked ;;Show notifications: bounds: [0,420][1080,620]",
    ]
    assert [line.split("]")[0].strip(" [") for line in ui.text.splitlines()] == ui.ids


def test_mobilerl_style():
    ui = compress_xml(load("appium.xml"), style="mobilerl")
    lines = [re.sub(ID, "ID", line) for line in ui.text.splitlines()]
    assert lines == [
        "[ID] RecyclerView; scroll; ; [0,220] [1080,2340]",
        "[ID] LinearLayout; click; ; [0,220] [1080,420]",
        "[ID] TextView; ; Wi‑Fi; [60,270] [700,340]",
        "[ID] Switch; click check checked; ON; [880,270] [1020,370]",
        "[ID] CheckBox; click check unchecked; Show notifications; [0,420] [1080,620]",
    ]


def test_json_style_is_compact_and_matches_elements():
    ui = compress_xml(load("appium.xml"), style="json")
    data = json.loads(ui.text)
    assert data == [e.to_dict() for e in ui.elements]
    assert ", " not in ui.text and ": " not in ui.text.replace("Wi‑Fi", "")
    switch = next(d for d in data if d["class"] == "Switch")
    assert switch["rid"] == "switch_widget"
    assert switch["actions"] == ["click", "check"] and switch["states"] == ["checked"]
    assert switch["bounds"] == [880, 270, 1020, 370]
    assert switch["parent"] == data[1]["id"]
    assert set(data[0]) == {"id", "class", "rid", "bounds", "actions"}  # empty fields are left out


@pytest.mark.parametrize("style", STYLES)
def test_all_styles_share_ids_and_elements(style):
    base = compress_xml(load("webview_nested.xml"))
    ui = compress_xml(load("webview_nested.xml"), style=style)
    assert ui.ids == base.ids
    assert ui.elements == base.elements
    for eid in ui.ids:
        assert eid in ui.text


def test_text_reflects_element_words():
    ui = compress_xml(load("extra_attributes.xml"))
    for e, line in zip(ui.elements, ui.text.splitlines()):
        assert line.lstrip().startswith(f"[{e.id}] ")
        for word in e.actions + e.states:
            assert word in line
    search = ui.find(resource_id="search")[0]
    assert search.actions == ("click", "long-click", "input") and search.states == ("focused",)
    assert "hint: Search products" in ui.text


# ---------------------------------------------------------------- pruning rules


def test_pruning_drops_empty_containers_and_lifts_children():
    ui = compress_xml(load("webview_nested.xml"))
    # The four plain android.view.View wrappers have no flag and no text: gone, children lifted.
    assert not any(
        e.class_name == "android.view.View" and not e.label and not e.clickable for e in ui.elements
    )
    deep = ui.find(text="Deep link")[0]
    inner_webview = ui.element(deep.parent_id)
    assert inner_webview.class_name == "android.webkit.WebView" and inner_webview.bounds == (
        0,
        1200,
        1080,
        1800,
    )
    assert deep.depth == 2 and inner_webview.depth == 1
    lines = ui.text.splitlines()
    assert lines[ui.ids.index(deep.id)].startswith("    [")  # two levels of indentation


def test_class_shortened_and_blank_for_layouts_text_and_desc_merged():
    xml = screen(
        node("android.widget.LinearLayout", "[0,0][500,100]", clickable="true"),
        node(
            "android.widget.ImageButton",
            "[0,200][100,300]",
            text="Play",
            content_desc="Play",
            clickable="true",
        ),
        node("android.widget.TextView", "[0,400][500,500]", text="Song", content_desc="Now playing"),
    )
    lines = [re.sub(ID, "ID", line) for line in compress_xml(xml).text.splitlines()]
    assert lines == [
        "[ID]  ;click ; ;;: bounds: [0,0][500,100]",
        "[ID] ImageButton ;click ; ;;Play: bounds: [0,200][100,300]",
        "[ID] TextView ;; ;;Song Now playing: bounds: [0,400][500,500]",
    ]


def test_flags_alone_keep_a_node_and_focusable_is_named():
    xml = screen(
        node("android.view.View", "[0,0][100,100]", focusable="true"),
        node("android.view.View", "[0,100][100,200]", selected="true"),
        node("android.view.View", "[0,200][100,300]"),
        node("android.view.View", "[0,300][100,400]", text="   "),
        node("android.view.View", "[0,400][100,500]", enabled="false"),
    )
    ui = compress_xml(xml)
    assert [e.bounds[1] for e in ui.elements] == [0, 100]
    assert " ;focusable ; ;;: bounds: [0,0][100,100]" in ui.text
    assert " ;; selected ;;: bounds: [0,100][100,200]" in ui.text


def test_whitespace_in_labels_becomes_one_line():
    ui = compress_xml(load("naf_quotes_entities.xml"))
    assert "line one line two line three" in ui.text
    assert len(ui.text.splitlines()) == len(ui.elements)
    body = ui.find(text="line one")[0]
    assert body.text == "line one\nline two\r\nline three"  # the element keeps the raw text


def test_unknown_attributes_never_reach_the_text():
    for style in STYLES:
        text = compress_xml(load("extra_attributes.xml"), style=style).text
        for leak in (
            "LEAK-ME-7731",
            "secret",
            "input-type",
            "internal-tooltip",
            "display-id",
            "drawing-order",
        ):
            assert leak not in text, f"{leak!r} leaked into the {style} text"


def test_disabled_and_password_states():
    ui = compress_xml(load("naf_quotes_entities.xml"))
    quote = ui.find(resource_id="quote")[0]
    assert quote.enabled is False and "disabled" in quote.states
    pin = compress_xml(load("extra_attributes.xml")).find(content_desc="PIN")[0]
    assert pin.password and pin.editable and pin.states == ("password",)


# ---------------------------------------------------------------- occlusion


def test_dialog_hides_everything_underneath():
    # The dialog's full-screen root takes every tap (tapping outside the panel dismisses it): nothing
    # below can be acted on. The scrim itself is kept, as a clickable element.
    ui = compress_xml(load("dialog_over_list.xml"))
    assert labels(ui) == ["", "Delete Music?", "Cancel", "Delete"]
    assert ui.elements[0].resource_id.endswith("dialog_root") and ui.elements[0].clickable


def test_a_later_container_that_takes_no_touches_hides_nothing():
    # The same screen with a dialog root that is not clickable: Android hands the taps it does not take
    # to the views below, so the list, the title and the button stay (they can be acted on).
    raw = load("dialog_over_list.xml").decode()
    raw = raw.replace('dialog_root" class="android.widget.FrameLayout" package="com.example.files" content-desc="" '
                      'checkable="false" checked="false" clickable="true"',
                      'dialog_root" class="android.widget.FrameLayout" package="com.example.files" content-desc="" '
                      'checkable="false" checked="false" clickable="false"')  # fmt: skip
    ui = compress_xml(raw)
    assert not ui.find(resource_id="dialog_root")
    assert ui.find(text="Files") and ui.find(text="New folder") and ui.find(text="Delete Music?")
    assert len(ui.find(content_desc="Delete", clickable=True)) == 4
    assert ui.element_at(500, 300).label == "Photos", "the list row is still the top-most thing there"


def test_a_scrim_the_dump_marks_not_shown_hides_nothing():
    button = node("android.widget.Button", "[0,1000][1080,1200]", text="Under", clickable="true")
    scrim = node("android.widget.FrameLayout", "[0,0][1080,2400]", clickable="true", visible_to_user="false")
    scrim = scrim[:-3] + ">" + node("android.widget.TextView", "[40,950][1040,1050]", text="Gone") + "</node>"
    ui = compress_xml(screen(button, scrim))
    assert labels(ui) == ["Under"]
    shown = compress_xml(screen(button, scrim.replace('visible-to-user="false"', 'visible-to-user="true"')))
    assert labels(shown) == ["", "Gone"], "shown, the clickable scrim hides the button"


def test_a_later_window_hides_what_its_frame_covers():
    # Multi-window dumps list windows bottom to top; a later window takes every touch inside its frame,
    # clickable or not, but nothing outside it (the keyboard is not modal).
    app = node("android.widget.Button", "[0,1000][1080,1200]", text="Under", clickable="true")
    top = node("android.widget.Button", "[0,100][1080,300]", text="Above", clickable="true")
    popup = (
        node("android.widget.FrameLayout", "[0,900][1080,1400]")[:-3]
        + ">"
        + node("android.widget.TextView", "[40,950][1040,1050]", text="Popup text")
        + "</node>"
    )
    empty = node("android.widget.FrameLayout", "[0,0][1080,2400]")
    body = screen(app, top)[: -len("</hierarchy>")]
    ui = compress_xml(body + popup + empty + "</hierarchy>")
    assert labels(ui) == ["Above", "Popup text"], "an empty full-screen window (no label) hides nothing"
    # Dumps list windows in no reliable order: the smaller window is the one on top, listed first or last.
    first = "<hierarchy>" + popup + body[body.index("<node") :] + "</hierarchy>"
    assert labels(compress_xml(first)) == ["Popup text", "Above"]
    assert compress_xml(first).element_at(500, 1000).label == "Popup text"


def test_empty_overlays_and_decorations_do_not_hide_controls():
    # AndroidLab drops anything overlapping a later sibling; an empty overlay host and a textless
    # shadow image would wipe this screen there. Here the list and the title survive.
    ui = compress_xml(load("list_no_dialog.xml"))
    assert ui.find(text="Files") and ui.find(text="New folder")
    assert len(ui.find(content_desc="Delete", clickable=True)) == 4
    assert [e.label for e in ui.find(resource_id="name")] == ["Photos", "Music", "Documents", "Downloads"]


def test_keyboard_window_hides_what_it_fully_covers():
    ui = compress_xml(load("keyboard.xml"))
    assert not ui.find(text="Old message")
    assert ui.find(text="Half hidden"), "a partly covered element stays"
    assert ui.find(editable=True, focused=True)
    assert ui.find(content_desc="Send")
    assert len(ui.find(package="inputmethod")) == 20


def test_drawing_order_decides_what_is_on_top():
    # The banner is a tappable promotion (clickable, with text): whichever is drawn last takes the taps.
    raw = load("extra_attributes.xml").decode()
    ui = compress_xml(raw)
    assert ui.find(text="Buy now"), (
        "drawn after the banner (drawing-order 5 > 4) although earlier in the dump"
    )
    assert ui.element_at(300, 1050).label == "Buy now"
    assert ui.element_at(800, 1050).label == "Limited offer: free shipping"
    without = re.sub(r' drawing-order="\d+"', "", raw)
    ui2 = compress_xml(without)
    assert not ui2.find(text="Buy now"), "in dump order the banner is drawn over the button"
    assert ui2.element_at(300, 1050).label == "Limited offer: free shipping"


def test_occluded_with_keep_offscreen_still_occluded():
    ui = compress_xml(load("dialog_over_list.xml"), keep_offscreen=True)
    assert labels(ui) == ["", "Delete Music?", "Cancel", "Delete"]


# ---------------------------------------------------------------- geometry and off-screen


def test_invalid_bounds_offscreen_and_outside_parent():
    ui = compress_xml(load("degenerate.xml"))
    assert labels(ui) == ["Start", "Half off the left"]
    half = ui.find(text="Half off the left")[0]
    assert half.bounds == (0, 700, 200, 800), "visible bounds are clipped to the screen"
    assert half.center == (100, 750)
    start = ui.find(label="Start")[0]
    assert start.parent_id is None and start.bounds == (100, 500, 620, 620), (
        "a zero-size parent hides nothing"
    )


def test_keep_offscreen_keeps_raw_bounds():
    ui = compress_xml(load("degenerate.xml"), keep_offscreen=True)
    assert labels(ui) == ["Start", "Below the screen", "Half off the left", "Outside parent"]
    assert ui.find(text="Half off the left")[0].bounds == (-100, 700, 200, 800)
    for bad in ("Zero", "No bounds", "Garbage bounds", "Inverted"):
        assert not ui.find(text=bad, exact=True), f"{bad!r} has no valid bounds and must never be an element"


def test_screen_size_argument_overrides_root_bounds():
    ui = compress_xml(load("degenerate.xml"), screen_size=(720, 650))
    assert labels(ui) == ["Start"]
    assert ui.screen_size == (720, 650)
    big = compress_xml(load("degenerate.xml"), screen_size=(720, 1600))
    assert "Below the screen" not in labels(big), "still outside its parent (the root ends at 1280)"


def test_nodes_marked_invisible_are_hidden_unless_keep_offscreen():
    container = node("android.widget.LinearLayout", "[0,600][1080,900]", visible_to_user="false")[:-3] + ">"
    xml = screen(
        node(
            "android.widget.Button", "[0,0][500,100]", text="Shown", clickable="true", visible_to_user="true"
        ),
        node(
            "android.widget.Button",
            "[0,200][500,300]",
            text="Ghost",
            clickable="true",
            visible_to_user="false",
        ),
        node(
            "android.widget.Button",
            "[0,400][500,500]",
            text="Appium hidden",
            clickable="true",
            displayed="false",
        ),
        container
        + node("android.widget.Button", "[0,600][500,700]", text="Inside ghost", clickable="true")
        + "</node>",
    )
    assert labels(compress_xml(xml)) == ["Shown"]
    assert labels(compress_xml(xml, keep_offscreen=True)) == [
        "Shown",
        "Ghost",
        "Appium hidden",
        "Inside ghost",
    ]
    assert [n.visible for n in parse_ui(xml).nodes] == [True, True, False, False, False, True]


def test_appium_hierarchy_size_when_nodes_have_no_bounds():
    xml = '<hierarchy width="1080" height="2340"><android.widget.TextView text="x"/></hierarchy>'
    assert parse_ui(xml).screen_size == (1080, 2340)
    assert compress_xml(xml).screen_size == (1080, 2340)


def test_synthetic_dialog_and_keyboard():
    plain = compress_xml(synthetic_dump(200))
    dialog = compress_xml(synthetic_dump(200, dialog=True))
    assert labels(dialog) == [
        "",  # the dim scrim, which takes the taps around the panel
        "Reset settings?",
        "All preferences will be restored to defaults.",
        "Cancel",
        "Reset",
    ]
    kb = compress_xml(synthetic_dump(200, keyboard=True))
    keyboard_top = 2400 - 900
    assert all(e.bounds[1] < keyboard_top or e.package.endswith("latin") for e in kb.elements)
    assert len(kb.find(package="inputmethod")) == 27
    assert len(plain) > len(kb) - 27


# ---------------------------------------------------------------- lookups


def test_element_lookup_and_errors():
    ui = compress_xml(load("appium.xml"))
    switch = ui.find(class_name="Switch")[0]
    assert ui.element(switch.id) is switch
    assert ui.element(f"[{switch.id}]") is switch
    assert ui.element(f" {switch.id} ") is switch
    assert switch.id in ui and "n0000zz" not in ui
    with pytest.raises(UnknownElementError) as info:
        ui.element("nzzzz")
    assert isinstance(info.value, KeyError)
    msg = str(info.value)
    assert "'nzzzz'" in msg and switch.id in msg
    with pytest.raises(KeyError, match="this screen has no elements"):
        compress_xml("<hierarchy/>").element("n1234")


def test_element_at_returns_the_top_most():
    ui = compress_xml(load("appium.xml"))
    assert ui.element_at(950, 300).short_class == "Switch"
    assert ui.element_at(800, 400).short_class == "LinearLayout"
    assert ui.element_at(100, 300).label == "Wi‑Fi"
    assert ui.element_at(100, 300, actionable=True).short_class == "LinearLayout"
    assert ui.element_at(500, 100) is None
    assert ui.element_at(1080, 300) is None, "right and bottom edges are exclusive"
    dialog = compress_xml(load("dialog_over_list.xml"))
    top = dialog.element_at(500, 300)
    assert top is not None and top.resource_id.endswith("dialog_root"), "the list under the dialog is gone"
    assert dialog.element_at(800, 1400).label == "Delete"


def test_find_criteria():
    ui = compress_xml(load("list_no_dialog.xml"))
    assert [e.label for e in ui.find("o")] == ["Photos", "Documents", "Downloads", "New folder"]
    assert [e.label for e in ui.find("MUSIC")] == ["Music"]
    assert ui.find("MUSIC", case_sensitive=True) == []
    assert [e.label for e in ui.find("Files", exact=True)] == ["Files"]
    assert ui.find("File", exact=True) == []
    assert len(ui.find(resource_id="com.example.files:id/delete")) == 4
    assert len(ui.find(resource_id="delete", exact=True)) == 4
    assert len(ui.find(class_name="ImageButton")) == 4
    assert len(ui.find(class_name="android.widget.ImageButton", exact=True)) == 4
    assert len(ui.find(label="delete")) == 4
    assert [e.label for e in ui.find(clickable=True, class_name="Button", exact=True)] == ["New folder"]
    assert ui.find(scrollable=True)[0].short_class == "RecyclerView"
    assert ui.find(clickable=False, text="Photos")[0].short_class == "TextView"
    assert ui.find(checkable=True) == []
    with pytest.raises(TypeError, match="expects a string"):
        ui.find(text=3)  # type: ignore[arg-type]


def test_element_fields():
    ui = compress_xml(load("appium.xml"))
    switch = ui.find(class_name="Switch")[0]
    assert isinstance(switch, UIElement)
    assert switch.class_name == "android.widget.Switch" and switch.short_class == "Switch"
    assert switch.resource_id == "android:id/switch_widget" and switch.short_resource_id == "switch_widget"
    assert switch.package == "com.android.settings"
    assert switch.center == (950, 320)
    assert switch.contains(880, 270) and not switch.contains(1020, 300)
    assert switch.index_path == (0, 0, 0, 1)
    assert (switch.checkable, switch.checked, switch.clickable, switch.focusable) == (True, True, True, True)
    assert (switch.editable, switch.scrollable, switch.long_clickable, switch.selected) == (False,) * 4
    with pytest.raises(AttributeError):
        switch.text = "x"  # type: ignore[misc]
    assert len(ui) == 5 and list(ui) == ui.elements
    assert "elements=5" in repr(ui)


def test_accepts_a_parsed_tree_and_is_deterministic():
    raw = load("webview_nested.xml")
    tree = parse_ui(raw)
    a, b, c = compress_xml(raw), compress_xml(tree), compress_xml(raw.decode())
    assert a.text == b.text == c.text
    assert b.tree is tree


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown compression style 'xml'"):
        compress_xml(load("appium.xml"), style="xml")
    for bad in [(0, 100), (100,), (1.5, 100), (True, 100), "1080x2400", (100, -1)]:
        with pytest.raises(ValueError, match="screen_size"):
            compress_xml(load("appium.xml"), screen_size=bad)  # type: ignore[arg-type]
    with pytest.raises(XMLParseError):
        compress_xml("<hierarchy><node></hierarchy>")


# ---------------------------------------------------------------- real dumps


@pytest.mark.realdata
def test_realdata_launcher_keeps_the_dock(realdata):
    ui = compress_xml((realdata / "android_xml" / "22_LlamaTouch__UICheckpoint__page.xml").read_bytes())
    # The dock icons sit under a textless clickable background image (bg_dock) that comes later in
    # the dump; AndroidLab's overlap rule would drop all four. They are real, tappable icons.
    assert [e.label for e in ui.find(class_name="TextView")] == [
        "梦幻西游", "梦幻西游", "梦幻西游", "拨号", "联系人", "信息", "浏览器",
    ]  # fmt: skip
    assert ui.element_at(96, 1200).resource_id.endswith("bg_dock"), "the dump draws the background last"
    assert ui.find(scrollable=True)[0].content_desc == "第 1 屏，共 4 屏"
    for style in STYLES:
        assert len(compress_xml(ui.tree, style=style).text) < 4771 / 3


@pytest.mark.realdata
def test_realdata_douyin_keeps_the_list_under_an_empty_overlay(realdata):
    raw = (realdata / "android_xml" / "43_zhuxuezhe16__DouYin-Helper__uidump.xml").read_text("utf-8")
    ui = compress_xml(raw)
    # A full-screen LinearLayout with an empty FrameLayout comes after the whole content in the dump.
    assert len(ui.find(text="关注", exact=True, clickable=True)) == 8
    assert ui.find(content_desc="返回")[0].bounds == (18, 72, 150, 204)
    assert ui.find(text="关注 4981")[0].selected
    assert not ui.find(resource_id="navigationBarBackground")
    assert len(ui.text) < len(raw) / 10
    tab = ui.find(text="粉丝")[0]
    assert ui.element(tab.parent_id).short_class == "ActionBar$Tab"


# ---------------------------------------------------------------- helpers and the benchmark


def test_synthetic_dump_size_and_determinism():
    for n in (70, 500, 1200):
        assert len(parse_ui(synthetic_dump(n))) == n
        assert len(parse_ui(synthetic_dump(n, dialog=True, keyboard=True, extra_attrs=True))) == n
    assert synthetic_dump(300, seed=4) == synthetic_dump(300, seed=4) != synthetic_dump(300, seed=5)
    with pytest.raises(ValueError, match="at least"):
        synthetic_dump(10)


def test_benchmark_script_reports_every_dump(tmp_path, capsys):
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "tools" / "bench" / "xml_compress.py"
    spec = importlib.util.spec_from_file_location("xml_compress_bench", script)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    (tmp_path / "android_xml").mkdir()
    (tmp_path / "android_xml" / "one.xml").write_bytes(load("appium.xml"))
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "two.xml").write_bytes(load("keyboard.xml"))
    args = [
        "--realdata",
        str(tmp_path),
        "--dumps",
        str(tmp_path / "more"),
        "--repeats",
        "2",
        "--nodes",
        "120",
    ]
    report = bench.main([*args, "--androidlab-repeats", "1"])
    assert json.loads(capsys.readouterr().out) == report
    assert [d["dump"] for d in report["dumps"]] == ["one.xml", "two.xml", "generated_120_nodes"]
    first = report["dumps"][0]
    assert first["nodes"] == 6 and first["elements"] == 5 and first["chars_after"] < first["chars_before"]
    assert report["generated_120_median_ms_compress"] > 0
    two = report["dumps"][1]
    assert two["actionable"] == 24 and two["actionable_kept"] == 23, (
        "the message under the keyboard window is hidden"
    )
    if report["androidlab_available"]:
        # AndroidLab reads only <node> dumps with every attribute: the Appium one makes it fail.
        assert first["androidlab"]["failed"].startswith("KeyError")
        assert report["androidlab_failures"] == 1
        al = two["androidlab"]
        assert al["failed"] is None and al["median_ms_compress"] > 0 and al["chars_after"] > 0
        assert 0 < al["actionable_kept"] <= two["actionable"]
    else:
        assert "android_lab" in report["androidlab_missing"] or "xmltodict" in report["androidlab_missing"]
    missing = bench.main([*args, "--androidlab", str(tmp_path)])
    capsys.readouterr()
    assert not missing["androidlab_available"] and "xml_tool.py" in missing["androidlab_missing"]
    assert "androidlab" not in missing["dumps"][0]
