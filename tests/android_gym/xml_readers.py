"""Run `parse_ui` with each of its readers, so tests can check that they all build the same tree.

``native`` is the optional C reader (only when it was built), ``split`` the pure-Python quote-splitting
reader, ``expat`` the general reader every other one falls back to. Each outcome is the tree's columns
and nodes, or the error message.
"""

from __future__ import annotations

import pytest

from android_gym.xml import XMLParseError, parse_ui
from android_gym.xml import tree as tree_module

NATIVE = tree_module._speedups is not None
READERS = ("native", "split", "expat") if NATIVE else ("split", "expat")


def outcome(xml: str | bytes, reader: str) -> tuple:
    """``parse_ui(xml)`` with only ``reader`` (and expat behind it) switched on."""
    with pytest.MonkeyPatch.context() as mp:
        if reader != "native":
            mp.setattr(tree_module, "_speedups", None)
        if reader == "expat":
            mp.setattr(tree_module, "_fast_read", lambda _xml: None)
        try:
            t = parse_ui(xml)
        except XMLParseError as err:
            return ("error", str(err))
    return (t.rows, t.parents, t.classes, t.attrs, t.screen_size, t.rotation, t.bounds, t.nodes)


def assert_readers_agree(xml: str | bytes) -> tuple:
    """Every reader gives expat's outcome; returns it."""
    reference = outcome(xml, "expat")
    for reader in READERS[:-1]:
        assert outcome(xml, reader) == reference, f"the {reader} reader disagrees with expat"
    return reference
