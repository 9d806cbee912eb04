"""The optional C reader (`android_gym.xml._speedups`): what it takes, what it leaves to expat, and that
every tree it builds is the one expat builds.

Skipped with the reason when the package was installed without it (no C compiler); ``tools/test.sh`` sets
``ANDROID_GYM_REQUIRE_SPEEDUPS=1`` so that our own runs fail instead of skipping.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from android_gym.actions import OpenApp, Scroll
from android_gym.sim import SimDevice
from android_gym.xml import compress_xml, parse_ui, synthetic_dump
from android_gym.xml import tree as tree_module

from .xml_readers import NATIVE, assert_readers_agree

HEAD = '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
ATTRS = 'index="0" text="{t}" class="android.widget.TextView" clickable="true" bounds="[0,0][100,100]"'


def test_native_reader_is_built_where_required():
    """Our runs (tools/test.sh, CI) build the extension; a silent fallback there would hide its bugs."""
    if os.environ.get("ANDROID_GYM_REQUIRE_SPEEDUPS", "") not in ("", "0"):
        assert NATIVE, "android_gym.xml._speedups was not built (is a C compiler installed?)"
    assert tree_module.NATIVE_READER is NATIVE


native_only = pytest.mark.skipif(not NATIVE, reason="android-gym was installed without its optional C reader")


def node(text: str = "x", close: str = " />", attrs: str = ATTRS) -> str:
    return f"<node {attrs.format(t=text)}{close}"


def read(xml: str):
    return tree_module._speedups.read_dump(xml, tree_module.FIELDS)


@native_only
@pytest.mark.parametrize(
    "body",
    [
        node("x") + node("y"),
        node("x", close=">") + node("y") + "</node>",
        node("x", close="\n\t />") + "\n  " + node("y", close="/>") + "\n",
        node("a &amp; b &lt;c&gt; &quot;q&quot; &apos;s&apos; &#233; &#x1F600;") + node("line&#10;two\tthree\nfour"),
        node("a > b") + node("caf\u00e9 \u4e2d\u6587 \U0001f600"),
        # what the split reader leaves to expat but this one takes: other layouts, quotes and spacing
        node("x") + node("y", attrs=ATTRS + ' hint="h"'),
        node("x") + node("y", attrs=ATTRS.replace(' clickable="true"', "")),
        node("x") + node("y", attrs='text="{t}" index="0" class="c" clickable="true" bounds="[0,0][1,1]"'),
        node("x", attrs=ATTRS.replace(' text="{t}"', " text='{t}'")),
        node("x", attrs=ATTRS.replace(' text="{t}"', " text = \"{t}\"")),
        node("it's", attrs=ATTRS.replace(' text="{t}"', ' text="{t}" desc=\'say "hi"\'')),
        "<node>" + node("x") + "</node>",
        "<node />" + node("x"),
        node("x", close=">") + "</node >",
        node("x", close=">") + "</node\n>",
        node("x", attrs=ATTRS.replace("[0,0][100,100]", "[ 1 , 2 ] [3,4]")),
        node("x", attrs=ATTRS.replace("[0,0][100,100]", "junk[1,2][3,4]tail")),
        node("x", attrs=ATTRS.replace("[0,0][100,100]", "[\u0661,2][3,4]")),
        node("x", attrs=ATTRS.replace("[0,0][100,100]", "[99999999999,0][1,1]")),
        node("x", attrs=ATTRS.replace("[0,0][100,100]", "[1,2]")),
        node("x", attrs=ATTRS.replace("[0,0][100,100]", "")),
        node("x", attrs=ATTRS.replace("[0,0][100,100]", "[1,2]&#10;[3,4]")),
    ],
)
def test_plain_dumps_are_read_natively_and_match_expat(body):
    xml = f"{HEAD}{body}</hierarchy>"
    assert read(xml) is not None
    assert_readers_agree(xml)


@native_only
@pytest.mark.parametrize(
    "xml",
    [
        # values it leaves to expat
        HEAD + node("a<b") + "</hierarchy>",
        HEAD + node("ctrl \x01 char") + "</hierarchy>",
        HEAD + node("cr \r here") + "</hierarchy>",
        HEAD + node("bad \ufffe") + "</hierarchy>",
        HEAD + node("bad &#1; ref") + "</hierarchy>",
        HEAD + node("bad &#xD800; ref") + "</hierarchy>",
        HEAD + node("bare & amp") + "</hierarchy>",
        HEAD + node("&unknown;") + "</hierarchy>",
        HEAD + node("&#X41;") + "</hierarchy>",
        HEAD + node("&#;") + "</hierarchy>",
        HEAD + node("lone \ud800 surrogate") + "</hierarchy>",
        # markup it leaves to expat
        HEAD + node("x", attrs=ATTRS + ' text="again"') + "</hierarchy>",
        HEAD + node("x") + "junk" + node("y") + "</hierarchy>",
        HEAD + node("x") + "<!-- c -->" + node("y") + "</hierarchy>",
        HEAD + node("x") + '<android.widget.Button text="y" />' + "</hierarchy>",
        HEAD + node("x", close=">") + "</hierarchy>",
        HEAD + node("x") + "</node></hierarchy>",
        HEAD + node("x", close="/ >") + "</hierarchy>",
        HEAD + node("x", attrs=ATTRS.replace(' text="', 'text="')) + "</hierarchy>",
        HEAD + "</hierarchy>",
        '<hierarchy a="1" a="2">' + node("x") + "</hierarchy>",
        HEAD + node("x") + "</hierarchy>\nUI hierchary dumped to: /dev/tty",
        node("x"),
        "\ufeff" + HEAD + node("x") + "</hierarchy>",
    ],
)
def test_odd_dumps_are_left_to_expat_with_the_same_outcome(xml):
    assert read(xml) is None
    assert_readers_agree(xml)


@native_only
def test_native_reader_matches_expat_on_sim_screens_and_generated_dumps():
    device = SimDevice()
    screens = [device.observe().xml]
    for app in ("Settings", "Contacts", "Clock", "Markor", "Calendar"):
        device.execute(OpenApp(app))
        screens.append(device.observe().xml)
        device.execute(Scroll("down"))
        screens.append(device.observe().xml)
    screens += [synthetic_dump(n, seed=n) for n in (30, 150, 500)]
    screens.append(synthetic_dump(120, seed=2, dialog=True, keyboard=True, extra_attrs=True))
    for xml in screens:
        assert read(xml) is not None
        assert_readers_agree(xml)
        assert_readers_agree(xml.encode("utf-8"))  # bytes take the fast readers too


@native_only
@pytest.mark.realdata
def test_native_reader_matches_expat_on_real_dumps(realdata):
    for path in sorted((realdata / "android_xml").glob("*.xml")):
        xml = path.read_text("utf-8")
        assert read(xml) is not None, path.name
        assert_readers_agree(xml)
        assert_readers_agree(path.read_bytes())
        assert compress_xml(xml).text  # and the whole pipeline runs on it


_DAMAGE = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.sampled_from(["", '"', "'", "<", ">", "/", " ", "\t", "\n", "\r", "=", "&", "&#", ";", "x", "\x01", "]"]),
    ),
    min_size=1,
    max_size=4,
)


@native_only
@settings(max_examples=300, deadline=None)
@given(edits=_DAMAGE, seed=st.integers(0, 3))
def test_damaged_dumps_give_expats_outcome(edits, seed):
    """Random small edits (quotes, markup characters, references, CR) anywhere in a dump."""
    xml = synthetic_dump(30, seed=seed, extra_attrs=seed % 2 == 1)
    start, stop = xml.index("<hierarchy"), len(xml)
    for pos, text in edits:
        p = start + pos % (stop - start)
        xml = xml[:p] + text + xml[p + 1 :]
    assert_readers_agree(xml)
    assert_readers_agree(xml.encode("utf-8", "surrogatepass"))


@native_only
@pytest.mark.parametrize(
    "head",
    [
        b'<?xml version="1.0" encoding="UTF-8"?>',
        b"<?xml version='1.0' encoding='utf8' standalone='yes' ?>",
        b"",
        b'<?xml version="1.0" encoding="ISO-8859-1"?>',
        b'<?xml version="1.0" encoding="GBK"?>',
        b"\xef\xbb\xbf",
    ],
)
def test_bytes_in_any_declared_encoding_read_as_expat_reads_them(head):
    body = '<hierarchy rotation="0">' + node("caf\u00e9 \u4e2d") + "</hierarchy>"
    for encoding in ("utf-8", "latin-1", "gbk"):
        try:
            data = head + body.encode(encoding)
        except UnicodeEncodeError:
            continue
        assert_readers_agree(data)


def test_utf8_alias_in_the_declaration_reads_multibyte_text():
    """expat alone rejected ``encoding='utf8'`` dumps with non-ASCII text (found by comparing the readers)."""
    data = b"<?xml version='1.0' encoding='utf8' ?>" + (
        '<hierarchy rotation="0">' + node("caf\u00e9 \u4e2d") + "</hierarchy>"
    ).encode("utf-8")
    reference = assert_readers_agree(data)
    assert reference[0][0][2] == "caf\u00e9 \u4e2d"


@native_only
def test_native_reader_keeps_no_memory():
    """Thousands of reads (accepted and refused) leave the number of live allocations where it was."""
    good = synthetic_dump(80, seed=1)
    bad = good.replace("</hierarchy>", "<!-- x --></hierarchy>")
    mixed = good.replace(' password="false"', "", 3)
    for _ in range(50):  # warm caches and interned strings first
        read(good), read(bad), read(mixed)
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(1000):
        read(good), read(bad), read(mixed)
    gc.collect()
    assert sys.getallocatedblocks() - before < 200


@native_only
def test_native_reader_leaves_the_dump_string_as_it_was():
    """Reading non-ASCII text must not attach a UTF-8 copy to the caller's string (rollouts keep dumps)."""
    xml = synthetic_dump(60, seed=2).replace('text=""', 'text="caf\u00e9 \u4e2d\u6587"')
    size = sys.getsizeof(xml)
    assert read(xml) is not None
    assert sys.getsizeof(xml) == size
    assert_readers_agree(xml)


@native_only
def test_native_reader_restores_the_garbage_collector():
    assert gc.isenabled()
    read(synthetic_dump(30, seed=0))
    assert gc.isenabled()
    gc.disable()
    try:
        read(synthetic_dump(30, seed=0))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_environment_switch_turns_the_native_reader_off():
    code = "from android_gym.xml import tree; print(tree.NATIVE_READER, tree._speedups is None)"
    env = {**os.environ, "ANDROID_GYM_NO_SPEEDUPS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    # and the pure-Python readers give the same compressed screen
    xml = synthetic_dump(120, seed=5)
    code = "from android_gym.xml import compress_xml, synthetic_dump; print(compress_xml(synthetic_dump(120, seed=5)).text)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.rstrip("\n") == compress_xml(xml).text


@native_only
def test_native_reader_rejects_bad_arguments_clearly():
    with pytest.raises(TypeError):
        tree_module._speedups.read_dump(b"<hierarchy/>", tree_module.FIELDS)
    with pytest.raises(TypeError, match="fields must be strings"):
        tree_module._speedups.read_dump("<hierarchy/>", (1, 2))
    assert parse_ui(synthetic_dump(30, seed=0)).screen_size is not None
