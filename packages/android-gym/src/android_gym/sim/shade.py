"""The notification shade (System UI), as the AndroidWorld emulator's accessibility tree lists it.

A swipe down on the home screen (or from the status bar) opens it: Quick Settings' first tiles (Internet,
Bluetooth, an empty flashlight tile the emulator has no flash for, Do Not Disturb), the "Silent" section with
its clear button, the footer's Manage and Clear all, the header (clock, date, signal and battery icons) and the
emulator's standing notifications (the Android System group with "Serial console enabled", the virtual SD
card). Listed breadth first they come in that order, as in the real SystemBrightnessMin episode. A second swipe
down expands Quick Settings: the brightness slider and more tiles. Only the shade is listed while it is open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from android_gym.sim.view import HORIZONTAL, SeekBar, Text, View

if TYPE_CHECKING:
    from android_gym.sim.phone import SimPhone

WIFI_SIGNAL_DESC = "Wifi signal full.,No internet"
"""The Wi-Fi icon's description (status bar, shade) on the AndroidWorld emulator, whose AndroidWifi network has no
internet access: 16 of the 21 real episodes show it, one "Wifi signal full.", the others had Wi-Fi off."""
WIFI_ONLINE_DESC = "Wifi signal full."
"""The same icon on an emulator whose Wi-Fi reaches the internet (``SimPhone.wifi_internet``): one run of
tests/android_gym/data/real_episodes and the second held-out source's tuning runs of 2025-12-13T21:50."""


def wifi_desc(phone: SimPhone) -> str:
    """The Wi-Fi icon's description: "No internet" appended unless the phone's Wi-Fi reaches the internet."""
    return WIFI_ONLINE_DESC if phone.wifi_internet else WIFI_SIGNAL_DESC

_UI = "com.android.systemui:id/"
NOTIFICATION_SETTINGS = "android.settings.NOTIFICATION_SETTINGS"  # what the Silent header and Manage start
_ANDROID = "android:id/"


def _tile(desc: str, on: bool, on_click: Callable[[], Any]) -> View:
    return View(cls="android.widget.Switch", text="On" if on else "Off", content_desc=desc, clickable=True,
                checkable=True, checked=on, focusable=True, weight=1, height=60, padding=(16.0, 18.0),
                background="#d3e3fd" if on else "#e9eef6", on_click=on_click, max_lines=1, size=14)


def _row(*children: View, height: float | None = None, rank: int = 0, padding: tuple[float, float] = (16.0, 4.0)
         ) -> View:
    return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True, height=height,
                padding=padding, dump_rank=rank, children=list(children))


def _internet(phone: SimPhone, wifi: bool) -> bool:
    """The Internet tile is on while Wi-Fi or mobile data carries the phone (the real run with Wi-Fi off shows it
    on: the emulator's mobile network)."""
    g = phone.settings["global"]
    return wifi or (g.get("mobile_data", "1") == "1" and g.get("airplane_mode_on") != "1")


def _mobile_icon(phone: SimPhone, wifi: bool) -> View:
    """The header's mobile signal; without Wi-Fi it holds the data type icon described "No internet"."""
    return View(cls="android.widget.FrameLayout", content_desc=phone.mobile_signal, resource_id=_UI + "mobile_combo",
                width=44, height=22, icon="4G", children=[] if wifi else [
                    View(cls="android.widget.ImageView", content_desc="No internet", resource_id=_UI + "mobile_type",
                         width=30, height=16)])


def _wrap(*children: View, **kw: Any) -> View:
    """A plain container: not listed itself (no text, not a leaf), it puts its children one level deeper in the
    breadth-first listing, where the emulator's notification templates have them."""
    return View(cls="android.widget.FrameLayout", children=list(children), **kw)


