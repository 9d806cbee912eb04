"""Chrome (com.android.chrome): web pages from the phone's storage, run by a real web engine.

The page's HTML runs in headless chromium (:mod:`android_gym.sim.web`), sized like the screen below
Chrome's address bar with a phone's density and mobile viewport rules (a page without a viewport tag is
laid out 980 CSS px wide and zoomed out, as on a phone). What the app shows is that page: the
screenshot is the browser's own rendering, and the accessibility tree is the page's visible elements
(buttons, text fields, text, canvases) at their boxes on screen, as Chrome exposes web content to
accessibility services. Taps and swipes on the page go to it as mouse input at the same CSS pixel,
typing into a focused text field goes to the page as text input, Enter as the Enter key, so the page's
own scripts react, and what they write is what the next observation shows. A swipe that starts on a canvas
draws (the finger's path as mouse moves); elsewhere it scrolls the page.

Pages open from a file (Files' "Open with" Chrome, or ``am start -a android.intent.action.VIEW -d
file:///sdcard/...``). The page's script state lives in the browser: a snapshot of the phone keeps the
address, and restoring one loads the page afresh. Without chromium installed the app shows the address
and says why the page cannot be shown (``apt-get install chromium``).
"""

from __future__ import annotations

from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.view import Column, Text, View
from android_gym.sim.web import (
    CHROMIUM_INSTALL_HINT,
    WebEngine,
    WebEngineError,
    WebPage,
    web_engine_available,
)

CHROME_PKG = "com.android.chrome"
ADDRESS_BAR_DP = 56
_ROLE_CLASS = {"button": "android.widget.Button", "textbox": "android.widget.EditText",
               "text": "android.widget.TextView", "link": "android.widget.TextView", "canvas": "android.view.View"}


def file_url(path: str) -> str:
    """``file://`` address of a file on the phone's storage."""
    return "file://" + path


def path_of_url(url: str) -> str | None:
    """The storage path of a ``file://`` or ``content://`` address (``/sdcard/...``), None for others."""
    if url.startswith("file://"):
        return url[len("file://"):] or None
    if url.startswith("content://") and "/sdcard/" in url:
        return "/sdcard/" + url.split("/sdcard/", 1)[1]
    return None


