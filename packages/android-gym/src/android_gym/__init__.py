"""android-gym: Gymnasium environments for Android GUI agents."""

from android_gym.actions import (
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
from android_gym.screen import Screen
from android_gym.trajectory import Step, Trajectory

__version__ = "0.1.0"

__all__ = [
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
    "Screen",
    "Scroll",
    "Step",
    "Swipe",
    "Trajectory",
    "Type",
    "Wait",
    "action_from_dict",
]
