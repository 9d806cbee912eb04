"""The speed-ups (env's recent-screen cache, sim dump flag cache, id digest memo) change no result."""

from __future__ import annotations

import gymnasium as gym

import android_gym  # noqa: F401  (registers the env ids)
from android_gym.actions import OpenApp, PressBack, Scroll
from android_gym.sim import SimDevice
from android_gym.sim.hierarchy import _BOOL, _FLAG_NAMES, to_xml
from android_gym.xml import compress_xml, parse_ui


def test_env_reuses_compression_only_for_identical_dumps():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=100)
    env.reset(seed=0)
    inner = env.unwrapped
    seen: dict[str, object] = {}
    reused = 0
    for action in [OpenApp("Settings"), Scroll("down"), Scroll("up"), Scroll("down"), Scroll("up"),
                   PressBack(), OpenApp("Settings"), PressBack()]:  # fmt: skip
        obs, _, _, _, info = env.step(action)
        fresh = compress_xml(info["xml"], screen_size=inner.device.screen_size)
        # Every observation is exactly what compressing this step's dump gives.
        assert obs["ui"] == fresh.text
        assert [e.to_dict() for e in obs["elements"]] == [e.to_dict() for e in fresh.elements]
        if info["xml"] in seen:
            assert inner._ui is seen[info["xml"]]  # a revisited screen is not compressed again
            reused += 1
        seen[info["xml"]] = inner._ui
    assert reused >= 2  # scrolling down and up again revisits screens
    env.close()


def test_env_cache_keys_on_style():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", ui_style="mobilerl")
    obs, info = env.reset(seed=0)
    assert obs["ui"] == compress_xml(info["xml"], style="mobilerl").text
    env.close()


def test_sim_dump_flags_match_the_views():
    device = SimDevice()
    device.execute(OpenApp("Settings"))
    frame = device.phone.frame
    dumped = [e for e in frame.entries if not e.hidden]  # layout-only views are laid out but not dumped
    assert len(dumped) < len(frame.entries)
    tree = parse_ui(to_xml(frame.entries))
    assert len(tree) == len(dumped)
    for node, entry in zip(tree.nodes, dumped):
        v = entry.view
        for name in _FLAG_NAMES:
            assert node.attrs[name] == _BOOL[getattr(v, name.replace("-", "_"))]


def test_ids_stable_across_repeated_compression():
    device = SimDevice()
    device.execute(OpenApp("Settings"))
    xml = device.observe().xml
    first = compress_xml(xml)
    again = compress_xml(xml)  # the digest memo answers this time
    assert first.ids == again.ids and first.text == again.text
