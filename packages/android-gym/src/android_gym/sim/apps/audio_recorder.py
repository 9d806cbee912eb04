"""Audio Recorder (com.dimowner.audiorecorder): record clips to the app's folder on /sdcard, rename and delete them.

The recordings are files in ``RECORDS_DIR`` (the app's external files folder, where AndroidWorld's
tasks look), so the shell and the app see the same list. The first start shows the welcome screen
("Get started"); without the microphone permission (``pm clear``, ``pm revoke``) Record asks for it. Pages: ``welcome``,
``main`` (the record button, which becomes Stop while recording, the timer, the last record's name:
tap it to rename; buttons to the records list and settings) and ``records`` (every recording, newest
first, each with a menu: Rename, Delete). A new recording is saved on Stop as ``Record-<n>.m4a``
(AAC in an MP4 container, the app's default format); renaming keeps the ``.m4a`` extension after
whatever name is typed. ``pm clear`` brings the welcome screen back and empties the folder.
"""

from __future__ import annotations

import posixpath

from android_gym.sim.app import App, register_app
from android_gym.sim.files import FileSystemError
from android_gym.sim.view import (
    Button,
    Column,
    Dialog,
    EditText,
    ImageButton,
    ListItem,
    Row,
    ScrollList,
    Spacer,
    Text,
    Toolbar,
    View,
)

RECORDER_PKG = "com.dimowner.audiorecorder"
RECORDS_DIR = "/sdcard/Android/data/com.dimowner.audiorecorder/files/Music/records"
EXTENSION = ".m4a"
BYTES_PER_SECOND = 16_000  # 128 kbit/s AAC


