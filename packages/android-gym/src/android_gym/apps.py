"""App names as agents say them, mapped to Android package names.

The simulated phone uses the same packages as the real apps it imitates, so a task check written
against a package (``content query``, files, ``settings``) reads the same on both.
"""

from __future__ import annotations

import re

APP_PACKAGES: dict[str, str] = {
    "settings": "com.android.settings",
    "contacts": "com.google.android.contacts",
    "clock": "com.google.android.deskclock",
    "simple calendar pro": "com.simplemobiletools.calendar.pro",
    "calendar": "com.simplemobiletools.calendar.pro",
    "calendario": "com.skuld.calendario",
    "markor": "net.gsantner.markor",
    "pro expense": "com.arduia.expense",
    "arduia pro expense": "com.arduia.expense",
    "expense": "com.arduia.expense",
    "simple sms messenger": "com.simplemobiletools.smsmessenger",
    "sms messenger": "com.simplemobiletools.smsmessenger",
    "messages": "com.simplemobiletools.smsmessenger",
    "sms": "com.simplemobiletools.smsmessenger",
    "files": "com.google.android.documentsui",
    "chrome": "com.android.chrome",
    "camera": "com.android.camera2",
    "dialer": "com.google.android.dialer",
    "phone": "com.google.android.dialer",
    "simple gallery pro": "com.simplemobiletools.gallery.pro",
    "gallery": "com.simplemobiletools.gallery.pro",
    "broccoli": "com.flauschcode.broccoli",
    "tasks": "org.tasks",
    "opentracks": "de.dennisguse.opentracks",
    "osmand": "net.osmand",
    "joplin": "net.cozic.joplin",
    "vlc": "org.videolan.vlc",
    "simple draw pro": "com.simplemobiletools.draw.pro",
    "simple draw": "com.simplemobiletools.draw.pro",
    "retro music": "code.name.monkey.retromusic",
    "audio recorder": "com.dimowner.audiorecorder",
    "bluecoins": "com.rammigsoftware.bluecoins",
    "maps.me": "com.mapswithme.maps.pro",
    "pi music player": "com.Project100Pi.themusicplayer",
    "cantook": "com.aldiko.android",
    "zoom": "us.zoom.videomeetings",
    "launcher": "com.google.android.apps.nexuslauncher",
}

_PACKAGE_RE = re.compile(r"^[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+$")


def resolve_package(app: str, extra: dict[str, str] | None = None) -> str:
    """Package for an app name ("Markor", "simple sms messenger") or a package given as is.

    Raises ``ValueError`` naming the known apps when the name is unknown and not a package.
    """
    key = " ".join(app.strip().lower().split())
    table = {**APP_PACKAGES, **{k.lower(): v for k, v in (extra or {}).items()}}
    if key in table:
        return table[key]
    if key.endswith(" app") and key[:-4] in table:
        return table[key[:-4]]
    if _PACKAGE_RE.match(app.strip()):
        return app.strip()
    raise ValueError(f"unknown app {app!r}; known apps: {', '.join(sorted(table))}")
