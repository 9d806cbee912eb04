"""Camera (com.android.camera2, the emulator's AOSP camera): take photos and record videos onto /sdcard.

Without the camera permission (after ``pm clear`` or ``pm revoke``; AndroidWorld's set-up leaves it
granted) a start shows the permission pop-up (what AndroidWorld's open-app goal tells the agent to
clear); until it is granted the viewfinder says so and the shutter does nothing. The viewfinder page has a mode switcher (Camera / Video), the shutter button and a
thumbnail of the last capture. A photo is a JPEG written to ``/sdcard/Pictures/IMG_<date>_<time>.jpg``;
a video starts on the shutter in Video mode and is written to ``/sdcard/Movies/VID_<date>_<time>.mp4``
when the shutter is pressed again (the folders AndroidWorld's camera tasks list). ``pm clear``
forgets the granted permissions; the pictures stay (they are shared storage, not app data).
"""

from __future__ import annotations

import io
import posixpath

from android_gym.sim.app import App, register_app
from android_gym.sim.view import (
    Button,
    Column,
    Dialog,
    Frame,
    Image,
    ImageButton,
    Row,
    Spacer,
    Text,
    View,
)

CAMERA_PKG = "com.android.camera2"
PHOTOS_DIR = "/sdcard/Pictures"
VIDEOS_DIR = "/sdcard/Movies"
PERMISSION_BUTTONS = ("While using the app", "Only this time", "Don't allow")
"""The permission pop-up's choices, top to bottom (Android 13 wording)."""


def _jpeg_bytes(seed: int) -> bytes:
    """A small real JPEG (a flat colour from ``seed``), so the file has a size and decodes like a photo."""
    from PIL import Image as PilImage

    colour = ((seed * 53) % 256, (seed * 97) % 256, (seed * 29) % 256)
    buf = io.BytesIO()
    PilImage.new("RGB", (64, 48), colour).save(buf, format="JPEG")
    return buf.getvalue()


def _mp4_bytes(duration_ms: int) -> bytes:
    """An ISO-BMFF header (``ftyp`` box) followed by a stand-in payload: a non-empty ``.mp4``."""
    ftyp = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
    return ftyp + duration_ms.to_bytes(4, "big") + b"\x00" * 256


