"""The Pixel launcher: home screen (search bar, a few icons, "Apps list"), app drawer and the Overview (recents)."""

from __future__ import annotations

from android_gym.sim.app import App, register_app
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    EditText,
    ImageButton,
    Row,
    ScrollList,
    Spacer,
    Text,
    View,
)

HOME_FAVOURITES = ("com.google.android.deskclock", "com.simplemobiletools.smsmessenger",
                   "com.google.android.contacts", "com.android.settings", "com.simplemobiletools.calendar.pro",
                   "net.gsantner.markor", "com.arduia.expense")
COLUMNS = 4


@register_app
class LauncherApp(App):
    """Home screen and app drawer listing every installed app by its exact label (sorted)."""

    package = "com.google.android.apps.nexuslauncher"
    label = "Pixel Launcher"
    activity = ".NexusLauncherActivity"
    main_page = "home"
    in_launcher = False

    def setup(self) -> None:
        self.query = ""

    def on_open(self) -> None:
        self.query = ""

    def on_swipe(self, direction: str) -> bool:
        if self.page == "home" and direction == "up":
            self.open_drawer()
            return True
        if self.page == "drawer" and direction == "down" and self.scroll.get("drawer:apps", 0) == 0:
            self.pop()
            return True
        return False

    def open_drawer(self) -> None:
        """Show the app drawer (swipe up on home, or the "Apps list" button)."""
        self.query = ""
        self.push("drawer")

    def _apps(self) -> list[App]:
        return sorted((a for a in self.phone.apps.values() if a.in_launcher), key=lambda a: a.label.lower())

    def _icon(self, a: App, rid: str = "icon") -> View:
        return View(cls="android.widget.TextView", text=a.label, content_desc=a.label, resource_id=rid,
                    clickable=True, focusable=True, long_clickable=True, weight=1, height=100, size=12,
                    align="center", icon=a.label[:1], background=None, color="#1f1f1f",
                    on_click=lambda pkg=a.package: self.phone.launch(pkg))

    def _grid(self, apps: list[App], rid: str) -> list[View]:
        rows = []
        for i in range(0, len(apps), COLUMNS):
            chunk = [self._icon(a, rid) for a in apps[i:i + COLUMNS]]
            while len(chunk) < COLUMNS:
                chunk.append(View(cls="android.view.View", weight=1, height=100))
            rows.append(Row(*chunk, cls="android.view.ViewGroup", padding=(8, 4)))
        return rows

    def build_home(self) -> View:
        installed = self.phone.apps
        favs = [installed[p] for p in HOME_FAVOURITES if p in installed and installed[p].in_launcher][:4]
        date = self.phone.now()
        return Column(
            Text(date.strftime("%A, %b ") + str(date.day), resource_id="date", size=18, padding=(24, 24)),
            Spacer(weight=1),
            *self._grid(favs, "icon"),
            Row(
                View(cls="android.widget.TextView", text="", content_desc="Search", resource_id="search_container_hotseat",
                     clickable=True, focusable=True, weight=1, height=56, background="#e9eef6", icon="G",
                     on_click=self.open_drawer),
                ImageButton("Apps list", self.open_drawer, resource_id="all_apps_handle", icon="::"),
                cls="android.widget.LinearLayout", padding=(16, 12),
            ),
            cls="android.widget.FrameLayout", resource_id="workspace", weight=1,
        )

    def build_drawer(self) -> View:
        q = self.query.strip().lower()
        apps = [a for a in self._apps() if not q or q in a.label.lower()]
        return Column(
            Row(EditText(self.query, self._set_query, hint="Search your phone and more", key="launcher_search",
                         resource_id="search_box_input", weight=1),
                cls="android.widget.LinearLayout", padding=(16, 8)),
            ScrollList(self._grid(apps, "icon") or [Text("No apps found", padding=(24, 24))], "drawer:apps",
                       resource_id="apps_list_view"),
            cls="android.widget.FrameLayout", resource_id="apps_view", weight=1, background="#f8fafd",
        )

    def _set_query(self, value: str) -> None:
        self.query = value
        self.scroll["drawer:apps"] = 0

    def build_recents(self) -> View:
        recents = [self.phone.apps[p] for p in reversed(self.phone.recents) if p in self.phone.apps]
        cards = [
            View(cls="android.widget.FrameLayout", resource_id="snapshot", content_desc=a.label, text="",
                 clickable=True, height=160, background="#ffffff", orientation=HORIZONTAL, padding=(16, 16),
                 on_click=lambda pkg=a.package: self.phone.launch(pkg),
                 children=[Text(a.label, resource_id="title", size=18, weight=1)])
            for a in recents
        ]
        if not cards:
            cards = [Text("No recent items", resource_id="empty_message", align="center", padding=(24, 48))]
        return Column(
            ScrollList(cards, "recents:list", resource_id="overview_panel"),
            Row(Spacer(weight=1), Button("Clear all", self._clear_recents, resource_id="clear_all"),
                Spacer(weight=1), padding=(16, 8)) if recents else None,
            cls="android.widget.FrameLayout", resource_id="overview_panel_container", weight=1,
            background="#dde3ea",
        )

    def _clear_recents(self) -> None:
        for pkg in list(self.phone.recents):
            self.phone.apps[pkg].stop()
        self.phone.recents.clear()
        self.pop()
