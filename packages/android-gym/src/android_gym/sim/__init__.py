"""The embedded simulated phone: views, apps, the phone itself, and the ``SimDevice`` driver over it."""

from android_gym.sim.app import APP_REGISTRY, App, register_app
from android_gym.sim.device import SimDevice
from android_gym.sim.faults import FAULT_KINDS, FaultPlan
from android_gym.sim.latency import PRESETS as LATENCY_PRESETS
from android_gym.sim.latency import LatencyModel
from android_gym.sim.phone import LAUNCHER_PACKAGE, SimPhone, discover_apps
from android_gym.sim.view import (
    Button,
    CheckBox,
    Column,
    Dialog,
    EditText,
    Fab,
    Frame,
    Image,
    ImageButton,
    ListItem,
    RadioButton,
    Row,
    ScrollList,
    SeekBar,
    Spacer,
    Switch,
    Text,
    Toolbar,
    View,
)

__all__ = [
    "APP_REGISTRY",
    "FAULT_KINDS",
    "LATENCY_PRESETS",
    "LAUNCHER_PACKAGE",
    "App",
    "Button",
    "CheckBox",
    "Column",
    "Dialog",
    "EditText",
    "FaultPlan",
    "Fab",
    "Frame",
    "Image",
    "ImageButton",
    "LatencyModel",
    "ListItem",
    "RadioButton",
    "Row",
    "ScrollList",
    "SeekBar",
    "SimDevice",
    "SimPhone",
    "Spacer",
    "Switch",
    "Text",
    "Toolbar",
    "View",
    "discover_apps",
    "register_app",
]
