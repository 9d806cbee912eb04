"""Reading verdicts out of judge outputs: PRM step judgments and outcome-verifier answers.

A process reward model writes ``<think>...</think> judgment:True`` (or False); an outcome verifier
writes ``<analysis>...</analysis> <ans>yes</ans>`` (or no). Real model outputs are messy, and the
reasoning often quotes text from the screen, so parsing is tolerant about form but strict about
place: only verdicts *outside* the reasoning blocks count, and the last one wins. When no verdict can
be read the result says why (``Judgment.reason``); a missing verdict is never turned into False.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "JUDGMENT_PATTERN",
    "OUTCOME_PATTERN",
    "Judgment",
    "parse_judgment",
    "parse_judgment_detailed",
    "parse_outcome_verdict",
    "parse_outcome_verdict_detailed",
    "reasoning_spans",
]

# Markdown and quoting characters tolerated around the keyword, the separator and the value.
_DECOR = r"[\s*_`\"'\[\(]*"

JUDGMENT_PATTERN = re.compile(
    r"(?<![A-Za-z0-9_])judge?ment[\s*_`]*[:：=]" + _DECOR + r"(?P<value>true|false)(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
"""``judgment:True`` and tolerated variants (case, spacing, full-width colon, markdown, ``judgement``)."""

OUTCOME_PATTERN = re.compile(
    # ``</ans>`` as the opening tag is accepted too: the paper's own Figure 9 writes it that way.
    r"<\s*/?\s*ans\s*>" + _DECOR + r"(?P<value>yes|no|true|false)(?![A-Za-z0-9_])[\s*_`\"'\]\).!]*"
    r"(?:<\s*/\s*ans\s*>|$)",
    re.IGNORECASE,
)
"""``<ans>yes</ans>`` / ``<ans>no</ans>`` (also true/false, spacing, markdown, a missing close at the end)."""

# A verdict next to "or"/"|"/"/" and the other value on the same line ("judgment:True or judgment:False",
# "True|False") is the output format echoed back, not a verdict. Same line only, so that text a judge copies
# onto the next line cannot cancel its verdict.
_ECHO_AFTER = re.compile(
    r"[ \t*_`\"'\)\]]*(?:or|\||/)[ \t]*(?:judge?ment[ \t*_`]*[:：=])?[ \t*_`\"'\(\[]*(?:true|false|yes|no)\b",
    re.IGNORECASE,
)
_ECHO_BEFORE = re.compile(r"(?:true|false|yes|no)[ \t*_`\"'\)\]]*(?:or|\||/)[ \t]*$", re.IGNORECASE)

_REASONING_TAGS = ("think", "analysis")


@dataclass(frozen=True)
class Judgment:
    """A parsed verdict: ``verdict`` is True/False, or None with ``reason`` saying why it could not be read.

    ``span`` is the (start, end) character range of the verdict word in the original text (used to
    find its token for probability scoring); ``candidates`` counts verdicts seen outside reasoning.
    """

    verdict: bool | None
    reason: str
    span: tuple[int, int] | None = None
    candidates: int = 0


def reasoning_spans(text: str, tags: tuple[str, ...] = _REASONING_TAGS) -> tuple[list[tuple[int, int]], str | None]:
    """Character ranges of reasoning blocks (``<think>...</think>`` and the like) in ``text``.

    Blocks are matched as balanced pairs; a stray closing tag (the opening one was in the prompt)
    makes everything before it reasoning; an unclosed opening tag makes everything after it
    reasoning. Returns the ranges and a note when the text had such an unbalanced tag.
    """
    names = "|".join(re.escape(t) for t in tags)
    tag_re = re.compile(rf"<\s*(?P<close>/)?\s*(?P<name>{names})\s*>", re.IGNORECASE)
    spans: list[tuple[int, int]] = []
    note: str | None = None
    depth = 0
    start = 0
    for m in tag_re.finditer(text):
        if m.group("close"):
            if depth > 0:
                depth -= 1
                if depth == 0:
                    spans.append((start, m.end()))
            else:
                # Stray close: the reasoning began before this output (e.g. the template opened it).
                spans = [(0, m.end())]
                note = f"stray </{m.group('name')}> at character {m.start()}; text before it treated as reasoning"
        else:
            if depth == 0:
                start = m.start()
            depth += 1
    if depth > 0:
        spans.append((start, len(text)))
        note = f"reasoning block opened at character {start} is never closed"
    return _merge(spans), note


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(s <= pos < e for s, e in spans)


def _parse(text: str, pattern: re.Pattern[str], truthy: tuple[str, ...], what: str) -> Judgment:
    if not isinstance(text, str):
        raise TypeError(f"expected the judge's output as str, got {type(text).__name__}")
    if not text.strip():
        return Judgment(None, "empty output")
    spans, note = reasoning_spans(text)
    found: list[re.Match[str]] = []
    ignored_inside = 0
    ignored_echo = 0
    for m in pattern.finditer(text):
        if _inside(m.start(), spans):
            ignored_inside += 1
        elif _ECHO_AFTER.match(text, m.end("value")) or _ECHO_BEFORE.search(text[max(0, m.start() - 20):m.start()]):
            ignored_echo += 1
        else:
            found.append(m)
    if not found:
        parts = [f"no {what} outside the reasoning"]
        if ignored_inside:
            parts.append(f"{ignored_inside} inside reasoning ignored")
        if ignored_echo:
            parts.append(f"{ignored_echo} echoed output-format template(s) ignored")
        if note:
            parts.append(note)
        return Judgment(None, "; ".join(parts))
    last = found[-1]
    value = last.group("value").lower()
    verdict = value in truthy
    reason = f"{what} {last.group('value')!r} at character {last.start('value')}"
    if len(found) > 1:
        values = {m.group("value").lower() in truthy for m in found}
        kind = "conflicting" if len(values) > 1 else "repeated"
        reason += f"; {len(found)} {kind} verdicts outside reasoning, the last one used"
    if ignored_inside:
        reason += f"; {ignored_inside} inside reasoning ignored"
    return Judgment(verdict, reason, span=(last.start("value"), last.end("value")), candidates=len(found))


def parse_judgment_detailed(text: str) -> Judgment:
    """Parse a PRM output's ``judgment:True|False``; the last verdict outside ``<think>`` blocks wins."""
    return _parse(text, JUDGMENT_PATTERN, ("true",), "judgment")


def parse_judgment(text: str) -> bool | None:
    """The PRM verdict in ``text`` (True/False), or None when no verdict can be read (see ``parse_judgment_detailed``)."""
    return parse_judgment_detailed(text).verdict


def parse_outcome_verdict_detailed(text: str) -> Judgment:
    """Parse an outcome verifier's ``<ans>yes|no</ans>``; the last answer outside reasoning/analysis wins."""
    return _parse(text, OUTCOME_PATTERN, ("yes", "true"), "answer")


def parse_outcome_verdict(text: str) -> bool | None:
    """Whether the verifier judged the task done (True/False), or None when no answer can be read."""
    return parse_outcome_verdict_detailed(text).verdict
