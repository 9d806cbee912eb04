"""Zoom (us.zoom.videomeetings), signed out, as AndroidLab's five ``zoom_*`` tasks use it: the Join a meeting
form and two settings.

Where each fact comes from (no UI dump of this app is available here, so everything the sources do not fix
is marked as this model's choice):

- Package ``us.zoom.videomeetings``: AndroidLab's ``evaluation/config/zoom.yaml``. The tasks fill the join
  form and leave the Join button to the user (their text says so), or change a setting.
- From AndroidLab's judges (``evaluation/tasks/zoom/zoom.py``), which read the compressed XML of the last
  screen: the join form shows "Join with a personal link name" (zoom_1-3); a typed meeting ID is shown
  grouped, 1234567890 as "123 456 7890" and 0987654321 as "098 765 4321"; the name typed ("Alice") is
  shown; the join options "Don't Connect To Audio" and "Turn Off My Video" each sit beside a switch whose
  text reads "On, switch" when it is on (zoom_3 looks for it among the label's siblings); the setting
  "Auto-connect to audio" shows its value, "WiFi or cellular data", beside it (zoom_4); a "Reaction skin
  tone" list has a "Medium-light" entry, the chosen one marked "Selected" beside it (zoom_5).

This model's choices: the signed-out home page (Join a meeting, Sign up, Sign in, a Settings button); the
launcher label "Zoom"; the resource ids; the grouping of IDs of other lengths (9 digits 3-3-3, 11 digits
3-4-4); the option lists ("Off" or "WiFi or cellular data"; Default, Light, Medium-light, Medium,
Medium-dark, Dark); the settings' other rows; a chosen skin tone staying on its list with the mark moved;
Join, when tapped, showing a "Connecting..." page (no meeting exists on the sim).

The app's preferences are served to task checks through ``content://us.zoom.videomeetings/settings``
(``name, value`` rows: ``auto_connect_audio`` = off | wifi_or_cellular, ``reaction_skin_tone`` = default |
light | medium_light | medium | medium_dark | dark), a sim convenience: the real app exports no provider.
"""

from __future__ import annotations

from typing import Any

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    EditText,
    Image,
    ImageButton,
    ListItem,
    RadioButton,
    ScrollList,
    Spacer,
    Switch,
    Text,
    Toolbar,
    View,
)

ZOOM_PKG = "us.zoom.videomeetings"
ZOOM_SETTINGS_URI = "content://us.zoom.videomeetings/settings"

AUTO_CONNECT: dict[str, str] = {"off": "Off", "wifi_or_cellular": "WiFi or cellular data"}
"""``auto_connect_audio`` value -> the label the Meetings page shows."""
SKIN_TONES: dict[str, str] = {"default": "Default", "light": "Light", "medium_light": "Medium-light",
                              "medium": "Medium", "medium_dark": "Medium-dark", "dark": "Dark"}
"""``reaction_skin_tone`` value -> its entry on the Reaction skin tone list."""
DEFAULTS = {"auto_connect_audio": "off", "reaction_skin_tone": "default"}


def group_meeting_id(digits: str) -> str:
    """A meeting ID as the join form shows it: "1234567890" -> "123 456 7890" (9: 3-3-3, 11: 3-4-4)."""
    if len(digits) <= 3:
        return digits
    if len(digits) >= 11:
        return f"{digits[:3]} {digits[3:7]} {digits[7:]}"
    return f"{digits[:3]} {digits[3:6]} {digits[6:]}".rstrip()


