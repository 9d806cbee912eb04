"""Screenshots of the simulated phone, drawn with Pillow from the same laid-out nodes the XML dump reports.

Only visible nodes are drawn, each clipped to its reported bounds. Text is rendered once per
(text, size, width, colour) into a cached mask; over a one-colour background (nearly always) the
mask blended onto that colour is cached too and copied, so a full 1080x2400 frame costs a few
milliseconds. Pillow's built-in scalable font (``ImageFont.load_default(size=...)``, Pillow >= 10.1)
keeps this free of system fonts.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from android_gym.sim.view import Bounds, View

if TYPE_CHECKING:  # pragma: no cover
    from android_gym.sim.phone import RenderedFrame, SimPhone

_LIGHT = {"page": (255, 255, 255), "text": (31, 31, 31)}
_DARK = {"page": (31, 31, 33), "text": (227, 227, 227)}
_ACCENT = (11, 87, 208)
_TRACK_OFF = (200, 205, 212)
_GREY = (116, 119, 117)


@lru_cache(maxsize=64)
def _font(size_px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size_px)
    except TypeError:  # Pillow < 10.1: fixed-size bitmap font
        return ImageFont.load_default()


@lru_cache(maxsize=256)
def _rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    if len(c) != 6:
        raise ValueError(f"colour {color!r} must be #rrggbb")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


# Characters the built-in font lacks, drawn as look-alikes (the XML keeps the real ones).
_GLYPHS = str.maketrans({"\u2011": "-", "\u2010": "-", "\u2022": "*", "\u2013": "-", "\u2014": "-",
                         "\u00a0": " ", "\u202f": " "})


@lru_cache(maxsize=4096)
def _text_mask(text: str, size_px: int, width: int, max_lines: int, bold: bool) -> Image.Image:
    """A greyscale mask of ``text`` wrapped to ``width`` pixels (at most ``max_lines`` lines)."""
    font = _font(size_px)
    text = text.translate(_GLYPHS)
    per_line = max(1, int(width / (size_px * 0.52)))
    lines: list[str] = []
    for para in text.split("\n"):
        while len(para) > per_line:
            cut = para.rfind(" ", 0, per_line + 1)
            cut = cut if cut > 0 else per_line
            lines.append(para[:cut])
            para = para[cut:].lstrip()
        lines.append(para)
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: max(0, per_line - 1)] + "\u2026"
    line_h = int(size_px * 1.35)
    mask = Image.new("L", (max(1, width), max(1, line_h * len(lines))), 0)
    draw = ImageDraw.Draw(mask)
    for i, line in enumerate(lines):
        draw.text((0, i * line_h + int(size_px * 0.12)), line, fill=255, font=font, stroke_width=1 if bold else 0,
                  stroke_fill=255)
    bbox = mask.getbbox()
    if bbox is not None and bbox[2] < mask.width:
        mask = mask.crop((0, 0, bbox[2], mask.height))
    return mask


@lru_cache(maxsize=4096)
def _text_ink(text: str, size_px: int, width: int, max_lines: int, bold: bool) -> tuple[Image.Image, Bounds | None]:
    """``_text_mask`` and the box of its non-zero pixels (None when blank); only those pixels change the page."""
    mask = _text_mask(text, size_px, width, max_lines, bold)
    return mask, mask.getbbox()


class _TileCache:
    """Text already blended onto a plain background colour, so a repeat is a copy instead of a masked blend.

    Pasting a colour through a mask changes each pixel as a function of that pixel, the colour and the
    mask value only; over a one-colour region the result is therefore fully determined by
    (mask part, colour, background) and can be reused pixel for pixel. Bounded by total pixels.
    """

    MAX_PIXELS = 4_000_000

    def __init__(self) -> None:
        self.tiles: dict[tuple, Image.Image] = {}
        self.pixels = 0
        self.enabled = True  # False: always blend through the mask (tests compare the two paths)

    def get(self, key: tuple, part: Callable[[], Image.Image], color: tuple[int, int, int],
            bg: tuple[int, int, int]) -> Image.Image:
        """The tile for ``key``: ``part()`` (an L mask) blended in ``color`` over ``bg``, made once."""
        tile = self.tiles.get(key)
        if tile is None:
            mask = part()
            tile = Image.new("RGB", mask.size, bg)
            tile.paste(color, (0, 0, mask.width, mask.height), mask)
            n = mask.width * mask.height
            if self.pixels + n > self.MAX_PIXELS:
                self.tiles.clear()
                self.pixels = 0
            self.tiles[key] = tile
            self.pixels += n
        return tile


_TILES = _TileCache()


def _paste_text(img: Image.Image, text: str, view: View, box: tuple[int, int, int, int],
                full: tuple[int, int, int, int], scale: float, color: tuple[int, int, int],
                center_v: bool) -> None:
    size_px = max(6, int(view.size * scale))
    pad_h = int(view.padding[0] * scale)
    pad_v = int(view.padding[1] * scale)
    fx1, fy1, fx2, fy2 = full
    width = max(1, fx2 - fx1 - 2 * pad_h)
    mask, ink = _text_ink(text, size_px, width, view.max_lines, view.bold)
    if ink is None:
        return  # nothing but zero mask pixels: the page stays as it is
    if view.align == "center":
        x = fx1 + (fx2 - fx1 - mask.width) // 2
    elif view.align == "end":
        x = fx2 - pad_h - mask.width
    else:
        x = fx1 + pad_h
    if center_v or mask.height + 2 * pad_v >= fy2 - fy1:
        y = fy1 + (fy2 - fy1 - mask.height) // 2
    else:
        y = fy1 + pad_v
    # Clip to the node's visible box and to the mask's ink (zero mask pixels leave the page unchanged).
    bx1, by1, bx2, by2 = box
    ix1, iy1, ix2, iy2 = ink
    cx1, cy1 = max(x + ix1, bx1), max(y + iy1, by1)
    cx2, cy2 = min(x + ix2, bx2), min(y + iy2, by2)
    if cx2 <= cx1 or cy2 <= cy1:
        return
    rect = (cx1, cy1, cx2, cy2)
    crop = (cx1 - x, cy1 - y, cx2 - x, cy2 - y)
    under = img.crop(rect).getcolors(1) if _TILES.enabled else None
    if under is not None:  # one colour beneath (the usual case): copy a cached pre-blended tile
        key = (text, size_px, width, view.max_lines, view.bold, crop, color, under[0][1])
        img.paste(_TILES.get(key, lambda: mask.crop(crop), color, under[0][1]), rect)
    else:
        img.paste(color, rect, mask.crop(crop))


class _ClippedDraw:
    """ImageDraw whose shapes are skipped when clipping left them empty (a field scrolled half out of view)."""

    def __init__(self, draw: ImageDraw.ImageDraw):
        self._draw = draw

    @staticmethod
    def _empty(box) -> bool:
        x1, y1, x2, y2 = box
        return x2 < x1 or y2 < y1

    def rectangle(self, box, **kwargs) -> None:
        if not self._empty(box):
            self._draw.rectangle(box, **kwargs)

    def rounded_rectangle(self, box, *args, **kwargs) -> None:
        if not self._empty(box):
            self._draw.rounded_rectangle(box, *args, **kwargs)

    def ellipse(self, box, **kwargs) -> None:
        if not self._empty(box):
            self._draw.ellipse(box, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._draw, name)


def render_frame(phone: SimPhone, frame: RenderedFrame) -> np.ndarray:
    """Draw ``frame`` into an HxWx3 uint8 array."""
    dark = phone.settings_get("secure", "ui_night_mode") == "2"
    theme = _DARK if dark else _LIGHT
    W, H, s = phone.width, phone.height, phone.scale
    img = Image.new("RGB", (W, H), theme["page"])
    draw = _ClippedDraw(ImageDraw.Draw(img))
    default_text = theme["text"]
    for e in frame.entries:
        v = e.view
        if not v.painted:  # drawn by its parent's image (a web page's element)
            continue
        x1, y1, x2, y2 = e.bounds
        if e.window == "dialog" and e.depth == 0:
            draw.rectangle((0, frame.app_area[1], W, frame.app_area[3]), fill=(90, 90, 90))
        if v.background:
            bg = _rgb(v.background)
            if dark and e.window in ("app", "dialog") and sum(bg) > 600:
                bg = (48, 48, 52)
            draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=bg)
        if v.picture:
            _paste_picture(img, phone, v.picture, v.bounds, e.bounds)
        if v.image is not None:
            _paste_image(img, v.image(), v.bounds, e.bounds)
        for stroke_color, stroke_dp, points in v.drawing:  # a drawing surface's strokes
            fw, fh = v.bounds[2] - v.bounds[0], v.bounds[3] - v.bounds[1]
            draw.line([(v.bounds[0] + px * fw, v.bounds[1] + py * fh) for px, py in points], fill=_rgb(stroke_color),
                      width=max(1, int(stroke_dp * s)), joint="curve")
        color = _rgb(v.color) if v.color != "#1f1f1f" else default_text
        if not v.enabled:
            color = _GREY
        cls = v.cls
        fx1, fy1, fx2, fy2 = v.bounds
        if cls == "android.widget.Switch":
            cy = (fy1 + fy2) // 2
            tw, th = int(52 * s), int(32 * s)
            tx = fx2 - int(4 * s) - tw
            track = _ACCENT if v.checked else _TRACK_OFF
            draw.rounded_rectangle((tx, cy - th // 2, tx + tw, cy + th // 2), radius=th // 2, fill=track)
            r = int(12 * s)
            kx = tx + tw - th // 2 if v.checked else tx + th // 2
            draw.ellipse((kx - r, cy - r, kx + r, cy + r), fill=(255, 255, 255))
            continue
        if cls in ("android.widget.CheckBox", "android.widget.RadioButton"):
            cy = (fy1 + fy2) // 2
            r = int(10 * s)
            bx = fx1 + int(v.padding[0] * s) + r
            shape = draw.ellipse if cls.endswith("RadioButton") else draw.rectangle
            shape((bx - r, cy - r, bx + r, cy + r), outline=_ACCENT, width=max(2, int(2 * s)),
                  fill=_ACCENT if v.checked else None)
            if v.text:
                _paste_text(img, v.text, View(size=v.size, padding=(v.padding[0] + 28, v.padding[1])),
                            e.bounds, v.bounds, s, color, True)
            continue
        if cls == "android.widget.SeekBar":
            cy = (fy1 + fy2) // 2
            pad = int(v.padding[0] * s)
            frac = 0.0 if v.max_progress <= 0 else max(0.0, min(1.0, v.progress / v.max_progress))
            kx = fx1 + pad + int(frac * (fx2 - fx1 - 2 * pad))
            draw.rectangle((fx1 + pad, cy - 3, fx2 - pad, cy + 3), fill=_TRACK_OFF)
            draw.rectangle((fx1 + pad, cy - 3, kx, cy + 3), fill=_ACCENT)
            r = int(10 * s)
            draw.ellipse((kx - r, cy - r, kx + r, cy + r), fill=_ACCENT)
            continue
        if v.on_text is not None or cls == "android.widget.EditText":
            line_c = _ACCENT if v.focused else _GREY
            draw.rectangle((x1, max(y1, fy2 - 4), x2 - 1, min(y2, fy2) - 1), fill=line_c)
            text = e.text
            if text:
                _paste_text(img, text, v, e.bounds, v.bounds, s, color if v.text else _GREY, v.max_lines == 1)
            continue
        if v.icon is not None and not v.children:
            label = v.icon
            if cls == "android.widget.TextView" and v.text:  # launcher icon: circle over label
                r = int(26 * s)
                cx, cy = (fx1 + fx2) // 2, fy1 + int(8 * s) + r
                draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=_ACCENT)
                _paste_text(img, label[:2], View(size=20, align="center", bold=True), e.bounds,
                            (cx - r, cy - r, cx + r, cy + r), s, (255, 255, 255), True)
                _paste_text(img, v.text, View(size=v.size, align="center", max_lines=1), e.bounds,
                            (fx1, cy + r, fx2, fy2), s, color, True)
                continue
            size = v.size if cls == "android.widget.FrameLayout" else min(18.0, (fy2 - fy1) / s * 0.5)
            _paste_text(img, label, View(size=size, align="center", bold=cls != "android.widget.FrameLayout"),
                        e.bounds, v.bounds, s, color, True)
        if e.text and not v.children:
            _paste_text(img, e.text, v, e.bounds, v.bounds, s, color,
                        cls in ("android.widget.Button", "android.widget.Toast") or v.max_lines == 1)
    return _pixels(img)


_PICTURES: dict[tuple[Any, ...], Image.Image | None] = {}
_PICTURES_MAX = 16


def _paste_picture(img: Image.Image, phone: SimPhone, path: str, box: tuple[int, int, int, int],
                   clip: tuple[int, int, int, int]) -> None:
    """Draw the image file at ``path`` scaled to fit ``box`` (centred, aspect kept), clipped to ``clip``.

    Decoded and scaled pictures are cached by file content and size (a gallery grid repaints them every frame);
    a file that is missing or not an image leaves the node as it is. ``path#t=MS`` is the frame of a video file
    shown at MS milliseconds (decoded with OpenCV when it is installed, else nothing is drawn)."""
    path, _, at = path.partition("#t=")
    try:
        data = phone.files.read(path)
    except Exception:  # noqa: BLE001 - a deleted or unreadable file draws nothing
        return
    w, h = box[2] - box[0], box[3] - box[1]
    if w <= 0 or h <= 0:
        return
    key = (path, len(data), data[:64], data[-64:], w, h, at)
    pic = _PICTURES.get(key, False)
    if pic is False:
        try:
            src = _video_frame(data, int(at)) if at else Image.open(io.BytesIO(data))
            if src is None:
                pic = None
            else:
                src = src.convert("RGB")
                factor = min(w / src.width, h / src.height)
                pic = src.resize((max(1, int(src.width * factor)), max(1, int(src.height * factor))))
        except Exception:  # noqa: BLE001 - not an image Pillow reads
            pic = None
        if len(_PICTURES) >= _PICTURES_MAX:
            _PICTURES.clear()
        _PICTURES[key] = pic
    if pic is None:
        return
    x = box[0] + (w - pic.width) // 2
    y = box[1] + (h - pic.height) // 2
    cx1, cy1, cx2, cy2 = max(clip[0], x), max(clip[1], y), min(clip[2], x + pic.width), min(clip[3], y + pic.height)
    if cx1 >= cx2 or cy1 >= cy2:
        return
    img.paste(pic.crop((cx1 - x, cy1 - y, cx2 - x, cy2 - y)), (cx1, cy1))


def _paste_image(img: Image.Image, pic: Any, box: tuple[int, int, int, int], clip: tuple[int, int, int, int]) -> None:
    """Draw the Pillow image ``pic`` stretched to ``box``, clipped to ``clip`` (nothing for None)."""
    w, h = box[2] - box[0], box[3] - box[1]
    if pic is None or w <= 0 or h <= 0:
        return
    if pic.size != (w, h):
        pic = pic.resize((w, h))
    cx1, cy1, cx2, cy2 = max(clip[0], box[0]), max(clip[1], box[1]), min(clip[2], box[2]), min(clip[3], box[3])
    if cx1 < cx2 and cy1 < cy2:
        img.paste(pic.convert("RGB").crop((cx1 - box[0], cy1 - box[1], cx2 - box[0], cy2 - box[1])), (cx1, cy1))


_VIDEO_FILES: dict[tuple[int, bytes], str] = {}
"""Videos written to temporary files for OpenCV to read, by (size, sha1); removed when the process exits."""


@atexit.register
def _remove_video_files() -> None:
    for path in _VIDEO_FILES.values():
        with contextlib.suppress(OSError):
            os.remove(path)
    _VIDEO_FILES.clear()


def _video_frame(data: bytes, at_ms: int) -> Image.Image | None:
    """The frame of the video ``data`` at ``at_ms`` (its last frame past the end); None without OpenCV or a frame."""
    try:
        import cv2
    except ImportError:
        return None
    import hashlib
    import os
    import tempfile

    key = (len(data), hashlib.sha1(data).digest())
    path = _VIDEO_FILES.get(key)
    if path is None or not os.path.exists(path):
        if len(_VIDEO_FILES) >= 8:
            for old in _VIDEO_FILES.values():
                with contextlib.suppress(OSError):
                    os.remove(old)
            _VIDEO_FILES.clear()
        handle, path = tempfile.mkstemp(suffix=".mp4", prefix="android_gym_video_")
        with os.fdopen(handle, "wb") as fh:
            fh.write(data)
        _VIDEO_FILES[key] = path
    cap = cv2.VideoCapture(path)
    try:
        frames = cap.get(cv2.CAP_PROP_FRAME_COUNT)
        fps = cap.get(cv2.CAP_PROP_FPS) or 0.0
        index = int(at_ms * fps / 1000) if fps > 0 else 0
        if frames > 0:
            index = min(index, int(frames) - 1)
        cap.set(cv2.CAP_PROP_POS_FRAMES, max(0, index))
        ok, frame = cap.read()
    finally:
        cap.release()
    if not ok or frame is None:
        return None
    return Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))


def _pixels(img: Image.Image) -> np.ndarray:
    """``np.asarray(img)`` for an RGB image, packed in one pass into one buffer (no chunk list to join).

    ``tobytes`` packs 64 KiB chunks and joins them, a second copy of the whole frame; the raw encoder
    asked for the full size at once writes it directly. Falls back to ``np.asarray`` if Pillow changes.
    """
    w, h = img.size
    try:
        encoder = Image._getencoder("RGB", "raw", "RGB")
        try:
            encoder.setimage(img.im, (0, 0, w, h))
            _, status, data = encoder.encode(w * h * 3)
        finally:
            encoder.cleanup()
    except (AttributeError, TypeError, ValueError, OSError):
        status, data = 0, b""
    if status != 1 or len(data) != w * h * 3:  # 1: all rows written
        return np.asarray(img, dtype=np.uint8)
    return np.frombuffer(data, dtype=np.uint8).reshape(h, w, 3)
