"""android-gym: Gymnasium environments for Android GUI agents."""

from android_gym.actions import (
    Action,
    ActionFormatError,
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
    format_action,
    parse_action,
    parse_actions,
    smart_resize,
)
from android_gym.adbd import SimAdbd
from android_gym.drivers import AdbDevice, EmulatorPool
from android_gym.envs import AndroidEnv, UIElements, UnicodeText, register_envs
from android_gym.screen import Screen
from android_gym.sim import SimDevice, SimPhone
from android_gym.suites import (
    AndroidLabSuite,
    AndroidWorldSimSuite,
    AndroidWorldSuite,
    androidlab_metrics,
    export_androidlab_traces,
    load_androidlab_tasks,
)
from android_gym.tasks import Task, list_tasks
from android_gym.trajectory import Step, Trajectory
from android_gym.viewer import (
    ViewEpisode,
    ViewServer,
    ViewStep,
    episode_from_trajectory,
    load_episodes,
    render_html,
    serve_view,
    write_view,
)
from android_gym.xml import (
    CompressedUI,
    UIElement,
    UINode,
    UITree,
    UnknownElementError,
    XMLParseError,
    compress_xml,
    parse_ui,
)

__version__ = "0.1.0"

register_envs()

__all__ = [
    "AndroidLabSuite",
    "AndroidWorldSimSuite",
    "AndroidWorldSuite",
    "androidlab_metrics",
    "export_androidlab_traces",
    "load_androidlab_tasks",
    "AdbDevice",
    "EmulatorPool",
    "SimAdbd",
    "SimDevice",
    "SimPhone",
    "CompressedUI",
    "UIElement",
    "UINode",
    "UITree",
    "UnknownElementError",
    "XMLParseError",
    "compress_xml",
    "parse_ui",
    "Action",
    "AndroidEnv",
    "ActionFormatError",
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
    "Task",
    "Trajectory",
    "Type",
    "UIElements",
    "ViewEpisode",
    "ViewServer",
    "ViewStep",
    "UnicodeText",
    "Wait",
    "action_from_dict",
    "episode_from_trajectory",
    "load_episodes",
    "render_html",
    "serve_view",
    "write_view",
    "format_action",
    "parse_action",
    "parse_actions",
    "smart_resize",
    "list_tasks",
]