@register_app
class ZoomApp(App):
    """Zoom signed out: home, the Join a meeting form, Settings with Meetings and General (module docstring)."""

    package = ZOOM_PKG
    label = "Zoom"
    activity = "com.zipow.videobox.LauncherActivity"
    main_page = "home"
    authorities = ("us.zoom.videomeetings",)
    icon_color = "#0b5cff"

    def setup(self) -> None:
        self.prefs: dict[str, str] = dict(DEFAULTS)
        self._reset_form()

    def clear_data(self) -> None:
        """``pm clear``: default settings."""
        self.prefs = dict(DEFAULTS)
        self._reset_form()

    def _reset_form(self) -> None:
        self.form: dict[str, Any] = {"meeting_id": "", "link": "", "link_mode": False, "name": "",
                                     "no_audio": False, "no_video": False}

    def on_open(self) -> None:
        self._reset_form()

    def current_activity(self) -> str:
        return {"join": "com.zipow.videobox.JoinByNumberActivity",
                "settings": "com.zipow.videobox.SimpleActivity"}.get(self.page, self.activity)

    # --- home ------------------------------------------------------------------------------------
    def build_home(self) -> View:
        top = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=64, padding=(4.0, 8.0),
                   children=[Spacer(weight=1),
                             ImageButton("Settings", lambda: self.push("settings"), resource_id="btnSettings",
                                         icon="S")])
        return Column(
            top,
            Spacer(weight=1),
            Text("Zoom Workplace", resource_id="txtTitle", size=26, bold=True, align="center", padding=(24, 8)),
            Text("Find people and start chatting!", size=15, align="center", color="#444746", padding=(24, 8)),
            Spacer(weight=1),
            Button("Join a meeting", self.open_join, resource_id="btnJoinConf", background="#0b5cff",
                   color="#ffffff", height=56),
            Button("Sign up", None, resource_id="btnSignup", background=None, height=56),
            Button("Sign in", None, resource_id="btnLogin", background=None, height=56),
            Spacer(height=24),
            cls="android.widget.LinearLayout", resource_id="panelActions", weight=1, padding=(16, 0))

    # --- the join form ---------------------------------------------------------------------------
    def open_join(self) -> None:
        """The Join a meeting form, empty."""
        self._reset_form()
        self.push("join")

    def _set_id(self, value: str) -> None:
        self.form["meeting_id"] = "".join(c for c in value if c.isdigit())[:11]

    def _set(self, key: str, value: Any) -> None:
        self.form[key] = value

    def _toggle(self, key: str) -> None:
        self.form[key] = not self.form[key]

    def _toggle_link_mode(self) -> None:
        self.form["link_mode"] = not self.form["link_mode"]

    def _option(self, label: str, key: str) -> View:
        on = bool(self.form[key])
        return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, min_height=56, padding=(16.0, 0.0),
                    children=[Text(label, size=16, weight=1, padding=(0, 14)),
                              Switch(on, lambda: self._toggle(key), text="On, switch" if on else "Off, switch",
                                     resource_id=f"chk{key.title().replace('_', '')}", width=140)])

    def build_join(self) -> View:
        f = self.form
        if f["link_mode"]:
            field = EditText(f["link"], lambda v: self._set("link", v), hint="Personal link name",
                             resource_id="edtConfNumber")
            switch_text = "Join with meeting ID"
        else:
            field = EditText(group_meeting_id(f["meeting_id"]), self._set_id, hint="Meeting ID",
                             resource_id="edtConfNumber")
            switch_text = "Join with a personal link name"
        ready = len(f["meeting_id"]) >= 9 if not f["link_mode"] else bool(f["link"].strip())
        items: list[View] = [
            field,
            Text(switch_text, resource_id="btnGotoVanityUrl", color="#0b5cff", size=14, padding=(16, 10),
                 clickable=True, focusable=True, on_click=self._toggle_link_mode),
            EditText(f["name"], lambda v: self._set("name", v), hint="Your name", resource_id="edtScreenName"),
            Button("Join", self._join, resource_id="btnJoin", enabled=ready, background="#0b5cff" if ready else
                   "#e3e3e3", color="#ffffff" if ready else "#8e918f", height=56),
            Text("If you received an invitation link, tap on the link to join the meeting", size=13,
                 color="#444746", padding=(16, 8)),
            Text("JOIN OPTIONS", resource_id="txtJoinOptions", size=13, bold=True, color="#444746",
                 padding=(16, 12)),
            self._option("Don't Connect To Audio", "no_audio"),
            self._option("Turn Off My Video", "no_video"),
        ]
        return Column(Toolbar("Join a meeting", on_back=self.pop, back_desc="Cancel", resource_id="panelTitleBar"),
                      ScrollList(items, "join:form", resource_id="joinScroll", cls="android.widget.ScrollView"),
                      cls="android.widget.LinearLayout", resource_id="joinPanel", weight=1)

    def _join(self) -> None:
        self.push("connecting")

    def build_connecting(self) -> View:
        return Column(Spacer(weight=1), Text("Connecting...", size=20, align="center", resource_id="txtMsg"),
                      Button("Leave", self.pop, resource_id="btnLeave", background=None), Spacer(weight=1),
                      cls="android.widget.LinearLayout", weight=1)

    # --- settings --------------------------------------------------------------------------------
    def build_settings(self) -> View:
        items = [ListItem("General", "", lambda: self.push("general"), resource_id="optionGeneral", icon="G"),
                 ListItem("Meetings", "", lambda: self.push("meetings"), resource_id="optionMeeting", icon="M"),
                 ListItem("About", "", None, resource_id="optionAbout", icon="i")]
        return self._page("Settings", items, "settings:list")

    def build_meetings(self) -> View:
        items = [ListItem("Auto-connect to audio", AUTO_CONNECT[self.prefs["auto_connect_audio"]],
                          lambda: self.show_dialog("auto_connect"), resource_id="optionAutoConnectAudio",
                          title_id="txtTitle", subtitle_id="txtValue"),
                 ListItem("Always mute my microphone", "", None, resource_id="optionAlwaysMute"),
                 ListItem("Always turn off my video", "", None, resource_id="optionAlwaysTurnOffVideo")]
        return self._page("Meetings", items, "meetings:list")

    def dialog_auto_connect(self) -> View:
        current = self.prefs["auto_connect_audio"]
        options = [RadioButton(value == current, (lambda v=value: self._set_pref("auto_connect_audio", v)),
                               text=label, resource_id="radioOption") for value, label in AUTO_CONNECT.items()]
        return Dialog("Auto-connect to audio", Column(*options, padding=(16, 0)), [("Cancel", self.close_dialog)],
                      button_ids=["android:id/button2"])

    def _set_pref(self, key: str, value: str) -> None:
        self.prefs[key] = value
        self.close_dialog()

    def build_general(self) -> View:
        items = [ListItem("Reaction skin tone", "", lambda: self.push("skin_tone"), resource_id="optionReactionSkinTone"),
                 ListItem("Auto-copy invite link", "", None, resource_id="optionAutoCopyLink")]
        return self._page("General", items, "general:list")

    def build_skin_tone(self) -> View:
        chosen = self.prefs["reaction_skin_tone"]
        rows = [ListItem(label, "", (lambda v=value: self._choose_tone(v)), resource_id="panelSkinTone",
                         title_id="txtSkinTone",
                         trailing=Image("Selected", resource_id="imgSelected", icon="v", width=32, height=32)
                         if value == chosen else None)
                for value, label in SKIN_TONES.items()]
        return self._page("Reaction skin tone", rows, "skin_tone:list")

    def _choose_tone(self, value: str) -> None:
        self.prefs["reaction_skin_tone"] = value

    def _page(self, title: str, items: list[View], key: str) -> View:
        return Column(Toolbar(title, on_back=self.pop, back_desc="Back", resource_id="panelTitleBar"),
                      ScrollList(items, key, resource_id="settingsList"),
                      cls="android.widget.LinearLayout", weight=1)

    # --- preferences for task checks (a sim convenience) -----------------------------------------------
    @staticmethod
    def _check_uri(uri: str) -> None:
        rest = uri.split("://", 1)[-1]
        if (rest.split("/", 1)[1] if "/" in rest else "") != "settings":
            raise ValueError(f"unknown Zoom uri {uri!r}; use {ZOOM_SETTINGS_URI}")

    def content_query(self, uri: str) -> list[Row]:
        self._check_uri(uri)
        return [{"name": k, "value": v} for k, v in sorted(self.prefs.items())]

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        self._check_uri(uri)
        if set(values) != {"value"}:
            raise ValueError("Zoom settings: update only 'value' (--bind value:s:...)")
        names = [r["name"] for r in self.content_query(uri) if match(r)]
        allowed = {"auto_connect_audio": AUTO_CONNECT, "reaction_skin_tone": SKIN_TONES}
        for name in names:
            value = str(values["value"])
            if value not in allowed[name]:
                raise ValueError(f"Zoom setting {name} is one of {sorted(allowed[name])}, got {value!r}")
            self.prefs[name] = value
        return len(names)
