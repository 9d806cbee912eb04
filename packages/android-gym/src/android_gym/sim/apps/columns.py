"""Reading the simulated apps' content-provider values: integer columns and the epoch-millisecond times
that calendar and expense rows store (naive wall-clock times read as UTC, as the real providers do)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

EPOCH = dt.datetime(1970, 1, 1)


def to_ms(when: dt.datetime) -> int:
    """Epoch milliseconds of a naive wall-clock datetime read as UTC."""
    return int((when - EPOCH).total_seconds() * 1000)


def from_ms(ms: int) -> dt.datetime:
    """The naive wall-clock datetime of epoch milliseconds (UTC)."""
    return EPOCH + dt.timedelta(milliseconds=int(ms))


def number_value(value: Any, name: str, table: str) -> int:
    """``value`` as an int (``"12"``, ``"12.0"`` and ``12`` alike); a clear error naming ``table``'s column."""
    try:
        return int(float(value))
    except (TypeError, ValueError):
        raise ValueError(f"{table} column {name!r} must be a number, got {value!r}") from None


def int_column(values: Mapping[str, Any], key: str, default: int) -> int:
    """The integer in ``values[key]`` (``default`` when the column is not given); an error naming a bad value."""
    if key not in values:
        return default
    try:
        return int(str(values[key]).strip())
    except ValueError:
        raise ValueError(f"column {key!r} must be an integer, got {values[key]!r}") from None
