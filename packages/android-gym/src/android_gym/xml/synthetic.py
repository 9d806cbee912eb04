"""Synthetic uiautomator dumps of a chosen size, for benchmarks and tests that need big realistic trees.

`synthetic_dump` writes a settings-like screen: a toolbar, a scrolling list of rows (icon, title,
subtitle, and a switch, checkbox or chevron) and a bottom navigation bar, with every attribute a real
``uiautomator dump`` writes. Optional extras put a dialog or the soft keyboard on top. The output is a
pure function of the arguments.
"""

from __future__ import annotations

import random

__all__ = ["synthetic_dump"]

_WORDS = (
    "Network",
    "Bluetooth",
    "Display",
    "Sound",
    "Battery",
    "Storage",
    "Privacy",
    "Location",
    "Security",
    "Accounts",
    "Accessibility",
    "System",
    "Apps",
    "Notifications",
    "Wallpaper",
    "Dark theme",
    "Wi-Fi",
    "Hotspot",
    "Data saver",
    "Airplane mode",
    "Night light",
    "Font size",
    "Vibration",
    "Ringtone",
)
_FLAGS = (
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
)


_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\t": "&#9;"})


def _quote(value: str) -> str:
    """A double-quoted XML attribute value."""
    return '"' + value.translate(_ESCAPES) + '"'


class _Writer:
    def __init__(self, package: str, budget: int, extra_attrs: bool):
        self.package = package
        self.budget = budget
        self.count = 0
        self.parts: list[str] = []
        self.extra_attrs = extra_attrs

    def open(
        self,
        cls: str,
        bounds: tuple[int, int, int, int],
        index: int = 0,
        text: str = "",
        rid: str = "",
        desc: str = "",
        leaf: bool = False,
        **flags: bool,
    ) -> None:
        self.count += 1
        attrs = {
            "index": str(index),
            "text": text,
            "resource-id": f"{self.package}:id/{rid}" if rid else "",
            "class": cls,
            "package": self.package,
            "content-desc": desc,
        }
        for f in _FLAGS:
            attrs[f] = "true" if flags.get(f.replace("-", "_"), f == "enabled") else "false"
        x1, y1, x2, y2 = bounds
        attrs["bounds"] = f"[{x1},{y1}][{x2},{y2}]"
        if self.extra_attrs:
            attrs["drawing-order"] = str(index + 1)
            attrs["hint"] = ""
            attrs["display-id"] = "0"
        body = " ".join(f"{k}={_quote(v)}" for k, v in attrs.items())
        self.parts.append(f"<node {body}{' />' if leaf else '>'}")

    def close(self) -> None:
        self.parts.append("</node>")