def _m4a_bytes(duration_ms: int) -> bytes:
    """A non-empty ``.m4a`` stand-in: an ``ftyp M4A`` box and a payload sized like 128 kbit/s audio."""
    ftyp = b"\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00M4A mp42"
    return ftyp + b"\x00" * max(1, duration_ms * BYTES_PER_SECOND // 1000)


@register_app
class AudioRecorderApp(App):
    """The recorder over the files of :data:`RECORDS_DIR` (state: welcome seen, permission, the running take)."""

    package = RECORDER_PKG
    label = "Audio Recorder"
    activity = "com.dimowner.audiorecorder.app.welcome.WelcomeActivity"
    main_page = "main"
    icon_color = "#e53935"

    def setup(self) -> None:
        self.welcomed = False
        self.mic_granted = True  # AndroidWorld's app set-up grants RECORD_AUDIO
        self.recording_since: int | None = None
        self.last_record = ""
        self.counter = 0
        self.rename_draft = ""
        self.phone.files.mkdir(RECORDS_DIR)

    def clear_data(self) -> None:
        """``pm clear``: the welcome screen again, no permission, and an empty recordings folder."""
        try:
            self.phone.files.remove(posixpath.dirname(posixpath.dirname(posixpath.dirname(RECORDS_DIR))),
                                    recursive=True)
        except FileSystemError:
            pass
        self.setup()
        self.mic_granted = False

    def set_permission(self, permission: str, granted: bool) -> None:
        """``pm grant|revoke com.dimowner.audiorecorder android.permission.RECORD_AUDIO``."""
        if permission == "android.permission.RECORD_AUDIO":
            self.mic_granted = granted

    def on_open(self) -> None:
        self.recording_since = None
        self.phone.files.mkdir(RECORDS_DIR)
        if not self.welcomed:
            self.pages = [("welcome", {})]

    def stop(self) -> None:
        """Force-stop loses a take in progress (nothing is written)."""
        super().stop()
        self.recording_since = None

    def current_activity(self) -> str:
        return {"welcome": self.activity, "records": "com.dimowner.audiorecorder.app.records.RecordsActivity"}.get(
            self.page, "com.dimowner.audiorecorder.app.main.MainActivity")

    # --- recordings --------------------------------------------------------------------------------
    def recordings(self) -> list[str]:
        """File names in the recordings folder, newest first (ties by name)."""
        fs = self.phone.files
        try:
            names = [n for n in fs.listdir(RECORDS_DIR) if fs.is_file(posixpath.join(RECORDS_DIR, n))]
        except FileSystemError:
            return []
        return sorted(names, key=lambda n: (-fs.mtimes.get(posixpath.join(RECORDS_DIR, n), 0), n))

    def record_button(self) -> None:
        """Start a take (asking for the microphone first), or stop and save the running one."""
        if self.recording_since is not None:
            self._save_take()
        elif not self.mic_granted:
            self.show_dialog("permission")
        else:
            self.recording_since = self.phone.clock_ms

    def _save_take(self) -> None:
        fs = self.phone.files
        fs.mkdir(RECORDS_DIR)
        self.counter += 1
        name = f"Record-{self.counter}{EXTENSION}"
        while fs.exists(posixpath.join(RECORDS_DIR, name)):
            self.counter += 1
            name = f"Record-{self.counter}{EXTENSION}"
        length = max(1000, self.phone.clock_ms - (self.recording_since or 0))
        fs.write(posixpath.join(RECORDS_DIR, name), _m4a_bytes(length), self.phone.clock_ms)
        self.recording_since = None
        self.last_record = name
        self.toast("Record saved")

    def rename(self, old: str, typed: str) -> bool:
        """Rename recording ``old`` to ``typed`` + ``.m4a``; False (with a toast) when that cannot be done."""
        base = typed.strip()
        if not base or "/" in base:
            self.toast("Incorrect name")
            return False
        fs = self.phone.files
        new = base + EXTENSION
        src, dst = posixpath.join(RECORDS_DIR, old), posixpath.join(RECORDS_DIR, new)
        if not fs.is_file(src):
            self.toast("Record not found")
            return False
        if new != old and fs.exists(dst):
            self.toast("File with this name already exists")
            return False
        if new != old:
            fs.move(src, dst)
        if self.last_record == old:
            self.last_record = new
        return True

    def delete(self, name: str) -> None:
        """Delete recording ``name``."""
        try:
            self.phone.files.remove(posixpath.join(RECORDS_DIR, name))
        except FileSystemError:
            return
        if self.last_record == name:
            self.last_record = ""
        self.toast("Record deleted")

    # --- pages ---------------------------------------------------------------------------------
    def build_welcome(self) -> View:
        return Column(
            Spacer(weight=1),
            Text("Audio Recorder", resource_id="txt_app_name", size=28, bold=True, align="center"),
            Text("Simple and easy to use recorder. Record audio in high quality and share it.",
                 resource_id="txt_welcome", align="center", color="#5f6368", padding=(32, 16)),
            Spacer(weight=1),
            Button("Get started", self._welcome_done, resource_id="btn_action"),
            Spacer(height=32),
            cls="android.widget.LinearLayout", resource_id="welcome_root", weight=1,
        )

    def _welcome_done(self) -> None:
        self.welcomed = True
        self.pages = [("main", {})]

    def build_main(self) -> View:
        recording = self.recording_since is not None
        seconds = (self.phone.clock_ms - self.recording_since) // 1000 if recording else 0
        if recording:
            name_view = Text("Recording\u2026", resource_id="txt_name", align="center", size=20)
        elif self.last_record and self.last_record in self.recordings():
            name_view = View(cls="android.widget.TextView", text=self.last_record[:-len(EXTENSION)]
                             if self.last_record.endswith(EXTENSION) else self.last_record,
                             resource_id="txt_name", clickable=True, focusable=True, size=20, align="center",
                             padding=(16, 8), on_click=lambda: self.open_rename(self.last_record))
        else:
            name_view = Text("", resource_id="txt_name", align="center", size=20)
        controls = Row(
            ImageButton("Records", self._open_records, resource_id="btn_records_list", icon="L"),
            Spacer(weight=1),
            ImageButton("Stop recording" if recording else "Record", self.record_button,
                        resource_id="btn_record_stop" if recording else "btn_record", width=80, height=80,
                        icon="S" if recording else "R"),
            Spacer(weight=1),
            ImageButton("Settings", lambda: self.toast("Settings"), resource_id="btn_settings", icon="S"),
            resource_id="pnl_record_controls", height=112, padding=(24, 16),
        )
        return Column(
            Spacer(weight=1),
            name_view,
            Text(f"{seconds // 60:02d}:{seconds % 60:02d}", resource_id="txt_progress", size=40, align="center"),
            Text("Recording" if recording else ("Tap the name to rename" if self.last_record else "Ready"),
                 resource_id="txt_record_info", align="center", color="#5f6368"),
            Spacer(weight=1),
            controls,
            cls="android.widget.LinearLayout", resource_id="main_root", weight=1,
        )

    def _open_records(self) -> None:
        if self.recording_since is not None:
            self.toast("Stop the recording first")
            return
        self.push("records")

    def build_records(self) -> View:
        rows: list[View] = []
        fs = self.phone.files
        for name in self.recordings():
            size = len(fs.files.get(posixpath.join(RECORDS_DIR, name), b""))
            seconds = size // BYTES_PER_SECOND
            rows.append(ListItem(name, f"{seconds // 60:02d}:{seconds % 60:02d}", lambda n=name: self.toast(
                f"Playing {n}"), resource_id="list_item", title_id="list_item_name", subtitle_id="list_item_duration",
                icon="A", trailing=ImageButton("More", (lambda n=name: self.show_dialog("record_menu", record=n)),
                                               resource_id="list_item_more", icon=":")))
        if not rows:
            rows = [Text("No records", resource_id="txtEmpty", align="center", padding=(24, 48), color="#5f6368")]
        return Column(Toolbar("Records", on_back=self.pop, resource_id="toolbar"),
                      ScrollList(rows, "records:list", resource_id="recyclerView"),
                      cls="android.widget.LinearLayout", resource_id="records_root", weight=1)

    # --- dialogs -------------------------------------------------------------------------------------
    def dialog_permission(self) -> View:
        choices = (("While using the app", True, "permission_allow_foreground_only_button"),
                   ("Only this time", True, "permission_allow_one_time_button"),
                   ("Don't allow", False, "permission_deny_button"))
        body = Column(*[Button(label, (lambda g=g: self._answer_permission(g)),
                               resource_id=f"com.android.permissioncontroller:id/{rid}", background="#e8f0fe")
                        for label, g, rid in choices], padding=(16, 4))
        return Dialog("Allow Audio Recorder to record audio?", body, [])

    def _answer_permission(self, granted: bool) -> None:
        self.mic_granted = granted
        self.close_dialog()
        if granted:
            self.recording_since = self.phone.clock_ms

    def open_rename(self, name: str) -> None:
        """The Rename dialog for recording ``name``, its field holding the name without the extension."""
        self.show_dialog("rename", record=name)
        self.rename_draft = name[:-len(EXTENSION)] if name.endswith(EXTENSION) else name

    def dialog_rename(self, record: str) -> View:
        field = EditText(self.rename_draft, self._set_draft, hint="Name", resource_id="input_name")
        return Dialog("Rename record", Column(field, padding=(16, 4)),
                      [("Cancel", self._cancel_rename), ("Save", lambda: self._save_rename(record))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _set_draft(self, value: str) -> None:
        self.rename_draft = value

    def _cancel_rename(self) -> None:
        self.rename_draft = ""
        self.close_dialog()

    def _save_rename(self, name: str) -> None:
        if self.rename(name, self.rename_draft):
            self.rename_draft = ""
            self.close_dialog()
            self.phone.set_focus(None)

    def close_dialog(self) -> None:
        """Closing any dialog forgets an unsaved rename."""
        super().close_dialog()
        if self.dialog is None:
            self.rename_draft = ""

    def dialog_record_menu(self, record: str) -> View:
        name = record
        items = [ListItem("Rename", "", lambda: self.open_rename(name), resource_id="menu_rename",
                          min_height=48),
                 ListItem("Delete", "", lambda: self.show_dialog("delete", record=name), resource_id="menu_delete",
                          min_height=48)]
        return Dialog(name, Column(*items), [])

    def dialog_delete(self, record: str) -> View:
        name = record
        return Dialog("Delete record", f"Delete {name}?",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self._delete_and_close(name))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_and_close(self, name: str) -> None:
        self.close_dialog()
        self.delete(name)
