"""A simulated adbd: the simulated phone as a device for the real ``adb`` tool, plus the emulator console.

``SimAdbd(device).start()`` serves the adb transport protocol on 127.0.0.1 so ``adb connect
127.0.0.1:PORT``, ``adb shell``, ``push``/``pull``, ``exec-out screencap -p``, ``forward`` and
adbutils drive the simulated phone exactly as they drive an emulator. See :mod:`.server`.
"""

from android_gym.adbd.console import EmulatorConsole, ensure_token
from android_gym.adbd.host import HostAdb, find_adb
from android_gym.adbd.server import SimAdbd, bind_port_pair, free_port, serve

__all__ = ["EmulatorConsole", "HostAdb", "SimAdbd", "bind_port_pair", "ensure_token", "find_adb", "free_port",
           "serve"]
