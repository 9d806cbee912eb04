"""Simple Mobile Tools' folder picker (FilePickerDialog), shared by the Simple Gallery and Simple Draw apps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from android_gym.sim.view import Button, ListItem, ScrollList, Text, View

STORAGE_ROOT = "/sdcard"


def folder_picker_parts(files: Any, folder: str, pick: Callable[[str], None]) -> tuple[list[View], View]:
    """The picker's breadcrumb from Internal down to ``folder`` and the list of its sub-folders; a tap calls ``pick``."""
    crumbs: list[View] = []
    path = STORAGE_ROOT
    parts = [p for p in folder[len(STORAGE_ROOT):].split("/") if p]
    for i, label in enumerate(["Internal", *parts]):
        if i:
            path = f"{path}/{label}"
        crumbs.append(Button(label if i == 0 else f"> {label}", lambda p=path: pick(p),
                             resource_id="breadcrumb_text", background=None, height=40, padding=(6, 4)))
    names = files.listdir(folder) if files.is_dir(folder) else []
    rows = [ListItem(n, "", lambda p=f"{folder}/{n}": pick(p), resource_id="list_item_holder",
                     title_id="list_item_name", icon="D", min_height=52)
            for n in sorted(names, key=str.lower) if not n.startswith(".") and files.is_dir(f"{folder}/{n}")]
    listing = ScrollList(rows or [Text("This folder is empty", padding=(24, 16), color="#5f6368")],
                         "__picker__", resource_id="filepicker_list", height=420)
    return crumbs, listing
