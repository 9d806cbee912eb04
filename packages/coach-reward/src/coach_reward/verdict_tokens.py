"""How much probability a judge put on each side of its verdict, read from the generated tokens' log-probabilities.

Judges end with a verdict word (``judgment:True`` for the PRM, ``<ans>yes</ans>`` for outcome judges).
The score is P(positive) / (P(positive) + P(negative)) at the token that starts that word, summing every
top-log-probability alternative that begins a positive or a negative word ("T" and "True" both count for
True), so tokenisers that split the word are handled.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from coach_reward.backends import TokenLogprob
from coach_reward.judgment import Judgment


@dataclass(frozen=True)
class VerdictWords:
    """The words of one verdict format: how its lead-in looks, and which words mean yes or no."""

    lead: re.Pattern[str]  # matches the text just before the verdict word, anchored at its end
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    names: tuple[str, str]  # how the two sides are named in reasons, e.g. ("True", "False")
    decor: str = " \t\r\n*_`\"'[(:："  # characters that may surround the word inside a token


def _value_part(candidate: str, prefix: str, decor: str) -> str | None:
    """The part of an alternative token that would be the verdict word, given the chosen token's lead-in."""
    if not prefix.strip(decor):
        return candidate.lstrip(decor)
    if candidate.startswith(prefix):
        return candidate[len(prefix):].lstrip(decor)
    return None


def _side(value: str, words: VerdictWords) -> bool | None:
    """True for a piece that begins a positive word, False for a negative one, None otherwise ("not" is neither)."""
    v = value.lower()
    if not v:
        return None
    for candidates, side in ((words.positive, True), (words.negative, False)):
        for word in candidates:
            if word.startswith(v) or (v.startswith(word) and not v[len(word):len(word) + 1].isalnum()):
                return side
    return None


def locate_verdict_token(text: str, tokens: list[str], judgment: Judgment, words: VerdictWords) -> tuple[int, str] | None:
    """Index of the token holding the verdict word's first character, and that token's text before it."""
    assert judgment.span is not None
    start = judgment.span[0]
    if "".join(tokens) == text:
        pos = 0
        for i, tok in enumerate(tokens):
            if pos <= start < pos + len(tok):
                return i, text[pos:start]
            pos += len(tok)
        return None
    # Token texts do not add up to the text (e.g. bytes of split characters): search from the end for the
    # verdict word's first token right after the format's lead-in.
    word = text[judgment.span[0]:judgment.span[1]].lower()
    for i in range(len(tokens) - 1, -1, -1):
        m = re.search(r"[A-Za-z]", tokens[i])
        if not m:
            continue
        value = tokens[i][m.start():].lower()
        if not (word.startswith(value) or value.startswith(word)):
            continue
        lead = "".join(tokens[max(0, i - 8):i]) + tokens[i][:m.start()]
        if words.lead.search(lead):
            return i, tokens[i][:m.start()]
    return None


def verdict_token_probability(
    text: str, token_logprobs: Sequence[TokenLogprob], judgment: Judgment, words: VerdictWords
) -> tuple[float | None, str]:
    """P(positive) / (P(positive) + P(negative)) at the verdict token; (None, reason) when it cannot be read."""
    if judgment.verdict is None or judgment.span is None:
        return None, f"no verdict to score: {judgment.reason}"
    found = locate_verdict_token(text, [t.token for t in token_logprobs], judgment, words)
    if found is None:
        return None, "the verdict token could not be located in the token log-probabilities"
    index, prefix = found
    entry = token_logprobs[index]
    table = dict(entry.top_logprobs)
    table[entry.token] = max(table.get(entry.token, -math.inf), entry.logprob)
    mass = {True: 0.0, False: 0.0}
    for candidate, logprob in table.items():
        value = _value_part(candidate, prefix, words.decor)
        side = _side(value, words) if value is not None else None
        if side is not None and logprob > -math.inf:
            mass[side] += math.exp(logprob)
    yes, no = words.names
    total = mass[True] + mass[False]
    if total <= 0.0:
        return None, f"no {yes}/{no} alternatives among the top log-probabilities at token {index}"
    return mass[True] / total, (
        f"P({yes})={mass[True]:.4g}, P({no})={mass[False]:.4g} at token {index} ({entry.token!r})")
