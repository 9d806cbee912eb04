"""The fast readers `parse_ui` uses for plain dumps (the C reader when built, the quote-splitting one)
give exactly the tree the expat reader gives; the reference is the same call with them switched off."""

from __future__ import annotations

import pytest

from android_gym.actions import OpenApp, Scroll, Type
from android_gym.sim import SimDevice
from android_gym.xml import synthetic_dump
from android_gym.xml.tree import _fast_read

from .sim_ui import tap_on
from .xml_readers import assert_readers_agree

HEAD = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"


def node(text: str = "", bounds: str = "[0,0][100,100]", close: str = " />", **extra: str) -> str:
    more = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in extra.items())
    return (f'<node index="0" text="{text}" resource-id="" class="android.widget.TextView" package="p" '
            f'content-desc="" clickable="true" bounds="{bounds}"{more}{close}')  # fmt: skip


def test_fast_reader_takes_plain_dumps():
    device = SimDevice()
    xml = device.observe().xml
    assert _fast_read(xml) is not None
    assert _fast_read(synthetic_dump(200, seed=3)) is not None


def test_fast_reader_matches_expat_on_sim_screens():
    device = SimDevice()
    device.execute(OpenApp("Settings"))
    screens = [device.observe().xml]
    for action in (Scroll("down"), Scroll("down"), Scroll("up")):
        device.execute(action)
        screens.append(device.observe().xml)
    device.execute(OpenApp("Contacts"))
    screens.append(device.observe().xml)
    for xml in screens:
        assert_readers_agree(xml)


@pytest.mark.parametrize("seed", range(6))
def test_fast_reader_matches_expat_on_generated_dumps(seed):
    assert_readers_agree(synthetic_dump(60 + 40 * seed, seed=seed))


@pytest.mark.parametrize(
    "body",
    [
        node("a &amp; b &lt;c&gt; &quot;q&quot; &apos;s&apos;"),
        node("line&#10;break&#x9;tab &#x1F600; &#233;"),
        node("literal\nnewline\tand tab"),
        node("caf\u00e9 \u4e2d\u6587 \U0001f600"),
        node("bad &#1; ref"),
        node("bare & amp"),
        node("&unknown;"),
        node("ctrl \x01 char"),
        node("nbsp\u00a0"),
        node("x", close=">") + node("child") + "</node>",
        node("x", close=">") + node("child") + "</node></node>",
        node("x", close=">") + node("child"),
        node("x") + node("y", clickable="false"),
        node("x") + node("y", hint="h"),
        '<node index="0" text="x" text="y" />',
        node("x", close="/>") + "\n  " + node("y", close="  />"),
        node("x") + "junk text" + node("y"),
        node("x") + "<!-- comment -->" + node("y"),
        node("x") + "<other />",
        node("x", close=">") + "</nodex>",
        node("a > b"),
        node("x", bounds="[0,0][1080,2400]"),
        "",
    ],
)
def test_fast_reader_matches_expat_on_edge_cases(body):
    xml = f"{HEAD}{body}</hierarchy>"
    assert_readers_agree(xml)


@pytest.mark.parametrize(
    "xml",
    [
        f"  \n{HEAD}{node('x')}</hierarchy>\n",
        f"{HEAD}{node('x')}</hierarchy>\nUI hierchary dumped to: /dev/tty",
        f"<hierarchy rotation=\"1\" width=\"5\">{node('x')}</hierarchy>",
        f"<hierarchy rotation=\"1\"\n>{node('x')}</hierarchy>",
        f"<hierarchy a=\"1\" a=\"2\">{node('x')}</hierarchy>",
        f"<hierarchy a=\"&amp;\">{node('x')}</hierarchy>",
        f"{node('x')}",
        f"{HEAD}{node('x')}</hierarchy></hierarchy>",
        f"{HEAD}{node('x')}",
    ],
)
def test_fast_reader_matches_expat_around_the_hierarchy(xml):
    assert_readers_agree(xml)


def test_fast_reader_matches_expat_after_typing_special_text():
    device = SimDevice()
    device.execute(OpenApp("Settings"))
    tap_on(device.phone, "Search settings")
    device.execute(Type("a&b <c> \"d\" 'e'"))
    xml = device.observe().xml
    assert "&amp;" in xml and "&lt;" in xml
    assert_readers_agree(xml)