@register_app
class ChromeApp(App):
    """Chrome with one tab (state: its address); the page itself runs in a headless chromium (not app state)."""

    package = CHROME_PKG
    label = "Chrome"
    activity = "com.google.android.apps.chrome.Main"
    main_page = "tab"
    icon_color = "#1a73e8"
    in_launcher = False  # opened from Files ("Open with") or by an intent; the home screen keeps its icons

    def setup(self) -> None:
        self.url = ""
        self.loaded = ""  # the address the browser last loaded (a fresh load after a snapshot or a restart)

    def clear_data(self) -> None:
        self.url = ""
        self.loaded = ""

    # --- the browser (outside the app's plain-data state) ---------------------------------------------
    def state(self) -> dict[str, Any]:
        return {k: v for k, v in super().state().items() if k not in ("_engine", "_page")}

    def load_state(self, state: dict[str, Any]) -> None:
        engine, page = self.__dict__.get("_engine"), self.__dict__.get("_page")
        super().load_state(state)
        self._engine, self._page = engine, page
        self.loaded = ""  # the browser's page is not part of a snapshot: load it afresh

    def _viewport(self) -> tuple[int, int]:
        p = self.phone
        height = p.height - p.status_bar_height - p.nav_bar_height - round(ADDRESS_BAR_DP * p.scale)
        return p.width, max(1, height)

    def web_page(self) -> WebPage | None:
        """The browser page showing ``url`` (started and loaded on first use); None when it cannot show one."""
        if not self.url or not web_engine_available():
            return None
        width, height = self._viewport()
        web = self.__dict__.get("_page")
        if web is None or not web.engine.alive or (web.width, web.height) != (width, height):
            engine = self.__dict__.get("_engine")
            if engine is None or not engine.alive:
                engine = WebEngine()
                self._engine = engine
            web = WebPage(engine, width, height, self.phone.scale)
            self._page = web
            self.loaded = ""
        if self.loaded != self.url:
            path = path_of_url(self.url)
            fs = self.phone.files
            if path is None or not fs.is_file(path):
                web.load_html(f"<html><body><h2>This site can\u2019t be reached</h2><p>{self.url}</p></body></html>")
            else:
                web.load_html(fs.read(path).decode("utf-8", "replace"))
            self.loaded = self.url
        return web

    @property
    def engine(self) -> WebEngine | None:
        """The browser process running the tab's page (None before a page was shown or after a force-stop)."""
        return self.__dict__.get("_engine")

    def stop(self) -> None:
        """Force-stop: the browser process ends too (the tab's address stays, as Chrome restores tabs)."""
        super().stop()
        self._close_browser()

    def _close_browser(self) -> None:
        engine = self.__dict__.pop("_engine", None)
        self.__dict__.pop("_page", None)
        self.loaded = ""
        if engine is not None:
            engine.close()

    # --- intents ---------------------------------------------------------------------------------------
    def open_url(self, url: str) -> None:
        """Show ``url`` in the tab (a new load)."""
        self.url = url
        self.loaded = ""
        self.pages = [("tab", {})]
        self.dialog = None

    def handle_intent(self, action: str | None, data: str | None, extras: dict[str, str]) -> bool:
        if action not in (None, "android.intent.action.VIEW") or not data:
            return False
        if not (data.startswith("file://") or data.startswith("content://") or data.startswith("http")):
            return False
        self.open_url(data)
        return True

    # --- the screen -----------------------------------------------------------------------------------
    def _address_bar(self) -> View:
        shown = self.url or "Search or type web address"
        return View(cls="android.widget.FrameLayout", resource_id="toolbar", height=ADDRESS_BAR_DP,
                    background="#f1f3f4", padding=(16.0, 10.0),
                    children=[Text(shown, resource_id="url_bar", size=15, max_lines=1,
                                   color="#1f1f1f" if self.url else "#5f6368")])

    def build_tab(self) -> View:
        if not self.url:
            body = Column(Text("New tab", size=22, align="center", padding=(16, 48)), weight=1,
                          resource_id="ntp_content")
            return Column(self._address_bar(), body, cls="android.widget.FrameLayout", weight=1)
        if not web_engine_available():
            body = Column(Text(f"This page cannot be shown: {CHROMIUM_INSTALL_HINT}", padding=(16, 24)),
                          weight=1, resource_id="compositor_view_holder")
            return Column(self._address_bar(), body, cls="android.widget.FrameLayout", weight=1)
        try:
            web = self.web_page()
            assert web is not None
            found = web.elements()
        except WebEngineError as exc:
            self._close_browser()
            body = Column(Text(f"Aw, Snap! {exc}", padding=(16, 24)), weight=1, resource_id="compositor_view_holder")
            return Column(self._address_bar(), body, cls="android.widget.FrameLayout", weight=1)
        return Column(self._address_bar(), self._web_view(web, found), cls="android.widget.FrameLayout", weight=1)

    def _web_view(self, web: WebPage, found: dict[str, Any]) -> View:
        """The page as a WebView node: its image is the browser's screenshot, its children the page's elements."""
        width, height = web.width, web.height
        factor = width / max(1.0, float(found.get("width") or width))  # screen px per CSS px (zoomed out pages)
        children = []
        for i, el in enumerate(found.get("elements", ())):
            x1, y1, x2, y2 = (round(v * factor) for v in el["box"])
            x1, y1, x2, y2 = max(0, x1), max(0, y1), min(width, x2), min(height, y2)
            if x2 <= x1 or y2 <= y1:
                continue
            role = el["role"]
            node = View(cls=_ROLE_CLASS.get(role, "android.view.View"), text=el.get("text", ""),
                        place=(x1, y1, x2, y2), painted=False, key=f"web:{i}:{el.get('tag', '')}",
                        clickable=role in ("button", "link", "textbox", "canvas"),
                        focusable=role in ("button", "textbox"),
                        enabled=not el.get("disabled", False))
            if role == "textbox":
                node.hint = el.get("hint", "")
                node.max_lines = 1
                node.on_text = lambda new, old=el.get("text", ""): self._typed(old, new)
                node.on_submit = self._enter
            children.append(node)
        view = View(cls="android.webkit.WebView", resource_id="compositor_view_holder", weight=1, absolute=True,
                    text=str(found.get("title", "")), image=web.screenshot, children=children)
        # a touch anywhere on the page (its elements included) goes to the page at that point of the view
        view.on_touch = lambda x, y: self._touch(view, factor, x, y)
        view.on_drag = lambda x1, y1, x2, y2: self._drag(view, factor, x1, y1, x2, y2)
        for node in children:
            node.on_touch, node.on_drag = view.on_touch, view.on_drag
        return view

    # --- input to the page ----------------------------------------------------------------------------
    @staticmethod
    def _css(view: View, factor: float, x: int, y: int) -> tuple[float, float]:
        """Screen pixel (x, y) as a CSS pixel of the page's layout viewport (``factor`` screen px per CSS px)."""
        return (x - view.bounds[0]) / factor, (y - view.bounds[1]) / factor

    def _touch(self, view: View, factor: float, x: int, y: int) -> None:
        web = self.web_page()
        if web is not None:
            web.tap(*self._css(view, factor, x, y))

    def _drag(self, view: View, factor: float, x1: int, y1: int, x2: int, y2: int) -> None:
        web = self.web_page()
        if web is None:
            return
        (cx1, cy1), (cx2, cy2) = self._css(view, factor, x1, y1), self._css(view, factor, x2, y2)
        if web.draws_at(cx1, cy1):  # a canvas takes the finger's path
            web.drag(cx1, cy1, cx2, cy2)
        else:  # elsewhere a swipe scrolls the page, the content following the finger
            web.scroll(cx1, cy1, cx1 - cx2, cy1 - cy2)

    def _typed(self, old: str, new: str) -> None:
        web = self.web_page()
        if web is None:
            return
        if new.startswith(old):
            web.insert_text(new[len(old):])
        else:  # a deletion or a replaced selection: the field's text becomes ``new``
            web.select_all()
            if new:
                web.insert_text(new)
            else:
                web.key("Backspace", 8)

    def _enter(self) -> None:
        web = self.web_page()
        if web is not None:
            web.key("Enter", 13)
