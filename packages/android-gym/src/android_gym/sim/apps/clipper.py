"""Clipper (ca.zgrs.clipper): the helper app AndroidWorld starts before setting the clipboard over ``am broadcast``.

The sim answers ``clipper.set``/``clipper.get`` broadcasts in its shell; this app is what ``am start -n
ca.zgrs.clipper/.Main`` opens (one screen saying the service runs). It has no launcher icon here.
"""

from __future__ import annotations

from android_gym.sim.app import App, register_app
from android_gym.sim.view import Column, Text, Toolbar, View


@register_app
class ClipperApp(App):
    """A single screen; the clipboard itself is the phone's."""

    package = "ca.zgrs.clipper"
    label = "Clipper"
    activity = "ca.zgrs.clipper.Main"
    in_launcher = False
    icon_color = "#5f6368"

    def build_main(self) -> View:
        """The app's only screen."""
        return Column(Toolbar("Clipper"),
                      Text("Clipper service is running.", resource_id="status", padding=(16, 16)),
                      Text(f"Clipboard: {self.phone.clipboard}", resource_id="clipboard", padding=(16, 8),
                           color="#5f6368"))