def _notifications(phone: SimPhone, posted: tuple[str, ...], wifi: bool) -> list[View]:
    """The standing notifications in the status bar's order, each as Android 13's templates list them breadth first
    (one level below the header's icons: the first level, then the second):

    - a single notification collapsed: its text and Expand button, then its title;
    - a single notification expanded: Collapse, title, text (the SD card's big text and its Explore and Eject
      buttons), then its app's name. The top notification is expanded unless it is a group (the real runs with the
      SD card on top show it so, and the ungrouped "Serial console enabled" below it collapsed);
    - the Android System group ("Serial console enabled" and, with Wi-Fi on, "AndroidWifi has limited
      connectivity"): its Expand button, then its name, count and children, whose rows span the width under the
      button. Without Wi-Fi, or with Wi-Fi that reaches the internet (``SimPhone.wifi_internet``: Android posts
      the limited-connectivity notification only while the network fails validation, the state the status bar's
      "No internet" shows), "Serial console enabled" is alone, so it is a single notification.
    The Expand buttons toggle what the template shows (``SimPhone.toggle_shade_group``)."""
    views: list[View] = []
    for desc in posted:
        if desc.startswith("Android System notification"):
            name, app = "android_system", "Android System"
            title, text = "Serial console enabled", "Performance is impacted. To disable, check bootloader."
            grouped = [(title, text)] + ([("AndroidWifi has limited connectivity", "Tap to connect anyway")]
                                         if wifi and not phone.wifi_internet else [])
        elif desc == "Settings notification: Virtual SD card":
            name, app, grouped = "sd_card", "Settings", []
            title, text = "Virtual SD card", "For storing photos, videos, music and more"
        else:
            continue
        toggled = name in phone.shade_toggled

        def expand(name: str = name) -> None:
            phone.toggle_shade_group(name)

        if len(grouped) > 1:
            views.append(_group(app, grouped, shown=not toggled, on_expand=expand))
            continue
        expanded = (not views) != toggled  # the top one opens expanded
        button = View(cls="android.widget.Button", content_desc="Collapse" if expanded else "Expand",
                      resource_id=_ANDROID + "expand_button", clickable=True, focusable=True, width=56,
                      height=56 if expanded else 88, icon="^" if expanded else "v", on_click=expand)
        if not expanded:
            views.append(View(cls="android.widget.FrameLayout", layout_only=True, background="#ffffff",
                              orientation=HORIZONTAL, padding=(16.0, 8.0), children=[
                                  View(cls="android.widget.LinearLayout", weight=1, layout_only=True, children=[
                                      _wrap(Text(title, resource_id=_ANDROID + "title", size=15, max_lines=1,
                                                 padding=(0, 2)), padding=(52.0, 0.0)),
                                      Text(text, resource_id=_ANDROID + "text", size=13, max_lines=1,
                                           color="#444746", padding=(52, 2))]),
                                  button]))
            continue
        actions = [View(cls="android.widget.Button", text=label, content_desc=label, resource_id=_ANDROID + "action0",
                        clickable=True, focusable=True, height=48, padding=(16.0, 8.0), size=14, color="#0b57d0",
                        on_click=_stay) for label in (("Explore", "Eject") if name == "sd_card" else ())]
        views.append(View(cls="android.widget.LinearLayout", layout_only=True, background="#ffffff",
                          padding=(16.0, 8.0), children=[
                              _row(_wrap(Text(app, resource_id=_ANDROID + "app_name_text", size=13, max_lines=1,
                                              padding=(0, 4)), weight=1), button, padding=(52.0, 0.0)),
                              Text(title, resource_id=_ANDROID + "title", size=15, max_lines=1, padding=(52, 2)),
                              Text(text, resource_id=_ANDROID + ("big_text" if actions else "text"), size=13,
                                   color="#444746", padding=(52, 2)),
                              *([_row(*actions, padding=(36.0, 4.0))] if actions else [])]))
    return views


