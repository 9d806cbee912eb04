"""parse_ui: real and hand-written uiautomator dumps, every robustness case, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from android_gym.xml import UITree, XMLParseError, parse_bounds, parse_ui

DATA = Path(__file__).parent / "data" / "xml"


def load(name: str) -> bytes:
    return (DATA / name).read_bytes()


def by_text(tree: UITree, text: str):
    hits = [n for n in tree.nodes if n.text == text]
    assert len(hits) == 1, f"expected one node with text {text!r}, got {len(hits)}"
    return hits[0]


def test_naf_single_quotes_entities_newlines_rotation():
    tree = parse_ui(load("naf_quotes_entities.xml"))
    assert tree.rotation == 1
    assert tree.screen_size == (2400, 1080)
    assert len(tree) == 6
    fab = next(n for n in tree.nodes if n.resource_id.endswith(":id/fab"))
    assert fab.naf and fab.clickable and fab.focusable and not fab.long_clickable
    assert fab.bounds == (2240, 900, 2380, 1040)
    assert fab.index_path == (0, 0)
    assert fab.attrs["NAF"] == "true"
    title = next(n for n in tree.nodes if n.resource_id.endswith(":id/title"))
    assert title.text == "Tom & Jerry <3 \"quoted\" 'single' 中"
    body = next(n for n in tree.nodes if n.resource_id.endswith(":id/body"))
    assert body.text == "line one\nline two\r\nline three"
    assert body.long_clickable
    quote = next(n for n in tree.nodes if n.resource_id.endswith(":id/quote"))
    assert quote.text == "it's" and quote.content_desc == 'say "hi"'
    assert quote.enabled is False
    assert quote.label == 'it\'s say "hi"'
    raw = next(n for n in tree.nodes if n.resource_id.endswith(":id/raw"))
    assert raw.text == "raw newline"  # XML normalises a literal newline inside an attribute to a space


def test_extra_attributes_are_kept_but_typed_fields_come_from_known_ones():
    tree = parse_ui(load("extra_attributes.xml"))
    search = next(n for n in tree.nodes if n.resource_id.endswith(":id/search"))
    assert search.hint == "Search products"
    assert search.editable and search.focused and search.drawing_order == 1
    assert search.attrs["input-type"] == "1"
    assert search.attrs["secret-token"] == "LEAK-ME-7731"
    assert search.attrs["visible-to-user"] == "true"
    pin = next(n for n in tree.nodes if n.resource_id.endswith(":id/pin"))
    assert pin.editable, "editable='true' makes a custom class editable"
    assert pin.password and pin.content_desc == "PIN"
    assert pin.short_class == "CodeInput"
    root = tree.nodes[0]
    assert root.drawing_order == 0 and root.attrs["display-id"] == "0"


def test_appium_variant_uses_class_attribute_or_tag():
    tree = parse_ui(load("appium.xml"))
    assert tree.attrs["width"] == "1080" and tree.attrs["class"] == "hierarchy"
    classes = [n.class_name for n in tree.nodes]
    assert classes == [
        "android.widget.FrameLayout",
        "androidx.recyclerview.widget.RecyclerView",
        "android.widget.LinearLayout",
        "android.widget.TextView",
        "android.widget.Switch",
        "android.widget.CheckBox",  # no class attribute: the element tag is the class
    ]
    switch = tree.nodes[4]
    assert switch.checkable and switch.checked and switch.clickable
    assert switch.resource_id == "android:id/switch_widget"
    assert switch.index_path == (0, 0, 0, 1)
    assert tree.nodes[5].index_path == (0, 0, 1)
    assert tree.screen_size == (1080, 2340)


def test_structure_children_parent_subtree():
    tree = parse_ui(load("appium.xml"))
    root = tree.nodes[0]
    assert root.parent is None and tree.roots == [0]
    assert [c.index for c in tree.children(root)] == [1]
    rv = tree.nodes[1]
    assert [c.index for c in tree.children(rv)] == [2, 5]
    assert [n.index for n in tree.subtree(rv)] == [1, 2, 3, 4, 5]
    switch = tree.nodes[4]
    assert [a.index for a in tree.ancestors(switch)] == [2, 1, 0]
    assert tree.parent(switch).index == 2
    assert switch.depth == 3
    assert [n.index for n in tree] == list(range(6))


def test_degenerate_bounds():
    tree = parse_ui(load("degenerate.xml"))
    zero_container = tree.nodes[1]
    assert zero_container.bounds == (0, 0, 0, 0)
    assert by_text(tree, "No bounds").bounds is None
    assert by_text(tree, "Garbage bounds").bounds is None
    assert by_text(tree, "Inverted").bounds == (400, 400, 200, 300)
    assert by_text(tree, "Half off the left").bounds == (-100, 700, 200, 800)


def test_single_node_without_hierarchy_root():
    tree = parse_ui(load("single_node.xml"))
    assert len(tree) == 1 and tree.roots == [0]
    node = tree.nodes[0]
    assert node.text == "Only node" and node.clickable and node.index_path == (0,)
    assert tree.attrs == {} and tree.rotation == 0
    assert tree.screen_size == (1080, 200)


def test_empty_hierarchy_is_an_empty_tree():
    tree = parse_ui('<?xml version="1.0"?><hierarchy rotation="3"/>')
    assert len(tree) == 0 and tree.rotation == 3 and tree.screen_size is None


def test_junk_around_the_xml_is_ignored():
    tree = parse_ui(load("junk_around.txt"))
    assert len(tree) == 2
    assert tree.nodes[1].text == "Phone"
    as_str = parse_ui(load("junk_around.txt").decode())
    assert [n.text for n in as_str.nodes] == [n.text for n in tree.nodes]


def test_leading_dump_message_and_bom():
    xml = load("single_node.xml").decode()
    tree = parse_ui("UI hierchary dumped to: /sdcard/window_dump.xml\n" + xml)
    assert tree.nodes[0].text == "Only node"
    tree = parse_ui(b"\xef\xbb\xbf" + load("naf_quotes_entities.xml"))
    assert len(tree) == 6


def test_nested_webviews():
    tree = parse_ui(load("webview_nested.xml"))
    webviews = [n for n in tree.nodes if n.class_name == "android.webkit.WebView"]
    assert len(webviews) == 3
    deep = by_text(tree, "Deep link")
    assert deep.depth == 7 and deep.clickable
    assert sum(1 for a in tree.ancestors(deep) if a.class_name == "android.webkit.WebView") == 3
    email = next(n for n in tree.nodes if n.resource_id == "email")
    assert email.editable and email.text == ""


def test_non_ascii_text_and_desc():
    tree = parse_ui(load("non_ascii.xml"))
    assert tree.nodes[1].text == "مرحبا بالعالم"
    assert tree.nodes[2].text == "Привет 👋🏽 café"
    assert tree.nodes[3].content_desc == "发送 👨‍👩‍👧"


def test_str_and_bytes_and_other_encodings_agree():
    raw = load("non_ascii.xml")
    a = parse_ui(raw)
    b = parse_ui(raw.decode("utf-8"))
    utf16 = raw.decode("utf-8").replace("encoding='UTF-8'", "encoding='UTF-16'").encode("utf-16")
    c = parse_ui(utf16)
    texts = [n.text for n in a.nodes]
    assert texts == [n.text for n in b.nodes] == [n.text for n in c.nodes]
    # A str whose declaration names another encoding is still read (the text is already decoded).
    d = parse_ui(raw.decode("utf-8").replace("encoding='UTF-8'", "encoding='ISO-8859-1'"))
    assert [n.text for n in d.nodes] == texts


def test_multibyte_encodings_expat_lacks_are_decoded():
    raw = load("non_ascii.xml").decode("utf-8")
    gbk = (
        raw.replace("encoding='UTF-8'", "encoding='GBK'")
        .replace("مرحبا بالعالم", "你好")
        .replace("Привет 👋🏽 café", "世界")
    )
    gbk = gbk.replace("发送 👨‍👩‍👧", "发送")
    tree = parse_ui(gbk.encode("gbk"))
    assert [n.text for n in tree.nodes[1:3]] == ["你好", "世界"] and tree.nodes[3].content_desc == "发送"
    with pytest.raises(XMLParseError, match="unknown encoding 'x-nope'"):
        parse_ui(raw.replace("encoding='UTF-8'", "encoding='x-nope'").encode())
    with pytest.raises(XMLParseError, match="not valid GBK"):
        parse_ui(gbk.encode("gbk") + b"\xff\xff")


def test_control_characters_are_dropped_not_fatal():
    xml = load("single_node.xml").decode().replace("Only node", "Only\x07 node&#1;")
    tree = parse_ui(xml)
    assert tree.nodes[0].text == "Only node"


def test_parse_bounds_helper():
    assert parse_bounds("[1,2][3,4]") == (1, 2, 3, 4)
    assert parse_bounds(" [ -5 , 0 ] [ 10 , 20 ] ") == (-5, 0, 10, 20)
    assert parse_bounds("") is None
    assert parse_bounds(None) is None
    assert parse_bounds("[1,2]") is None


def test_uncommon_bounds_shapes_fall_back_per_node():
    xml = (
        '<hierarchy><node bounds="[0,0][100,100]"><node bounds=" [1, 2][30,40] "/>'
        '<node bounds="nonsense"/><node/></node></hierarchy>'
    )
    tree = parse_ui(xml)
    assert [n.bounds for n in tree.nodes] == [(0, 0, 100, 100), (1, 2, 30, 40), None, None]


@pytest.mark.realdata
def test_realdata_launcher_dump(realdata):
    tree = parse_ui((realdata / "android_xml" / "22_LlamaTouch__UICheckpoint__page.xml").read_bytes())
    assert len(tree) == 13
    assert tree.screen_size == (720, 1280)
    assert {n.package for n in tree.nodes} == {"com.huawei.android.launcher"}
    naf = [n for n in tree.nodes if n.naf]
    assert [n.resource_id.rpartition("/")[2] for n in naf] == ["dock_divider", "bg_dock"]
    dial = next(n for n in tree.nodes if n.content_desc == "拨号")
    assert dial.bounds == (16, 1110, 176, 1280) and dial.clickable and dial.long_clickable
    assert dial.index_path == (0, 2, 0)


@pytest.mark.realdata
def test_realdata_douyin_dump(realdata):
    tree = parse_ui(
        (realdata / "android_xml" / "43_zhuxuezhe16__DouYin-Helper__uidump.xml").read_text("utf-8")
    )
    assert len(tree) == 102
    assert tree.screen_size == (1080, 2032)
    follows = [n for n in tree.nodes if n.text == "关注"]
    assert len(follows) == 8 and all(n.clickable for n in follows)
    tab = next(n for n in tree.nodes if n.text == "关注 4981")
    assert tab.selected and tab.resource_id == "android:id/text1"
    nav = tree.nodes[-1]
    assert nav.resource_id == "android:id/navigationBarBackground" and nav.bounds == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "xml, line, column, words",
    [
        ('<hierarchy>\n  <node text="a">\n</hierarchy>', 3, None, "mismatch"),
        ('<hierarchy>\n<node text="a" bounds=[0,0][1,1]/>\n</hierarchy>', 2, 23, "expected"),
        ("<hierarchy><node text='a &nbsp; b'/></hierarchy>", 1, None, "entity"),
        ('<hierarchy><node text="unterminated', 1, None, ""),
        ('<hierarchy><node a="1" a="2"/></hierarchy>', 1, None, "redefined"),
    ],
)
def test_malformed_xml_raises_with_line_and_column(xml, line, column, words):
    with pytest.raises(XMLParseError) as info:
        parse_ui(xml)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.line == line
    if column is not None:
        assert err.column == column
    assert err.column is not None and err.column >= 1
    msg = str(err)
    assert msg.startswith("malformed UI hierarchy XML: ")
    assert f"line {line}, column" in msg
    assert words.lower() in msg.lower()


def test_error_line_counts_the_junk_cut_before_the_xml():
    with pytest.raises(XMLParseError) as info:
        parse_ui("warning one\nwarning two\n<hierarchy>\n<node></hierarchy>")
    assert info.value.line == 4


def test_no_xml_at_all():
    with pytest.raises(XMLParseError, match="no XML element found"):
        parse_ui("error: device offline")
    with pytest.raises(XMLParseError, match="empty input"):
        parse_ui("")


def test_entity_declarations_are_refused():
    bomb = '<?xml version="1.0"?><!DOCTYPE h [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><hierarchy><node text="&b;"/></hierarchy>'
    with pytest.raises(XMLParseError, match="entity declarations"):
        parse_ui(bomb)


def test_wrong_input_type():
    with pytest.raises(TypeError, match="str or bytes"):
        parse_ui(123)  # type: ignore[arg-type]
