"""The quote-splitting fast reader: every shape it does not handle falls back to expat with the same outcome.

Each case checks that `_fast_read` refuses (returns None) or accepts as expected, and that `parse_ui` gives
the same tree, or the same `XMLParseError`, with each reader (the C one too, when built) as with expat alone.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from android_gym.xml import parse_bounds, synthetic_dump
from android_gym.xml.tree import _fast_read, _parse_all_bounds

from .xml_readers import assert_readers_agree

HEAD = '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
ATTRS = 'index="0" text="{t}" class="android.widget.TextView" clickable="true" bounds="[0,0][100,100]"'


def node(text: str = "x", close: str = " />", attrs: str = ATTRS) -> str:
    return f"<node {attrs.format(t=text)}{close}"


def check(body: str, *, accepted: bool) -> None:
    xml = f"{HEAD}{body}</hierarchy>"
    assert (_fast_read(xml) is not None) == accepted
    assert_readers_agree(xml)


@pytest.mark.parametrize(
    "body",
    [
        node("x") + node("y"),
        node("x", close=">") + node("y") + "</node>",
        node("x", close=">") + node("y", close="></node>") + "</node>",
        node("x", close="\n\t />") + "\n  " + node("y", close="/>") + "\n",
        node("x", close=">") + "\n  " + node("y", close=">") + node("z") + "\n</node>\n  </node>",
        node("a &amp; b &lt;c&gt; &#233;") + node("line&#10;two\tthree\nfour"),
        node("a > b") + node("caf\u00e9 \u4e2d\u6587 \U0001f600"),
    ],
)
def test_plain_shapes_are_read_fast_and_match_expat(body):
    check(body, accepted=True)


@pytest.mark.parametrize(
    "body",
    [
        # values the fast path does not take
        node("a<b"),
        node("ctrl \x01 char") + node("y"),
        node("vt \x0b") + node("y"),
        node("bad \ufffe"),
        node("bad \uffff"),
        node("lone \ud800 surrogate"),
        node("bad &#1; ref"),
        node("bare & amp"),
        node("&unknown;"),
        # attribute layouts that differ between nodes
        node("x") + node("y", attrs=ATTRS + ' hint="h"'),
        node("x") + node("y", attrs=ATTRS.replace(' clickable="true"', "")),
        node("x") + node("y", attrs=ATTRS.replace("clickable", "focusable")),
        node("x") + node("y", attrs='text="{t}" index="0" class="c" clickable="true" bounds="[0,0][1,1]"'),
        node("x") + node("y", attrs=ATTRS.replace(' text="', '  text="')),
        node("x") + node("y", attrs=ATTRS.replace(' text="{t}"', " text='{t}'")),
        node("x", attrs=ATTRS.replace(' text="', '\ttext="')),
        node("x", attrs=ATTRS + ' text="again"'),
        node("x", attrs='1bad="0" text="{t}"'),
        "<node />" + node("x"),
        "<node>" + node("x") + "</node>",
        '<other text="x" />',
        node("x") + '<nodex text="y" />',
        # stray text, comments and other markup between tags
        node("x") + "junk" + node("y"),
        node("x", close=">") + "text inside" + node("y") + "</node>",
        node("x", close=">") + node("y") + "tail</node>",
        node("x") + "<!-- comment -->" + node("y"),
        node("x") + "<?pi data?>" + node("y"),
        node("x") + '"' + node("y"),
        node("x") + 'a="b"' + node("y"),
        # unbalanced or odd tags
        node("x") + "</node>",
        node("x", close=">"),
        node("x", close=">") + node("y", close=">") + "</node>",
        node("x", close=">") + "</node >",
        node("x", close=">") + "</node\n>",
        node("x", close="/ >"),
        node("x", close=" / >"),
        node("x", close=""),
        node("x", close='"'),
        node("x") + node("y", close=""),
        node("x") + "<node ",
        node("x") + '<node text="y" index="0"',
        "",
    ],
)
def test_odd_shapes_fall_back_to_expat_with_the_same_outcome(body):
    check(body, accepted=False)


def test_carriage_return_in_a_value_is_refused():
    xml = f"{HEAD}{node('a' + chr(13) + 'b')}</hierarchy>"
    assert _fast_read(xml) is None
    assert_readers_agree(xml)


_MUTATIONS = st.lists(
    st.tuples(
        st.integers(0, 10_000), st.sampled_from(["", '"', "<", ">", "/", " ", "\n", "=", "&", "x", "\x01"])
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(edits=_MUTATIONS, seed=st.integers(0, 3))
def test_damaged_dumps_give_the_same_outcome_either_way(edits, seed):
    """Random one-character replacements in a generated dump: no fast reader ever disagrees with expat."""
    xml = synthetic_dump(30, seed=seed)
    start, stop = xml.index("<node"), xml.rindex("</hierarchy>")
    for pos, ch in edits:
        p = start + pos % (stop - start)
        xml = xml[:p] + ch + xml[p + 1 :]
    assert_readers_agree(xml)


@pytest.mark.parametrize(
    "values",
    [
        ["[0,0][10,10]", "[-5,3][007,8]", "[1,2][3,4]"],
        ["[0,0][10,10]", "", "[1,2][3,4]"],
        ["[0,0]", "[1,1][2,2][3,3]"],
        ["[0,0][1,1][2,2]", "[3,3]"],
        ["[ 1,2][3,4]", "[1,2] [3,4]", "[1,-][3,4]", "[1,2-3][4,5]", "[,1][2,3]"],
        ["[\u0661,2][3,4]", "[1_0,2][3,4]", "[+1,2][3,4]", "[1,2]|[3,4]", "[99999999999,0][1,1]"],
    ],
)
def test_bulk_bounds_match_one_by_one(values):
    assert _parse_all_bounds(values) == [parse_bounds(v) for v in values]