@register_app
class CameraApp(App):
    """The AOSP Camera: a viewfinder with Camera/Video modes; captures are files under /sdcard."""

    package = CAMERA_PKG
    label = "Camera"
    activity = "com.android.camera.CameraLauncher"
    main_page = "viewfinder"
    icon_color = "#3c4043"

    def setup(self) -> None:
        self.granted = True  # as AndroidWorld's app set-up leaves it
        self.mode = "photo"
        self.recording_since: int | None = None
        self.last_capture = ""

    def clear_data(self) -> None:
        """``pm clear``: the permissions are revoked, so the pop-up asks again on the next start."""
        self.setup()
        self.granted = False

    def set_permission(self, permission: str, granted: bool) -> None:
        """``pm grant|revoke com.android.camera2 android.permission.CAMERA``."""
        if permission in ("android.permission.CAMERA", "android.permission.RECORD_AUDIO"):
            self.granted = granted

    def on_open(self) -> None:
        self.recording_since = None
        self.mode = "photo"
        if not self.granted:
            self.show_dialog("permissions")

    def current_activity(self) -> str:
        return "com.android.camera.CameraActivity"

    def stop(self) -> None:
        """Force-stop also ends a recording without saving it (as killing the real app loses it)."""
        super().stop()
        self.recording_since = None

    # --- capture ---------------------------------------------------------------------------------
    def _new_path(self, folder: str, prefix: str, ext: str) -> str:
        stamp = self.phone.now().strftime("%Y%m%d_%H%M%S")
        path = posixpath.join(folder, f"{prefix}_{stamp}{ext}")
        n = 1
        while self.phone.files.exists(path):
            path = posixpath.join(folder, f"{prefix}_{stamp}_{n}{ext}")
            n += 1
        return path

    def shutter(self) -> None:
        """Take a photo, or start/stop a video in Video mode; nothing without the camera permission."""
        if not self.granted:
            self.toast("Camera permission is required")
            return
        if self.mode == "photo":
            path = self._new_path(PHOTOS_DIR, "IMG", ".jpg")
            self.phone.files.write(path, _jpeg_bytes(self.phone.clock_ms // 1000), self.phone.clock_ms)
            self.last_capture = posixpath.basename(path)
        elif self.recording_since is None:
            self.recording_since = self.phone.clock_ms
        else:
            path = self._new_path(VIDEOS_DIR, "VID", ".mp4")
            length = max(1000, self.phone.clock_ms - self.recording_since)
            self.phone.files.write(path, _mp4_bytes(length), self.phone.clock_ms)
            self.recording_since = None
            self.last_capture = posixpath.basename(path)
        self.phone.invalidate()

    def set_mode(self, mode: str) -> None:
        """Switch between "photo" and "video" (not while recording)."""
        if self.recording_since is None:
            self.mode = mode

    def on_swipe(self, direction: str) -> bool:
        """A horizontal fling on the viewfinder switches mode, as on the real app."""
        if direction in ("left", "right") and self.recording_since is None:
            self.mode = "video" if direction == "left" else "photo"
            return True
        return False

    # --- pages ---------------------------------------------------------------------------------
    def build_viewfinder(self) -> View:
        recording = self.recording_since is not None
        if not self.granted:
            preview: View = Column(
                Spacer(weight=1),
                Text("Camera needs permission to take photos and videos.", resource_id="permission_text",
                     align="center", color="#ffffff", padding=(24, 8)),
                Button("Grant permission", lambda: self.show_dialog("permissions"), resource_id="grant_button"),
                Spacer(weight=1),
                weight=1, background="#000000",
            )
        else:
            elapsed = "" if not recording else self._elapsed()
            preview = Frame(
                Text(elapsed, resource_id="recording_time", color="#ff5252", align="center", padding=(16, 8))
                if recording else None,
                View(cls="android.view.TextureView", resource_id="preview_content", weight=1,
                     content_desc="Camera preview", background="#263238"),
                resource_id="preview_overlay", weight=1, background="#000000",
            )
        modes = Row(
            Button("Camera", lambda: self.set_mode("photo"), resource_id="mode_camera", weight=1,
                   background="#ffffff" if self.mode == "photo" else None, selected=self.mode == "photo",
                   color="#1f1f1f" if self.mode == "photo" else "#ffffff"),
            Button("Video", lambda: self.set_mode("video"), resource_id="mode_video", weight=1,
                   background="#ffffff" if self.mode == "video" else None, selected=self.mode == "video",
                   color="#1f1f1f" if self.mode == "video" else "#ffffff"),
            resource_id="mode_options", padding=(80, 4), background="#000000",
        )
        if self.mode == "photo":
            shutter_desc = "Shutter"
        else:
            shutter_desc = "Stop recording" if recording else "Start recording"
        thumb = (Image(f"Filmstrip: {self.last_capture}", resource_id="rounded_thumbnail_view", icon="T",
                       width=56, height=56) if self.last_capture else Spacer(height=56))
        bottom = Row(
            View(cls="android.widget.FrameLayout", width=96, children=[thumb]),
            Spacer(weight=1),
            ImageButton(shutter_desc, self.shutter, resource_id="shutter_button", width=80, height=80,
                        icon="R" if self.mode == "video" else "O", background="#ffffff",
                        color="#d93025" if self.mode == "video" else "#1f1f1f"),
            Spacer(weight=1),
            ImageButton("Switch to front camera", lambda: self.toast("Front camera"), resource_id="camera_toggle",
                        icon="S", width=56, height=56, color="#ffffff"),
            resource_id="bottom_bar", height=120, padding=(16, 20), background="#000000",
        )
        return Column(preview, modes, bottom, cls="android.widget.FrameLayout", resource_id="camera_app_root",
                      weight=1, background="#000000")

    def _elapsed(self) -> str:
        seconds = max(0, (self.phone.clock_ms - (self.recording_since or 0)) // 1000)
        return f"{seconds // 60:02d}:{seconds % 60:02d}"

    # --- the permission pop-up ---------------------------------------------------------------------
    def dialog_permissions(self) -> View:
        body = Column(*[Button(label, (lambda g=(i < 2): self._answer_permissions(g)),
                               resource_id=rid, background="#e8f0fe", width=None)
                        for i, (label, rid) in enumerate(zip(PERMISSION_BUTTONS, (
                            "com.android.permissioncontroller:id/permission_allow_foreground_only_button",
                            "com.android.permissioncontroller:id/permission_allow_one_time_button",
                            "com.android.permissioncontroller:id/permission_deny_button")))],
                      resource_id="com.android.permissioncontroller:id/grant_dialog", padding=(16, 4))
        return Dialog("Allow Camera to take pictures, record video and record audio?", body, [])

    def _answer_permissions(self, granted: bool) -> None:
        self.granted = granted
        self.close_dialog()
