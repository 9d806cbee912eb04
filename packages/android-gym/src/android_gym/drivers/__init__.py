"""Real-device drivers: ``AdbDevice`` (adb, optionally uiautomator2), ``EmulatorPool``, snapshots and safe text entry.

adbutils and uiautomator2 come with the ``adb`` extra (``pip install 'android-gym[adb]'``); they are
imported only when a device is created.
"""

from android_gym.drivers.adb import AdbDevice, UiAutomator2Unavailable, adb_server_request, start_adb_server
from android_gym.drivers.pool import EmulatorError, EmulatorPool, emulator_command, find_port_pair
from android_gym.drivers.snapshots import AppDataSnapshots, ConsoleError, EmulatorConsoleClient
from android_gym.drivers.text_input import ADB_KEYBOARD, KNOWN_IMES, BroadcastIme, TextInputWarning

__all__ = [
    "ADB_KEYBOARD",
    "KNOWN_IMES",
    "AdbDevice",
    "AppDataSnapshots",
    "BroadcastIme",
    "ConsoleError",
    "EmulatorConsoleClient",
    "EmulatorError",
    "EmulatorPool",
    "TextInputWarning",
    "UiAutomator2Unavailable",
    "adb_server_request",
    "emulator_command",
    "find_port_pair",
    "start_adb_server",
]