def _group(app: str, children: list[tuple[str, str]], shown: bool, on_expand: Callable[[], None]) -> View:
    """A notification group: the header row (name, count, Expand) and one row per child (title and text)."""
    # a child's title is as wide as the emulator draws it (Roboto: ~0.43 em per glyph where the sim's estimate is
    # 0.52), so that its text keeps the rest of the row, as there ("Tap to connect anyway" after the long title)
    rows = [_row(Text(title, resource_id=_UI + "notification_title", size=15, max_lines=1, padding=(0, 2),
                      width=round(len(title) * 15 * 0.43)),
                 Text(text, resource_id=_UI + "notification_text", size=13, max_lines=1, padding=(8, 2),
                      color="#444746", weight=1), padding=(52.0, 2.0)) for title, text in children]
    name = _wrap(Text(app, resource_id=_ANDROID + "app_name_text", size=13, max_lines=1, padding=(0, 4)),
                 Text(str(len(children)), resource_id=_ANDROID + "expand_button_number", size=13, max_lines=1,
                      padding=(4, 4)), orientation=HORIZONTAL, weight=1, padding=(52.0, 0.0))
    button = View(cls="android.widget.Button", content_desc="Expand", resource_id=_ANDROID + "expand_button",
                  clickable=True, focusable=True, width=70, height=56, icon="v", on_click=on_expand)
    return View(cls="android.widget.LinearLayout", layout_only=True, background="#ffffff", padding=(16.0, 8.0),
                children=[_row(name, button, padding=(0.0, 0.0)),
                          *([_wrap(*rows, padding=(0.0, 0.0))] if shown else [])])


def _stay() -> None:
    """A touch on the panel outside its buttons and tiles: the shade stays open (only the dim area closes it)."""


def build_shade(phone: SimPhone, level: int) -> View:
    """The shade's view: ``level`` 1 is the notifications with the first tiles, 2 adds the expanded Quick
    Settings (brightness slider, more tiles)."""
    settings = phone.settings
    g, system = settings["global"], settings["system"]
    wifi = g.get("wifi_on") == "1" and g.get("airplane_mode_on") != "1"

    def toggle(namespace: str, key: str) -> Callable[[], None]:
        def flip() -> None:
            phone.settings_put(namespace, key, "0" if settings[namespace].get(key) == "1" else "1")
        return flip

    tiles = [
        _row(_tile("Internet,AndroidWifi" if wifi else "Internet", _internet(phone, wifi), toggle("global", "wifi_on")),
             _tile("Bluetooth.", g.get("bluetooth_on") == "1", toggle("global", "bluetooth_on"))),
        _row(View(cls="android.widget.LinearLayout", weight=1, height=60, background="#e9eef6"),
             _tile("Do Not Disturb.", g.get("zen_mode", "0") != "0", toggle("global", "zen_mode"))),
    ]
    level_now = int(system.get("screen_brightness", "102")) / 255

    def brightness(fraction: float) -> None:  # the slider's bottom is 1, Android's lowest brightness setting
        phone.settings_put("system", "screen_brightness_mode", "0")
        phone.settings_put("system", "screen_brightness", str(max(1, round(fraction * 255))))

    def slider() -> View:
        """The brightness slider, listed as on the emulator: its text names it; it takes drags, not clicks."""
        bar = SeekBar(level_now * 100, 100, brightness, text="Display brightness", resource_id=_UI + "slider",
                      weight=1)
        bar.clickable = False
        return bar

    if level == 3:  # the brightness dialog alone (Settings' "Brightness level"), at the top of the screen
        return View(cls="android.widget.FrameLayout", children=[
            View(cls="android.widget.LinearLayout", height=phone.status_bar_height / phone.scale + 8,
                 layout_only=True),
            _row(slider(), height=48), View(cls="android.view.View", weight=1, layout_only=True)])
    if level >= 2:
        return _quick_settings(phone, slider(), wifi, toggle)
    now = phone.now()
    clock, said = phone.status_clock()
    icons = []
    if wifi:
        icons.append(View(cls="android.widget.FrameLayout", content_desc=wifi_desc(phone),
                          resource_id=_UI + "wifi_combo", width=18, height=22, icon="W"))
    if g.get("airplane_mode_on") != "1":
        icons.append(_mobile_icon(phone, wifi))
    icons.append(View(cls="android.widget.LinearLayout", content_desc="Battery 100 percent.",
                      resource_id=_UI + "batteryRemainingIcon", width=47, height=24, icon="100%"))
    header = View(cls="android.widget.FrameLayout", resource_id=_UI + "header", orientation=HORIZONTAL, height=48,
                  padding=(16.0, 12.0), dump_rank=2, children=[
                      Text(clock, resource_id=_UI + "clock", content_desc=said, size=16, max_lines=1, padding=(4, 0),
                           width=44),
                      Text(f"{now:%a}, {now:%b} {now.day}", resource_id=_UI + "date", size=16, max_lines=1,
                           padding=(8, 0), weight=1),
                      *icons])
    # the emulator's standing notifications, as its status bar shows them; only the SD card's can be dismissed, so
    # without it the shade has no "Clear all" buttons (the real SystemBrightnessMin run with the group alone)
    posted = phone.standing_notifications
    sd_posted = "Settings notification: Virtual SD card" in posted
    clear_silent = [View(cls="android.widget.ImageView", content_desc="Clear all silent notifications",
                         resource_id=_UI + "btn_clear_all", clickable=True, focusable=True, width=48, height=48,
                         icon="x", on_click=phone.close_shade)] if sd_posted else []
    silent = _row(View(cls="android.widget.TextView", text="Silent", resource_id=_UI + "header_label",
                       clickable=True, focusable=True, weight=1, height=48, padding=(4.0, 12.0), size=16,
                       on_click=lambda: phone.open_from_shade("com.android.settings", NOTIFICATION_SETTINGS)),
                  *clear_silent, height=56, rank=1)
    notifications = View(cls="android.widget.LinearLayout", dump_rank=3, padding=(0.0, 4.0),
                         children=_notifications(phone, posted, wifi))
    footer = _row(View(cls="android.widget.Button", text="Manage", content_desc="Manage",
                       resource_id=_UI + "manage_text", clickable=True, focusable=True, width=90, height=48,
                       on_click=lambda: phone.open_from_shade("com.android.settings", NOTIFICATION_SETTINGS)),
                  View(cls="android.view.View", weight=1, height=1, layout_only=True),
                  *([View(cls="android.widget.Button", text="Clear all", content_desc="Clear all notifications.",
                          resource_id=_UI + "dismiss_text", clickable=True, focusable=True, width=90, height=48,
                          on_click=phone.close_shade)] if sd_posted else []), height=56, rank=1, padding=(24.0, 4.0))
    panel = View(cls="android.widget.LinearLayout", background="#f3f6fc", on_click=_stay, children=[
        header, View(cls="android.widget.LinearLayout", layout_only=True, padding=(16.0, 0.0), children=tiles),
        silent, notifications, footer])
    return View(cls="android.widget.FrameLayout", resource_id=_UI + "notification_shade", background="#202124",
                clickable=True, on_click=phone.close_shade, children=[panel])


