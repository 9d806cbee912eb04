"""MP3 files for the simulated media apps: read title, artist, album and duration (as MediaStore's scanner does)
and write short silent MP3s with ID3 tags (for task set-ups that do not have an encoder).

Reading understands ID3v2.3/2.4 text frames and walks the MPEG audio frames (Layer III of MPEG-1, 2 and
2.5), so the duration is the real one of whatever encoder wrote the file; the Xing/Info frame that
encoders put first is not counted as audio.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

_BITRATES_V1 = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_BITRATES_V2 = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


@dataclass(frozen=True)
class Mp3Info:
    """What a media scanner reads from an MP3: tags (empty when absent) and the duration in ms."""

    title: str
    artist: str
    album: str
    duration_ms: int


def _decode_text(body: bytes) -> str:
    if not body:
        return ""
    enc, raw = body[0], body[1:]
    if enc == 1:
        text = raw.decode("utf-16", "replace")
    elif enc == 2:
        text = raw.decode("utf-16-be", "replace")
    elif enc == 3:
        text = raw.decode("utf-8", "replace")
    else:
        text = raw.decode("latin-1", "replace")
    return text.split("\x00")[0].strip()


def _syncsafe(b: bytes) -> int:
    return (b[0] << 21) | (b[1] << 14) | (b[2] << 7) | b[3]


def _id3(data: bytes) -> tuple[dict[str, str], int]:
    """(text frames by id, offset of the audio after the tag)."""
    if len(data) < 10 or data[:3] != b"ID3":
        return {}, 0
    version = data[3]
    end = 10 + _syncsafe(data[6:10])
    frames: dict[str, str] = {}
    pos = 10
    while pos + 10 <= min(end, len(data)):
        fid = data[pos:pos + 4]
        if not fid.strip(b"\x00"):
            break
        size = _syncsafe(data[pos + 4:pos + 8]) if version >= 4 else int.from_bytes(data[pos + 4:pos + 8], "big")
        body = data[pos + 10:pos + 10 + size]
        if fid.startswith(b"T"):
            frames[fid.decode("latin-1")] = _decode_text(body)
        pos += 10 + size
    return frames, end


def _frame(data: bytes, pos: int) -> tuple[int, int, int] | None:
    """(frame length, samples, sample rate) of the Layer III frame header at ``pos``, or None."""
    if pos + 4 > len(data) or data[pos] != 0xFF or data[pos + 1] & 0xE0 != 0xE0:
        return None
    version = (data[pos + 1] >> 3) & 3
    layer = (data[pos + 1] >> 1) & 3
    bitrate_index = data[pos + 2] >> 4
    rate_index = (data[pos + 2] >> 2) & 3
    padding = (data[pos + 2] >> 1) & 1
    if version == 1 or layer != 1 or bitrate_index in (0, 15) or rate_index == 3:
        return None
    rate = _RATES[version][rate_index]
    if version == 3:
        return 144 * _BITRATES_V1[bitrate_index] * 1000 // rate + padding, 1152, rate
    return 72 * _BITRATES_V2[bitrate_index] * 1000 // rate + padding, 576, rate


def read_mp3(data: bytes) -> Mp3Info | None:
    """Tags and duration of an MP3 file's bytes; None when no MPEG audio frame is found."""
    tags, pos = _id3(data)
    limit = min(len(data), pos + 8192)
    while pos < limit and _frame(data, pos) is None:
        pos += 1
    first = _frame(data, pos)
    if first is None:
        return None
    samples_total = 0
    rate = first[2]
    is_first = True
    while True:
        frame = _frame(data, pos)
        if frame is None:
            break
        length, samples, rate = frame
        header_area = data[pos + 4:pos + 4 + 40]
        if not (is_first and (b"Xing" in header_area or b"Info" in header_area)):
            samples_total += samples
        is_first = False
        pos += length
    return Mp3Info(tags.get("TIT2", ""), tags.get("TPE1", ""), tags.get("TALB", ""),
                   int(round(samples_total * 1000 / rate)))


def clock_text(ms: int) -> str:
    """A duration as the music apps show it: 252000 -> "4:12", 4863000 -> "1:21:03" (whole seconds, rounded down)."""
    seconds = max(0, int(ms)) // 1000
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def media_fields(files: Any, path: str, cache: dict[str, list[Any]]) -> list[Any]:
    """What a media store keeps of the audio file ``path`` on the sim's ``files``: [size, mtime, title, artist,
    album, duration in ms], read from its ID3 tags (the file name, "<unknown>" and "Music" where it has none) and
    cached in ``cache`` until the file changes. The music apps share it, as Android's MediaStore is shared."""
    data = files.files.get(path, b"")
    stamp = [len(data), files.mtimes.get(path, 0)]
    cached = cache.get(path)
    if cached is None or cached[:2] != stamp:
        parsed = read_mp3(data)
        stem = posixpath.splitext(posixpath.basename(path))[0]
        if parsed is None:
            cached = [*stamp, stem, "<unknown>", "Music", 0]
        else:
            cached = [*stamp, parsed.title or stem, parsed.artist or "<unknown>",
                      parsed.album or posixpath.basename(posixpath.dirname(path)), parsed.duration_ms]
        cache[path] = cached
    return cached


def _id3_frame(fid: str, text: str) -> bytes:
    body = b"\x03" + text.encode("utf-8") + b"\x00"
    size = len(body)
    return fid.encode() + bytes([(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F]) + \
        b"\x00\x00" + body


def silent_mp3(title: str, artist: str, duration_ms: int, album: str = "") -> bytes:
    """An MPEG-2.5 Layer III file of ``duration_ms`` of silence (8 kHz, 8 kbit/s) with ID3v2.4 title, artist, album."""
    frames = b"".join(_id3_frame(f, t) for f, t in (("TIT2", title), ("TPE1", artist), ("TALB", album)) if t)
    size = len(frames)
    tag = b"ID3\x04\x00\x00" + bytes([(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F])
    # header: sync, MPEG-2.5, Layer III, no CRC | 8 kbit/s, 8000 Hz, no padding | mono
    header = bytes([0xFF, 0xE3, 0x18, 0xC4])
    frame = header + b"\x00" * (72 * 8 * 1000 // 8000 - 4)
    count = max(1, round(duration_ms * 8000 / 576 / 1000))
    return tag + frames + frame * count
