"""The Pixel launcher: home screen (as on the AndroidWorld emulator), app drawer and the Overview (recents)."""

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

HOTSEAT = (("Phone", "com.google.android.dialer"), ("Messages", "com.google.android.apps.messaging"),
           ("Chrome", "com.android.chrome"))
"""The dock's fixed icons on the AndroidWorld emulator's home screen (label, package), before the predicted app."""
WORKSPACE = (("Gmail", "com.google.android.gm"), ("Photos", "com.google.android.apps.photos"),
             ("YouTube", "com.google.android.youtube"))
"""The home page's icons (its first column is empty)."""
PREDICTION_FALLBACK = "com.android.settings"
EMULATOR_ONLY_APPS = dict(HOTSEAT + WORKSPACE + (("Calendar", "com.google.android.calendar"),))
"""Label -> package of apps on AndroidWorld's emulator that the home screen shows (the sim may not model them)."""
COLUMNS = 4
SEARCH_SUGGESTED_APPS = (("Gmail", "com.google.android.gm"), ("YouTube", "com.google.android.youtube"),
                         ("Photos", "com.google.android.apps.photos"), ("Clock", "com.google.android.deskclock"))
"""The search panel's app row before anything is typed, as on AndroidWorld's emulator."""
SEARCH_APPS = 4
SEARCH_SUGGESTIONS = 10
"""Web suggestion rows of the search panel (those under the keyboard are hidden by it)."""


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
        self.earlier_prediction: tuple[str, str] | None = None
        """(label, package) the launcher predicted from the phone's use before this session, if known."""
        self.page_described = True
        """Whether the workspace page carries its "Home" description: 19 of the 21 real runs list it, two never do
        (a state of the emulator's launcher the runs before left; nothing in a task sets it)."""

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

    def _launch_or_say(self, label: str, package: str) -> None:
        """Open ``package``; an icon of an app the sim does not model says so in a toast instead."""
        if package in self.phone.apps:
            self.phone.launch(package)
        else:
            self.phone.toast(f"{label} is not installed on the simulated phone")

    def predicted_app(self) -> tuple[str, str] | None:
        """The dock's last slot as (label, package): the most recently used app not already on the home screen,
        else what the launcher predicted from the phone's earlier use (``earlier_prediction``), else Settings."""
        shown = {pkg for _, pkg in HOTSEAT + WORKSPACE}
        for pkg in reversed(self.phone.recents):
            app = self.phone.apps.get(pkg)
            if app is not None and app.in_launcher and pkg not in shown:
                return app.label, app.package
        if self.earlier_prediction is not None:
            return self.earlier_prediction
        fallback = self.phone.apps.get(PREDICTION_FALLBACK)
        return (fallback.label, fallback.package) if fallback is not None else None

    def _home_icon(self, label: str, package: str, desc: str | None = None) -> View:
        return View(cls="android.widget.TextView", text=label, content_desc=desc or label, clickable=True,
                    focusable=True, long_clickable=True, weight=1, height=74, size=12, align="center",
                    icon=label[:1], background=None, color="#1f1f1f",
                    on_click=lambda: self._launch_or_say(label, package))

    def build_home(self) -> View:
        """The home screen in the order the emulator's accessibility tree lists it (breadth first): the workspace
        and its page ("Home"), the dock's icons and search bar, then the date and the page's icons, then the
        search bar's Google, voice and Lens buttons."""
        date = self.phone.now()
        page = View(cls="android.view.View", content_desc="Home" if self.page_described else "",
                    orientation=HORIZONTAL, weight=1,
                    padding=(8, 24), children=[
                        View(cls="android.widget.TextView", text=date.strftime("%a, %b ") + str(date.day),
                             content_desc=date.strftime("%a, %b ") + str(date.day), resource_id="date",
                             clickable=True, focusable=True, weight=1, height=24, size=16, color="#1f1f1f",
                             on_click=lambda: self._launch_or_say("Calendar", "com.google.android.calendar")),
                        *(self._home_icon(label, pkg) for label, pkg in WORKSPACE)])
        dock = [self._home_icon(label, pkg) for label, pkg in HOTSEAT]
        predicted = self.predicted_app()
        if predicted is not None:
            dock.append(self._home_icon(*predicted, f"Predicted app: {predicted[0]}"))
        search = View(cls="android.widget.FrameLayout", content_desc="Search", resource_id="search_container_hotseat",
                      clickable=True, focusable=True, weight=3, height=56, background="#e9eef6",
                      orientation=HORIZONTAL, padding=(4, 4), on_click=self.open_search, children=[
                          View(cls="android.widget.ImageView", content_desc="Google app", resource_id="g_icon",
                               clickable=True, focusable=True, width=36, height=40, icon="G",
                               on_click=self.open_drawer),
                          View(cls="android.view.View", weight=1, height=40, layout_only=True),  # the bar's text area
                          View(cls="android.widget.ImageView", content_desc="Voice search", resource_id="mic_icon",
                               clickable=True, focusable=True, width=36, height=40, icon="M",
                               on_click=lambda: self.phone.toast("Voice search is not available")),
                          View(cls="android.widget.ImageButton", content_desc="Google Lens", resource_id="lens_icon",
                               clickable=True, focusable=True, width=36, height=40, icon="L",
                               on_click=lambda: self.phone.toast("Google Lens is not available")),
                      ])
        # The dock's icons and the search bar are siblings (one level, as the emulator lists them); here they
        # share one row.
        hotseat = View(cls="android.view.ViewGroup", resource_id="hotseat", orientation=HORIZONTAL, height=96,
                       padding=(8, 8), children=[*dock, search])
        if getattr(self.phone, "android_world_emulator", False):
            return self._emulator_home(page, dock, search, hotseat)
        return Column(
            View(cls="android.widget.ScrollView", resource_id="workspace", scrollable=True, weight=1,
                 children=[page]),
            hotseat,
            cls="android.widget.FrameLayout", resource_id="drag_layer", weight=1,
        )

    def _emulator_home(self, page: View, dock: list[View], search: View, hotseat: View) -> View:
        """The same home screen at the bounds AndroidWorld's emulator gives it (AndroidWorld's runs only: the sim's
        own tasks keep the layout above). Every real home screen of both sources lists the dock's icons 173 px wide
        at y 1873-2068 from x 76, 252 px apart, the search bar below them (75-1004 x 2125-2290) with its Google,
        voice and Lens buttons, the date at the top (y 292-354) and the page's icons at y 1479-1751 from x 309
        (its first column empty), so a tap at a point hits what it hits there (a grid-tapping agent's (180, 2000)
        opens Phone, (540, 1200) nothing)."""
        px = self._px

        def at(x1: float, y1: float, x2: float, y2: float, origin: float = 128) -> tuple[int, int, int, int]:
            """A box of the emulator's screen (or, with ``origin`` 0, of its parent) in this window's pixels: the
            app window starts under the 128 px status bar."""
            return px(x1), px(y1 - origin), px(x2), px(y2 - origin)

        full = (0, 0, self.phone.width, self.phone.height - self.phone.status_bar_height - self.phone.nav_bar_height)
        date, *icons = page.children
        date.place = at(99, 292, 1023, 354)
        for i, icon in enumerate(icons):
            icon.place = at(309 + 252 * i, 1479, 519 + 252 * i, 1751)
        page.absolute, page.place = True, full
        for i, icon in enumerate(dock):
            icon.place = at(76 + 252 * i, 1873, 249 + 252 * i, 2068)
        g_icon, _gap, mic, lens = search.children
        search.absolute, search.place = True, at(75, 2125, 1004, 2290)
        g_icon.place, mic.place, lens.place = at(11, 19, 137, 145, 0), at(666, 0, 792, 165, 0), at(792, 0, 918, 165, 0)
        search.children = [g_icon, mic, lens]
        hotseat.absolute, hotseat.place = True, full
        workspace = View(cls="android.widget.ScrollView", resource_id="workspace", scrollable=True, absolute=True,
                         place=full, children=[page])
        return View(cls="android.widget.FrameLayout", resource_id="drag_layer", absolute=True, weight=1,
                    children=[workspace, hotseat])

    def _px(self, v: float) -> int:
        """Pixels of the 1080 x 2400, 420 dpi emulator scaled to this phone's density."""
        return round(v * self.phone.scale / 2.625)

    def open_search(self) -> None:
        """The dock's search bar: the launcher's search panel (the field takes a tap before the keyboard shows)."""
        self.query = ""
        self.push("search")

    def build_search(self) -> View:
        """The search panel as AndroidWorld's emulator lists it: the Google app button, the field ("Search apps, web
        and more"; "Clear search box" once typed in), a row of apps (suggested ones, else those matching), then
        the web suggestions, which that emulator, offline, shows as the query and a number ("Search null")."""
        q = self.query.strip().lower()
        if q:
            apps = [(a.label, a.package) for a in self._apps() if q in a.label.lower()][:SEARCH_APPS]
        else:
            apps = list(SEARCH_SUGGESTED_APPS)
        field = Row(
            View(cls="android.widget.ImageView", content_desc="Google app", resource_id="g_icon", clickable=True,
                 width=48, height=48, icon="G", on_click=lambda: self.toast("Google is not available")),
            EditText(self.query, self._set_query, hint="Search apps, web and more", key="launcher_search",
                     resource_id="input", weight=1, on_submit=self._submit_search),
            ImageButton("Clear search box", self._clear_query, resource_id="clear_btn", icon="x") if q else None,
            cls="android.widget.LinearLayout", padding=(16, 8))
        field.children = [c for c in field.children if c is not None]
        # the app tiles are described by their names too (suggested and found alike)
        row = Row(*[View(cls="android.widget.TextView", text=label, content_desc=label,
                         clickable=True, focusable=True, weight=1,
                         height=108, size=12, align="center", icon=label[:1], background=None,
                         on_click=lambda lb=label, pkg=pkg: self._launch_or_say(lb, pkg))
                    for label, pkg in apps], cls="android.widget.LinearLayout", padding=(16, 8))
        suggestions = [View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=56, padding=(64, 0),
                            children=[Text(f"{self.query.strip()}{i}", resource_id="title", content_desc="Search null",
                                           max_lines=1, padding=(16, 14))])
                       for i in range(SEARCH_SUGGESTIONS)]
        return Column(field, row, Column(*suggestions, padding=(0, 8)), cls="android.widget.FrameLayout",
                      resource_id="search_container", weight=1, background="#f8fafd")

    def _submit_search(self) -> None:
        """Enter in the search panel: the emulator's Gboard stays up with no field to serve (its row of digits and
        Enter), also over an app then opened from the results (the real MarkorMoveNote runs)."""
        self.phone.ime_detached = True

    def _clear_query(self) -> None:
        self.query = ""
        self.phone.set_focus("launcher_search")

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