def _quick_settings(phone: SimPhone, slider: View, wifi: bool, toggle: Callable[[str, str], Callable[[], None]]
                    ) -> View:
    """Quick Settings expanded (a second swipe down), as the emulator lists it breadth first: the brightness
    slider, the tiles' pager, the header (clock, date, signal and battery icons), the page indicator, "Edit order
    of settings.", the footer's "Open settings." and "Power menu" icons, the mobile icon's "No internet" (Wi-Fi
    off), the eight tiles of the first page, then the carrier's name. The notifications are not listed under it."""
    g, system = phone.settings["global"], phone.settings["system"]
    now = phone.now()
    clock, said = phone.status_clock()

    def tile_row(*tiles: View) -> View:
        return _row(*tiles, height=80, padding=(0.0, 4.0))

    def plain_tile(desc: str, on_click: Callable[[], Any] | None) -> View:
        return View(cls="android.widget.LinearLayout", content_desc=desc, clickable=on_click is not None,
                    focusable=True, weight=1, height=72, background="#e9eef6", on_click=on_click)

    def open_clock() -> None:
        phone.open_from_shade("com.google.android.deskclock")

    page = View(cls="android.widget.LinearLayout", children=[
        tile_row(_tile("Internet,AndroidWifi" if wifi else "Internet", _internet(phone, wifi),
                       toggle("global", "wifi_on")),
                 _tile("Bluetooth.", g.get("bluetooth_on") == "1", toggle("global", "bluetooth_on"))),
        tile_row(View(cls="android.widget.LinearLayout", focusable=True, weight=1, height=72, background="#e9eef6"),
                 _tile("Do Not Disturb.", g.get("zen_mode", "0") != "0", toggle("global", "zen_mode"))),
        tile_row(plain_tile("Alarm, No alarm set", open_clock),
                 _tile("Airplane mode", g.get("airplane_mode_on") == "1", toggle("global", "airplane_mode_on"))),
        tile_row(plain_tile("Device controls", None),
                 _tile("Auto-rotate screen", system.get("accelerometer_rotation") == "1",
                       toggle("system", "accelerometer_rotation")))])
    pager = View(cls="androidx.viewpager.widget.ViewPager", resource_id=_UI + "qs_pager", scrollable=True,
                 focusable=True, height=344, padding=(16.0, 0.0), dump_rank=1, children=[page])
    icons: list[View] = []
    if wifi:
        icons.append(View(cls="android.widget.FrameLayout", content_desc=wifi_desc(phone),
                          resource_id=_UI + "wifi_combo", width=18, height=22, icon="W"))
    if g.get("airplane_mode_on") != "1":
        icons.append(_mobile_icon(phone, wifi))
    icons.append(View(cls="android.widget.LinearLayout", content_desc="Battery 100 percent.",
                      resource_id=_UI + "batteryRemainingIcon", width=47, height=24, icon="100%"))
    carrier = View(cls="android.widget.LinearLayout", width=60, children=[
        View(cls="android.widget.LinearLayout", children=[
            Text("T-Mobile", resource_id=_UI + "qs_carrier_text", size=14, max_lines=1, padding=(0, 0))])])
    header = View(cls="android.widget.FrameLayout", layout_only=True, height=120, padding=(16.0, 8.0), dump_rank=2,
                  children=[
                      _row(View(cls="android.view.View", weight=1, layout_only=True), carrier, height=40,
                           padding=(0.0, 0.0)),
                      _row(Text(clock, resource_id=_UI + "clock", content_desc=said, size=16, max_lines=1,
                                padding=(0, 0), width=96),
                           Text(f"{now:%a}, {now:%b} {now.day}", resource_id=_UI + "date", size=16, max_lines=1,
                                padding=(8, 0), weight=1),
                           *icons, height=32, padding=(0.0, 0.0))])
    footer = _row(View(cls="android.view.View", weight=1, layout_only=True),
                  View(cls="android.view.ViewGroup", content_desc="Page 1 of 3",
                       resource_id=_UI + "footer_page_indicator", width=26, height=8),
                  View(cls="android.view.View", weight=1, layout_only=True),
                  View(cls="android.widget.ImageView", content_desc="Edit order of settings.",
                       resource_id="android:id/edit", clickable=True, focusable=True, width=48, height=48, icon="e",
                       on_click=_stay), height=48, rank=3, padding=(16.0, 0.0))

    def settings_button() -> None:
        phone.open_from_shade("com.android.settings")

    bottom = _row(View(cls="android.view.View", weight=1, layout_only=True),
                  View(cls="android.widget.FrameLayout", layout_only=True, width=48, height=48,
                       on_click=settings_button, children=[
                           View(cls="android.widget.ImageView", content_desc="Open settings.",
                                resource_id=_UI + "icon", width=20, height=20, icon="S")]),
                  View(cls="android.widget.FrameLayout", layout_only=True, width=48, height=48, on_click=_stay,
                       children=[View(cls="android.widget.ImageView", content_desc="Power menu",
                                      resource_id=_UI + "icon", width=20, height=20, icon="P")]),
                  height=64, rank=4, padding=(16.0, 8.0))
    panel = View(cls="android.widget.LinearLayout", background="#f3f6fc", on_click=_stay, weight=1, children=[
        header, _row(slider, height=56), pager, footer, View(cls="android.view.View", weight=1, layout_only=True),
        bottom])
    return View(cls="android.widget.FrameLayout", resource_id=_UI + "notification_shade", background="#202124",
                clickable=True, on_click=phone.close_shade, children=[panel])
