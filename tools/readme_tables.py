"""The README tables that tools write: the text between two marker lines, replaced in place."""

from __future__ import annotations

from pathlib import Path


def replace_readme_block(readme: Path, begin: str, end: str, table: str, *, write: bool) -> bool:
    """Put ``table`` between the ``begin`` and ``end`` marker lines of ``readme``; whether that changed the file.

    With ``write`` false nothing is written (a ``--check`` run). Exits naming the file when a marker is missing.
    """
    text = readme.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f"{readme} lacks the marker lines {begin!r} ... {end!r}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{begin}\n{table}\n{end}{tail}"
    if write and new != text:
        readme.write_text(new)
    return new != text
