"""The base class of simulated apps and the registry the phone installs apps from.

An app keeps its data in plain attributes (lists, dicts, strings, numbers: deep-copyable and
picklable, never callables) so a snapshot is a deep copy. Screens are rebuilt from that state on
every frame by ``build_<page>(**args)`` methods returning :class:`~android_gym.sim.view.View` trees
whose callbacks change the state. Navigation is a page stack; dialogs are state too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from android_gym.sim.view import View

if TYPE_CHECKING:  # pragma: no cover
    from android_gym.sim.phone import SimPhone

APP_REGISTRY: dict[str, type[App]] = {}

Row = dict[str, Any]
RowMatch = Callable[[Row], bool]


def register_app(cls: type[App]) -> type[App]:
    """Class decorator installing ``cls`` on every new ``SimPhone`` (keyed by its package)."""
    if not cls.package or not cls.label:
        raise ValueError(f"app class {cls.__name__} must set both `package` and `label`")
    existing = APP_REGISTRY.get(cls.package)
    if existing is not None and existing.__qualname__ != cls.__qualname__:
        raise ValueError(f"package {cls.package!r} is registered twice ({existing.__name__}, {cls.__name__})")
    APP_REGISTRY[cls.package] = cls
    return cls


class App:
    """A simulated app: class attributes describe it, instance attributes hold its state.

    Subclasses set ``package`` (the real app's package), ``label`` (launcher name), ``activity``
    (``.MainActivity`` style, reported by ``dumpsys window``), ``main_page``, and optionally
    ``authorities`` (content-provider authorities served through ``content_*`` methods). They
    override :meth:`setup` to create initial data and write ``build_<page>(**args) -> View`` and
    ``dialog_<name>(**args) -> View`` methods.
    """

    package: ClassVar[str] = ""
    label: ClassVar[str] = ""
    activity: ClassVar[str] = ".MainActivity"
    main_page: ClassVar[str] = "main"
    authorities: ClassVar[tuple[str, ...]] = ()
    in_launcher: ClassVar[bool] = True
    icon_color: ClassVar[str] = "#0b57d0"

    def __init__(self, phone: SimPhone):
        self.phone = phone
        self.pages: list[tuple[str, dict[str, Any]]] = []
        self.dialog: tuple[str, dict[str, Any]] | None = None
        self.scroll: dict[str, int] = {}
        self.opened_by_system = False  # on a page the system started (the shade's Manage): the icon reopens main
        self.setup()

    # --- lifecycle hooks ----------------------------------------------------------------------
    def setup(self) -> None:
        """Create the app's initial data (called once when the phone installs the app)."""

    def open(self) -> None:
        """Cold start (launcher icon, ``monkey``, ``am start`` after force-stop): show the main page."""
        self.pages = [(self.main_page, {})]
        self.dialog = None
        self.scroll = {}
        self.opened_by_system = False
        self.on_open()

    def on_open(self) -> None:
        """Hook run after a cold start (e.g. reset transient form state)."""

    def stop(self) -> None:
        """``am force-stop``: forget the UI state (pages, dialog, scroll); data stays."""
        self.pages = []
        self.dialog = None
        self.scroll = {}

    @property
    def running(self) -> bool:
        """True when the app has a page stack (it was opened and not force-stopped)."""
        return bool(self.pages)

    # --- navigation ----------------------------------------------------------------------------
    @property
    def page(self) -> str:
        """Name of the page on top of the stack."""
        return self.pages[-1][0] if self.pages else self.main_page

    @property
    def page_args(self) -> dict[str, Any]:
        """Arguments the top page was pushed with."""
        return self.pages[-1][1] if self.pages else {}

    def push(self, name: str, **args: Any) -> None:
        """Open page ``name`` (rendered by ``build_<name>(**args)``) on top of the stack."""
        if not hasattr(self, f"build_{name}"):
            raise ValueError(f"{type(self).__name__} has no page builder build_{name}")
        self.pages.append((name, dict(args)))
        self.dialog = None
        self._reset_scroll(name)

    def replace(self, name: str, **args: Any) -> None:
        """Replace the top page with ``name``."""
        if self.pages:
            self.pages.pop()
        self.push(name, **args)

    def pop(self) -> bool:
        """Close the top page; False (and nothing happens) when it is the last one."""
        if len(self.pages) <= 1:
            return False
        name = self.pages.pop()[0]
        self.dialog = None
        self._reset_scroll(name)
        return True

    def _reset_scroll(self, page: str) -> None:
        # Lists keyed "<page>:<name>" start at the top each time their page opens.
        for key in [k for k in self.scroll if k.startswith(page + ":")]:
            del self.scroll[key]

    def on_back(self) -> bool:
        """System Back: close the dialog, else pop a page; False means the system leaves the app."""
        if self.dialog is not None:
            self.dialog = None
            return True
        return self.pop()

    def on_swipe(self, direction: str) -> bool:
        """A fling that no scrollable list took ("up" = finger moved up); True when the app handled it."""
        return False

    def on_time_passed(self) -> None:
        """The clock moved on without input (a wait); the app in front may show what was coming."""

    def collapsing_header(self, scroll_key: str) -> tuple[str, int] | None:
        """The header that collapses above list ``scroll_key`` as it scrolls (a CoordinatorLayout's app bar): the
        ``scroll`` key that holds how far (px) it has collapsed and its full collapse in px; None: no such header.
        A swipe down collapses it before the list moves, a swipe up expands it once the list is back at its top
        (see ``SimPhone._scroll_list``)."""
        return None

    def on_list_dragged(self, scroll_key: str) -> None:
        """A finger dragged the scrolling list ``scroll_key`` (after its offset moved, if it could)."""

    # --- dialogs, toasts, focus ----------------------------------------------------------------
    def show_dialog(self, name: str, **args: Any) -> None:
        """Show dialog ``name`` (rendered by ``dialog_<name>(**args)``) over the current page."""
        if not hasattr(self, f"dialog_{name}"):
            raise ValueError(f"{type(self).__name__} has no dialog builder dialog_{name}")
        self.dialog = (name, dict(args))
        self.phone.ime_detached = False  # a dialog or popup takes the focus: a keyboard left without a field goes

    def close_dialog(self) -> None:
        """Dismiss the dialog, if any."""
        self.dialog = None

    def toast(self, text: str) -> None:
        """Show a short Toast message."""
        self.phone.toast(text)

    def focus(self, key: str) -> None:
        """Give keyboard focus to the editable field with this key (the soft keyboard appears)."""
        self.phone.set_focus(key)

    # --- rendering -----------------------------------------------------------------------------
    def build(self) -> View:
        """The content view of the top page."""
        name, args = self.pages[-1] if self.pages else (self.main_page, {})
        return getattr(self, f"build_{name}")(**args)

    def build_dialog(self) -> View | None:
        """The dialog view, or None when no dialog is shown."""
        if self.dialog is None:
            return None
        name, args = self.dialog
        return getattr(self, f"dialog_{name}")(**args)

    def current_activity(self) -> str:
        """The activity of the top page (``.Activity`` relative to the package, or a full name)."""
        return self.activity

    def window_package(self) -> str:
        """The package the top page's window belongs to: the app's own, unless the page is another app's
        activity the app starts as its own page (Settings' search is Settings Intelligence's)."""
        return self.package

    def rid(self, name: str) -> str:
        """Full resource id ``<package>:id/<name>`` (views get this automatically for bare names)."""
        return f"{self.package}:id/{name}"

    # --- intents and content providers ----------------------------------------------------------
    def handle_intent(self, action: str | None, data: str | None, extras: dict[str, str]) -> bool:
        """``am start -a ACTION -d DATA``: open the matching page and return True, or False to decline."""
        return False

    def content_query(self, uri: str) -> list[Row]:
        """All rows behind ``uri`` as dicts (the phone applies projection, where and sort)."""
        raise ValueError(f"{self.package} has no content provider for {uri}")

    def content_insert(self, uri: str, values: Row) -> str:
        """Insert a row; return the new row's uri."""
        raise ValueError(f"{self.package} does not support insert on {uri}")

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        """Update rows for which ``match(row)`` is true; return how many changed."""
        raise ValueError(f"{self.package} does not support update on {uri}")

    def content_delete(self, uri: str, match: RowMatch) -> int:
        """Delete rows for which ``match(row)`` is true; return how many were deleted."""
        raise ValueError(f"{self.package} does not support delete on {uri}")

    # --- SQLite databases at the real app's paths ---------------------------------------------------
    databases: ClassVar[tuple[str, ...]] = ()
    """Absolute paths of the real app's SQLite files that this app keeps in step with its state."""
    data_packages: ClassVar[tuple[str, ...]] = ()
    """System packages whose data this app stands for (``pm clear com.android.providers.contacts``)."""

    def clear_data(self) -> None:
        """``pm clear``: empty the data a fresh install created (default: keep the fresh install's data)."""

    def dump_database(self, path: str) -> bytes:
        """The SQLite file at ``path`` (one of :attr:`databases`) built from the app's current state."""
        raise ValueError(f"{self.package} has no database at {path}")

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the app's state with the rows of the SQLite file ``data`` written to ``path``."""
        raise ValueError(f"{self.package} has no database at {path}")

    # --- snapshots -----------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The app's plain-data state (everything except the phone reference)."""
        return {k: v for k, v in self.__dict__.items() if k != "phone"}

    def load_state(self, state: dict[str, Any]) -> None:
        """Replace the app's state with ``state`` (a deep copy from :meth:`state`)."""
        phone = self.phone
        self.__dict__.clear()
        self.__dict__.update(state)
        self.phone = phone