def synthetic_dump(
    nodes: int = 500,
    seed: int = 0,
    width: int = 1080,
    height: int = 2400,
    dialog: bool = False,
    keyboard: bool = False,
    extra_attrs: bool = False,
    package: str = "com.example.settings",
) -> str:
    """A uiautomator-format dump with exactly ``nodes`` nodes (list rows fill the count).

    ``dialog`` adds a modal dialog drawn over the screen, ``keyboard`` the soft keyboard over the lower
    part; ``extra_attrs`` adds drawing-order, hint and display-id attributes like newer Android does.
    """
    if nodes < 30 + (7 if dialog else 0) + (28 if keyboard else 0):
        raise ValueError(
            f"synthetic_dump needs at least 30 nodes plus 7 for a dialog and 28 for a keyboard, got {nodes}"
        )
    rng = random.Random(seed)
    w = _Writer(package, nodes, extra_attrs)
    w.open("android.widget.FrameLayout", (0, 0, width, height))
    w.open("android.widget.LinearLayout", (0, 0, width, height), rid="root")
    bar_h, nav_h = 160, 170
    # Node budget: 7 before the rows, 7 per row, 9 for the navigation bar, 7 for a dialog, 28 for a
    # keyboard; what is left over becomes decorative views in the toolbar so the count is exact.
    fixed = 7 + 9 + (7 if dialog else 0) + (28 if keyboard else 0)
    per_row = 7
    rows = max(1, (nodes - fixed) // per_row)
    filler = max(0, nodes - fixed - rows * per_row)
    w.open("android.view.ViewGroup", (0, 0, width, bar_h), rid="toolbar")
    w.open(
        "android.widget.ImageButton",
        (0, 20, 140, 150),
        desc="Navigate up",
        leaf=True,
        clickable=True,
        focusable=True,
    )
    w.open("android.widget.TextView", (160, 40, 700, 130), index=1, text="Settings", leaf=True)
    w.open(
        "android.widget.ImageButton",
        (940, 20, 1070, 150),
        index=2,
        desc="Search",
        rid="search",
        leaf=True,
        clickable=True,
        focusable=True,
    )
    for f in range(filler):
        w.open("android.view.View", (720 + 10 * f, 60, 730 + 10 * f, 120), index=3 + f, leaf=True)
    w.close()
    top, bottom = bar_h, height - nav_h
    w.open(
        "androidx.recyclerview.widget.RecyclerView",
        (0, top, width, bottom),
        index=1,
        rid="list",
        scrollable=True,
        focusable=True,
    )
    row_h = max(8, (bottom - top) // rows)
    for r in range(rows):
        y1 = top + r * row_h
        y2 = y1 + row_h  # rows past the list bottom are off-screen, as in a full-layout dump
        title = f"{rng.choice(_WORDS)} {r}"
        kind = rng.random()
        w.open(
            "android.widget.LinearLayout",
            (0, y1, width, y2),
            index=r,
            rid="row",
            clickable=True,
            focusable=True,
            long_clickable=kind < 0.2,
        )
        w.open("android.widget.ImageView", (40, y1, 40 + row_h // 2, y2), rid="icon", leaf=True)
        w.open("android.widget.LinearLayout", (180, y1, 820, y2), index=1)
        w.open("android.widget.TextView", (180, y1, 820, (y1 + y2) // 2), rid="title", text=title, leaf=True)
        w.open(
            "android.widget.TextView",
            (180, (y1 + y2) // 2, 820, y2),
            index=1,
            rid="summary",
            text=f"{rng.randint(1, 99)} items",
            leaf=True,
        )
        w.close()
        w.open("android.widget.LinearLayout", (860, y1, 1040, y2), index=2, rid="widget_frame")
        if kind < 0.45:
            w.open(
                "android.widget.Switch",
                (880, y1, 1020, y2),
                rid="switch_widget",
                leaf=True,
                checkable=True,
                checked=rng.random() < 0.5,
                clickable=True,
                focusable=True,
            )
        elif kind < 0.7:
            w.open(
                "android.widget.CheckBox",
                (900, y1, 1000, y2),
                rid="checkbox",
                leaf=True,
                checkable=True,
                checked=rng.random() < 0.5,
                clickable=True,
                focusable=True,
            )
        else:
            w.open("android.widget.ImageView", (920, y1, 990, y2), rid="chevron", leaf=True)
        w.close()
        w.close()
    w.close()  # RecyclerView
    tabs = ("Home", "Search", "Library", "Profile")
    w.open("android.widget.LinearLayout", (0, bottom, width, height), index=2, rid="bottom_nav")
    tw = width // len(tabs)
    for t, name in enumerate(tabs):
        w.open(
            "android.widget.FrameLayout",
            (t * tw, bottom, (t + 1) * tw, height),
            index=t,
            desc=name,
            clickable=True,
            focusable=True,
            selected=t == 0,
        )
        w.open(
            "android.widget.TextView", (t * tw, bottom + 100, (t + 1) * tw, height - 10), text=name, leaf=True
        )
        w.close()
    w.close()
    w.close()  # LinearLayout root
    if dialog:
        # The dim scrim takes the taps around the panel (they dismiss the dialog), so nothing below it acts.
        w.open(
            "android.widget.FrameLayout", (0, 0, width, height), index=1, rid="dialog_scrim", clickable=True
        )
        dx1, dy1, dx2, dy2 = 90, height // 3, width - 90, height // 3 + 700
        w.open("android.widget.LinearLayout", (dx1, dy1, dx2, dy2), rid="parentPanel")
        w.open(
            "android.widget.TextView",
            (dx1 + 60, dy1 + 60, dx2 - 60, dy1 + 160),
            rid="alertTitle",
            text="Reset settings?",
            leaf=True,
        )
        w.open(
            "android.widget.TextView",
            (dx1 + 60, dy1 + 180, dx2 - 60, dy1 + 480),
            index=1,
            rid="message",
            text="All preferences will be restored to defaults.",
            leaf=True,
        )
        w.open("android.widget.LinearLayout", (dx1, dy2 - 180, dx2, dy2), index=2, rid="buttonPanel")
        w.open(
            "android.widget.Button",
            (dx1 + 300, dy2 - 160, dx1 + 560, dy2 - 40),
            rid="button2",
            text="Cancel",
            leaf=True,
            clickable=True,
            focusable=True,
        )
        w.open(
            "android.widget.Button",
            (dx1 + 600, dy2 - 160, dx2 - 40, dy2 - 40),
            index=1,
            rid="button1",
            text="Reset",
            leaf=True,
            clickable=True,
            focusable=True,
        )
        w.close()
        w.close()
        w.close()
    w.close()  # FrameLayout top
    if keyboard:
        kb = _Writer("com.google.android.inputmethod.latin", 0, extra_attrs)
        ky = height - 900
        kb.open("android.widget.FrameLayout", (0, ky, width, height), index=1)
        keys = "qwertyuiopasdfghjklzxcvbnm"
        kw = width // 10
        for k, ch in enumerate(keys):
            row, col = (0, k) if k < 10 else ((1, k - 10) if k < 19 else (2, k - 19))
            x1 = col * kw + row * kw // 2
            y1 = ky + 60 + row * 200
            kb.open(
                "android.widget.FrameLayout",
                (x1, y1, x1 + kw, y1 + 190),
                index=k,
                desc=ch,
                leaf=True,
                clickable=True,
                long_clickable=True,
            )
        kb.open(
            "android.widget.FrameLayout",
            (200, ky + 660, 880, ky + 860),
            index=26,
            desc="Space",
            leaf=True,
            clickable=True,
        )
        kb.close()
        w.parts.extend(kb.parts)
        w.count += kb.count
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
        f'<hierarchy rotation="0">{"".join(w.parts)}</hierarchy>'
    )
