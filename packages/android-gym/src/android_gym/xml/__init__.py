"""UI-tree (uiautomator hierarchy XML) parsing and compression for agents.

`parse_ui` reads a dump into a `UITree`; `compress_xml` turns a dump into a `CompressedUI`: the short
text a model reads (AndroidLab, MobileRL or JSON layout) plus `UIElement`s with stable ids and lookups.
`actionable_nodes` names the nodes an agent can act on, which compression keeps unless they are hidden.
"""

from android_gym.xml.actionable import actionable_nodes
from android_gym.xml.compress import CompressedUI, compress_xml
from android_gym.xml.elements import UIElement, UnknownElementError
from android_gym.xml.render import STYLES
from android_gym.xml.synthetic import synthetic_dump
from android_gym.xml.tree import Bounds, UINode, UITree, XMLParseError, parse_bounds, parse_ui

__all__ = [
    "STYLES",
    "Bounds",
    "CompressedUI",
    "UIElement",
    "UINode",
    "UITree",
    "UnknownElementError",
    "XMLParseError",
    "actionable_nodes",
    "compress_xml",
    "parse_bounds",
    "parse_ui",
    "synthetic_dump",
]
