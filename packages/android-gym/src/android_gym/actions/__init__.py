"""Actions: the typed vocabulary (``types``), parsing model outputs (``parse``) and writing them back (``format``)."""

from android_gym.actions.coords import (
    COORDINATE_SPACES,
    CoordinateSpace,
    coordinate_space,
    point_from_value,
    smart_resize,
)
from android_gym.actions.format import FORMAT_STYLES, ActionFormatError, format_action
from android_gym.actions.gestures import androidlab_swipe, androidworld_swipe
from android_gym.actions.parse import PARSE_STYLES, parse_action, parse_actions
from android_gym.actions.types import (
    ACTION_TYPES,
    DIRECTIONS,
    Action,
    ActionParseError,
    Click,
    Drag,
    Finished,
    LongPress,
    OpenApp,
    PressBack,
    PressEnter,
    PressHome,
    Scroll,
    Swipe,
    Type,
    Wait,
    action_from_dict,
)

__all__ = [
    "COORDINATE_SPACES",
    "CoordinateSpace",
    "coordinate_space",
    "point_from_value",
    "smart_resize",
    "FORMAT_STYLES",
    "ActionFormatError",
    "format_action",
    "androidlab_swipe",
    "androidworld_swipe",
    "PARSE_STYLES",
    "parse_action",
    "parse_actions",
    "ACTION_TYPES",
    "DIRECTIONS",
    "Action",
    "ActionParseError",
    "Click",
    "Drag",
    "Finished",
    "LongPress",
    "OpenApp",
    "PressBack",
    "PressEnter",
    "PressHome",
    "Scroll",
    "Swipe",
    "Type",
    "Wait",
    "action_from_dict",
]
