"""Element ids: short, unique, deterministic, and stable when other parts of the screen change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from android_gym.xml import CompressedUI, compress_xml, synthetic_dump

DATA = Path(__file__).parent / "data" / "xml"
ID_RE = re.compile(r"n[0-9a-f]{4,}")


def ids_by_path(ui: CompressedUI) -> dict[tuple[int, ...], str]:
    return {e.index_path: e.id for e in ui.elements}


def test_ids_are_short_unique_and_deterministic():
    xml = synthetic_dump(500, seed=3)
    a, b = compress_xml(xml), compress_xml(xml.encode())
    assert a.ids == b.ids
    assert all(ID_RE.fullmatch(i) for i in a.ids)
    assert len(set(a.ids)) == len(a.ids)
    assert sum(len(i) == 5 for i in a.ids) >= len(a.ids) - 3, "almost all ids are n + four hex digits"


def test_ids_do_not_depend_on_style_or_offscreen_mode():
    xml = (DATA / "degenerate.xml").read_bytes()
    base = {e.label: e.id for e in compress_xml(xml).elements}
    kept = {e.label: e.id for e in compress_xml(xml, keep_offscreen=True, style="json").elements}
    assert all(kept[k] == v for k, v in base.items())


def changed_paths(xml: str, element, new_text: str) -> list[tuple[int, ...]]:
    """Index paths whose id changes when ``element``'s text is replaced (the right occurrence of it)."""
    ui = compress_xml(xml)
    nth = [e.index_path for e in ui.elements if e.text == element.text].index(element.index_path)
    pieces = xml.split(f'text="{element.text}"')
    changed = (
        f'text="{element.text}"'.join(pieces[: nth + 1])
        + f'text="{new_text}"'
        + f'text="{element.text}"'.join(pieces[nth + 1 :])
    )
    assert compress_xml(changed).elements[ui.ids.index(element.id)].text == new_text
    old, new = ids_by_path(ui), ids_by_path(compress_xml(changed))
    assert old.keys() == new.keys()
    return [p for p in old if old[p] != new[p]]


def test_changing_one_text_keeps_every_other_id():
    xml = synthetic_dump(300, seed=1)
    ui = compress_xml(xml)
    title = ui.find(text="Settings", exact=True)[0]
    assert changed_paths(xml, title, "Preferences") == [title.index_path]
    # Summaries repeated in other rows (the hard case for duplicate disambiguation): only that one changes.
    summaries = ui.find(resource_id="summary")
    repeated = [e for e in summaries if sum(x.text == e.text for x in summaries) > 1][:6]
    assert len(repeated) >= 4, "the dump should repeat some summaries for this test to mean something"
    for summary in repeated:
        assert changed_paths(xml, summary, "changed summary") == [summary.index_path], summary.text


def test_renaming_a_row_renames_only_that_row():
    xml = synthetic_dump(300, seed=1)
    ui = compress_xml(xml)
    title = ui.find(resource_id="title")[5]
    row = ui.element(title.parent_id)
    changed = changed_paths(xml, title, "Renamed row")
    assert title.index_path in changed
    assert all(p[: len(row.index_path)] == row.index_path for p in changed), "only the row's own elements"


def test_ids_survive_a_scroll_and_rows_moving():
    """Remove the first list row and move the others up (a scroll): every remaining element keeps
    its id, including the repeated row containers and 'Delete' buttons, named after their row."""
    xml = (DATA / "list_no_dialog.xml").read_text()
    before = compress_xml(xml)
    first_row = re.search(
        r'\n\s*<node index="0" text="" resource-id="com.example.files:id/row".*?</node>', xml, re.S
    )
    assert first_row is not None
    shifted = re.sub(r"\[(\d+),(\d+)\]\[(\d+),(\d+)\]", _up, xml.replace(first_row.group(0), ""))
    after = compress_xml(shifted)
    assert after.find(text="Music")[0].bounds[1] == 240
    old = {describe(before, e): e.id for e in before.elements}
    new = {describe(after, e): e.id for e in after.elements}
    assert len(old) == len(before) and len(new) == len(after) == len(before) - 3
    for key, eid in new.items():
        assert old[key] == eid, key


