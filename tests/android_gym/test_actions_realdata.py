"""Every real model-output string in shared/realdata parses to the action we expect, or is rejected clearly.

The expected outcomes live in data/realdata_actions_golden.json (decided by reading each string).
Run with ``-s`` to see the per-file summary of parsed / rejected counts.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from android_gym.actions.parse import parse_action, parse_actions
from android_gym.actions.types import ActionParseError

GOLDEN = Path(__file__).parent / "data" / "realdata_actions_golden.json"

pytestmark = pytest.mark.realdata


def action_strings(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) of every action string in a JSON document.

    Action strings are the values of ``action`` keys, the ``content`` of assistant turns
    (``role == "assistant"`` or ``type == "assistant_message"``), and the same inside
    ``arguments`` strings that hold JSON (tool-call arguments).
    """
    if isinstance(node, dict):
        is_assistant = node.get("role") == "assistant" or node.get("type") == "assistant_message"
        for key, value in node.items():
            here = f"{path}.{key}" if path else key
            if isinstance(value, str):
                if key == "action" or (key == "content" and is_assistant):
                    yield here, value
                elif key == "arguments":
                    try:
                        decoded = json.loads(value)
                    except ValueError:
                        continue
                    yield from action_strings(decoded, here)
            else:
                yield from action_strings(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from action_strings(value, f"{path}[{i}]")


def realdata_strings(root: Path) -> dict[tuple[str, str], str]:
    """Every string under test, keyed by (file, "line N" or JSON path)."""
    out: dict[tuple[str, str], str] = {}
    folder = root / "model_outputs"
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            record = json.loads(line)
            if record.get("role_guess") == "input":
                out[(path.name, f"line {number}")] = record["text"]
    for path in sorted(folder.glob("*.json")):
        for where, text in action_strings(json.loads(path.read_text(encoding="utf-8"))):
            out[(path.name, where)] = text
    return out


def _key(entry: dict[str, Any]) -> tuple[str, str]:
    return entry["file"], (f"line {entry['line']}" if "line" in entry else entry["path"])


def test_realdata_strings_match_golden(realdata: Path) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))["entries"]
    strings = realdata_strings(realdata)
    expected_keys = {_key(e) for e in golden}
    assert set(strings) == expected_keys, (
        f"golden table out of date: missing {sorted(set(strings) - expected_keys)[:5]}, "
        f"stale {sorted(expected_keys - set(strings))[:5]}")

    summary: dict[str, Counter[str]] = {}
    problems: list[str] = []
    for entry in golden:
        key = _key(entry)
        text = strings[key]
        counts = summary.setdefault(entry["file"], Counter())
        if not text.startswith(entry["text_start"]):
            problems.append(f"{key}: text changed, starts {text[:50]!r}")
            continue
        try:
            got: Any = [a.to_dict() for a in parse_actions(text)]
            error = None
        except ActionParseError as exc:
            got, error = "error", str(exc)
        counts["rejected" if got == "error" else "parsed"] += 1
        if got != entry["expected"]:
            problems.append(f"{key}: expected {entry['expected']!r}, got {got!r} {error or ''}")
        elif error is not None and entry["error_contains"] not in error:
            problems.append(f"{key}: error {error!r} does not say {entry['error_contains']!r}")
        elif got != "error":
            assert parse_action(text).to_dict() == got[0]

    for name, counts in sorted(summary.items()):
        print(f"{name}: {counts['parsed']} parsed, {counts['rejected']} rejected")
    assert not problems, "\n".join(problems)


def test_realdata_strings_never_raise_anything_else(realdata: Path) -> None:
    """With other options too (screen size, model spaces), only ActionParseError may come out."""
    options = [
        {"screen_size": (1080, 2400)},
        {"screen_size": (1080, 2400), "coordinates": "relative1000"},
        {"screen_size": (1080, 2400), "coordinates": "smart_resize"},
        {"style": "androidlab"},
        {"style": "androidworld"},
        {"style": "json"},
    ]
    for text in realdata_strings(realdata).values():
        for opts in options:
            try:
                parse_actions(text, **opts)
            except ActionParseError:
                pass
