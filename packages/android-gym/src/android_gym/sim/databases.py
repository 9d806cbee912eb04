"""SQLite files of the simulated apps, built from and read back into their state (the real apps' schemas).

AndroidWorld's checks pull an app's database (``/data/data/<package>/databases/<name>.db``) and read it
with ``sqlite3``; its set-up writes rows into a pulled copy and pushes it back. The simulated apps keep
their data in plain Python state, so an app lists the database paths it answers for
(:attr:`android_gym.sim.app.App.databases`): reading such a file builds it from the state (its real
schema, its rows), and writing one (``adb push``, ``cp``, the ``sqlite3`` shell command) loads the rows
back into the app.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["build_database", "read_table", "run_sql"]


@contextlib.contextmanager
def _opened(data: bytes | None) -> Iterator[tuple[sqlite3.Connection, str]]:
    """A connection to a private on-disk copy of ``data`` (None: an empty database) and that file's path."""
    handle, path = tempfile.mkstemp(prefix="android_gym_db_", suffix=".db")
    os.close(handle)
    try:
        if data:
            with open(path, "wb") as fh:
                fh.write(data)
        conn = sqlite3.connect(path)
        try:
            yield conn, path
        finally:
            conn.close()
    finally:
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path + suffix)


def build_database(schema: Sequence[str], rows: dict[str, Sequence[dict[str, Any]]]) -> bytes:
    """The bytes of a SQLite file made by the ``schema`` statements holding ``rows`` (table -> row dicts)."""
    with _opened(None) as (conn, path):
        for statement in schema:
            conn.execute(statement)
        for table, table_rows in rows.items():
            for row in table_rows:
                cols = list(row)
                quoted = ", ".join(f'"{c}"' for c in cols)  # quoted: real schemas have columns named like keywords
                conn.execute(f"INSERT INTO {table} ({quoted}) VALUES ({', '.join('?' * len(cols))})",
                             [row[c] for c in cols])
        conn.commit()
        conn.close()
        with open(path, "rb") as fh:
            return fh.read()


def read_table(data: bytes, table: str) -> list[dict[str, Any]]:
    """Every row of ``table`` in the SQLite file ``data`` as dicts (ValueError when it is not a database)."""
    with _opened(data) as (conn, _):
        conn.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in conn.execute(f"SELECT * FROM {table}")]
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"cannot read table {table!r}: {exc}") from exc


def run_sql(data: bytes, sql: str) -> tuple[str, bytes | None]:
    """Run ``sql`` on a copy of the SQLite file ``data``: (output in sqlite3's list mode, new bytes or None if unchanged)."""
    with _opened(data) as (conn, path):
        before = conn.total_changes
        lines: list[str] = []
        try:
            for statement in _statements(sql):
                for row in conn.execute(statement):
                    lines.append("|".join("" if v is None else str(v) for v in row))
            conn.commit()
        except sqlite3.Error as exc:
            raise ValueError(f"Error: {exc}") from exc
        changed = conn.total_changes != before
        conn.close()
        if not changed:
            return "".join(f"{ln}\n" for ln in lines), None
        with open(path, "rb") as fh:
            return "".join(f"{ln}\n" for ln in lines), fh.read()


def _statements(sql: str) -> list[str]:
    """``sql`` split into complete statements (semicolons inside quotes kept)."""
    out: list[str] = []
    current = ""
    for piece in sql.split(";"):
        current += piece
        if sqlite3.complete_statement(current + ";"):
            if current.strip():
                out.append(current.strip())
            current = ""
        else:
            current += ";"
    if current.strip():
        out.append(current.strip())
    return out