def describe(ui: CompressedUI, e) -> tuple[str, str, str]:
    """(class, label, name of the list row holding it) - what a person would call the element."""
    row, cur = "", e
    while cur.parent_id is not None:
        parent = ui.element(cur.parent_id)
        if parent.scrollable:
            row = next(
                x.label
                for x in ui.elements
                if x.label and x.index_path[: len(cur.index_path)] == cur.index_path
            )
            break
        cur = parent
    return (e.short_class, e.label, row)


def _up(m: re.Match) -> str:
    x1, y1, x2, y2 = map(int, m.groups())
    if y1 >= 400 and y2 <= 2200:
        y1, y2 = y1 - 200, y2 - 200
    return f"[{x1},{y1}][{x2},{y2}]"


def test_typing_into_a_field_keeps_its_id():
    xml = (DATA / "keyboard.xml").read_text()
    before = compress_xml(xml)
    field = before.find(editable=True)[0]
    typed = xml.replace(
        'text="" resource-id="com.example.chat:id/entry"',
        'text="hello" resource-id="com.example.chat:id/entry"',
    )
    after = compress_xml(typed)
    assert after.find(editable=True)[0].text == "hello"
    assert after.find(editable=True)[0].id == field.id
    assert after.ids == before.ids


def test_toggling_a_switch_keeps_its_id():
    xml = (DATA / "appium.xml").read_text()
    toggled = xml.replace(
        'text="ON" resource-id="android:id/switch_widget" checkable="true" checked="true"',
        'text="OFF" resource-id="android:id/switch_widget" checkable="true" checked="false"',
    )
    assert toggled != xml
    assert compress_xml(xml).ids == compress_xml(toggled).ids


def test_moving_an_element_keeps_its_id():
    xml = (DATA / "appium.xml").read_text()
    moved = xml.replace("[880,270][1020,370]", "[860,280][1000,380]")
    assert compress_xml(xml).ids == compress_xml(moved).ids


def test_identical_rows_get_distinct_stable_ids():
    row = (
        '<node class="android.widget.Button" text="Add" clickable="true" resource-id="com.x:id/add" '
        'package="com.x" bounds="[0,{y1}][200,{y2}]"/>'
    )
    rows = "".join(row.format(y1=100 * k, y2=100 * k + 90) for k in range(6))
    xml = f'<hierarchy><node class="android.widget.LinearLayout" bounds="[0,0][1080,2400]">{rows}</node></hierarchy>'
    ui = compress_xml(xml)
    assert len(set(ui.ids)) == 6
    assert compress_xml(xml).ids == ui.ids


def test_many_distinct_elements_resolve_id_collisions():
    buttons = "".join(
        f'<node class="android.widget.Button" text="item {k}" clickable="true" bounds="[0,{k}][100,{k + 1}]"/>'
        for k in range(1500)
    )
    xml = f'<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">{buttons}</node></hierarchy>'
    ui = compress_xml(xml)
    assert len(ui) == 1500 and len(set(ui.ids)) == 1500
    assert any(len(i) > 5 for i in ui.ids), "1500 ids in 65536 four-digit slots must collide somewhere"
    assert all(ID_RE.fullmatch(i) for i in ui.ids)


@pytest.mark.realdata
def test_realdata_douyin_ids_stable_when_the_title_changes(realdata):
    raw = (realdata / "android_xml" / "43_zhuxuezhe16__DouYin-Helper__uidump.xml").read_text("utf-8")
    before = compress_xml(raw)
    after = compress_xml(raw.replace('text="老高电商"', 'text="另一个用户"'))
    old, new = ids_by_path(before), ids_by_path(after)
    changed = [p for p in old if old[p] != new[p]]
    assert len(changed) == 1
    assert before.element(old[changed[0]]).text == "老高电商"
    follows = before.find(text="关注", exact=True)
    assert len({e.id for e in follows}) == 8
