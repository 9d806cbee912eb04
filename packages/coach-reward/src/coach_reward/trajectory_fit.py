"""Fitting a whole episode into an outcome judge's prompt budget: first and last steps in full, the middle summarised.

An outcome judge reads the episode the way the Figure 9 prompt lays it out (``build_outcome_messages``):
every step's screen and action. Long episodes overflow a judge's context, and cutting the text at an
arbitrary point loses the end, which is where the outcome shows. ``fit_outcome_messages`` shrinks the
prompt in this order and stops at the first form that fits the budget (characters, or tokens when a
token counter is given):

1. every step in full: the prompt is then exactly ``build_outcome_messages``'s;
2. the first ``keep_first`` and the last ``keep_last`` steps in full, the steps between summarised one
   line each (the action, and for actions at a point the label of the element under that point);
3. fewer steps in full: ``keep_last`` down to 1, then ``keep_first`` down to 0 (their steps join the
   summary); the last step, where the outcome shows, is always kept in full;
4. the screens still shown in full (and the final screen) cut to the longest length that fits;
5. the summary thinned from its middle (a line says how many steps were left out), then step 4 again.

If even the fixed part (instructions, task, answer) exceeds the budget, the smallest prompt is
returned with ``fits=False``. Untrusted text goes through ``data_block`` in every form.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from coach_reward.prompts import OUTCOME_SYSTEM_PROMPT, data_block, describe_action

__all__ = [
    "FittedPrompt",
    "fit_outcome_messages",
    "messages_text",
    "render_outcome_messages",
    "step_fields",
    "summarise_step",
]

_BOUNDS = re.compile(r"\[(-?\d+),\s*(-?\d+)\]\s*\[(-?\d+),\s*(-?\d+)\]")
_LEAD_ID = re.compile(r"^\s*\[[^\]\s]{1,24}\]\s*")
_BOUNDS_TAIL = re.compile(r"[:;]?\s*(?:bounds:\s*)?\[-?\d+,\s*-?\d+\]\s*\[-?\d+,\s*-?\d+\]\s*$")
_SUMMARY_LABEL_CHARS = 60


@dataclass(frozen=True)
class FittedPrompt:
    """The judge's chat messages after fitting, and how they were made to fit.

    ``size`` is measured in ``unit`` ("chars" or "tokens") against ``budget``; ``kept_first`` /
    ``kept_last`` steps are in full, ``summarised`` steps are one line each, ``omitted`` of those lines
    were thinned out; ``ui_chars`` is the cut applied to full screens (None: uncut).
    """

    messages: list[dict[str, Any]]
    size: int
    budget: int
    unit: str
    fits: bool
    kept_first: int
    kept_last: int
    summarised: int
    omitted: int
    ui_chars: int | None

    @property
    def note(self) -> str:
        """One line saying what was done to fit (for verdict details and logs)."""
        if not self.summarised and self.ui_chars is None:
            how = "every step in full"
        else:
            how = f"first {self.kept_first} and last {self.kept_last} steps in full"
            if self.summarised:
                how += f", {self.summarised} summarised"
                if self.omitted:
                    how += f" ({self.omitted} of those left out)"
            if self.ui_chars is not None:
                how += f", screens cut to {self.ui_chars} characters"
        state = "fits" if self.fits else "does NOT fit"
        return f"{how}; {self.size} {self.unit} {state} the budget of {self.budget}"


def step_fields(step: Any) -> tuple[str, Any]:
    """(ui text, action) of an android_gym ``Step``, a ``(ui, action)`` pair or a dict with those keys."""
    if isinstance(step, dict):
        return step.get("ui") or "", step.get("action")
    if isinstance(step, tuple) and len(step) == 2:
        return step[0] or "", step[1]
    if hasattr(step, "ui") and hasattr(step, "action"):
        return step.ui or "", step.action
    raise TypeError(f"each step must be an android_gym Step, a (ui, action) pair or a dict, got {type(step).__name__}")


def _target_label(ui: str, x: float, y: float) -> str | None:
    """Label of the smallest UI line whose bounds contain (x, y), read from compressed UI text."""
    best: tuple[int, str] | None = None
    for line in ui.splitlines():
        found = _BOUNDS.findall(line)
        if not found:
            continue
        x1, y1, x2, y2 = (int(v) for v in found[-1])
        if not (x1 <= x < x2 and y1 <= y < y2):
            continue
        area = (x2 - x1) * (y2 - y1)
        label = _BOUNDS_TAIL.sub("", _LEAD_ID.sub("", line))
        label = " ".join(label.replace(";", " ").split())
        if label and (best is None or area < best[0]):
            best = (area, label)
    if best is None:
        return None
    label = best[1]
    return label if len(label) <= _SUMMARY_LABEL_CHARS else label[: _SUMMARY_LABEL_CHARS - 3] + "..."


def summarise_step(index: int, step: Any) -> str:
    """One summary line for a step: ``"7. click(...) on: Button click Save"`` (the label when it can be found)."""
    ui, action = step_fields(step)
    line = f"{index}. {describe_action(action)}"
    x, y = getattr(action, "x", None), getattr(action, "y", None)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and ui:
        label = _target_label(ui, x, y)
        if label:
            line += f" on: {label}"
    return line


def render_outcome_messages(
    instruction: str,
    steps: Sequence[Any],
    *,
    final_ui: str | None = None,
    answer: str | None = None,
    keep_first: int | None = None,
    keep_last: int = 0,
    ui_chars: int | None = None,
    summary_keep: int | None = None,
) -> list[dict[str, Any]]:
    """The outcome-verifier chat with steps ``keep_first`` (None: all) and the last ``keep_last`` in full.

    Steps between are summarised one line each; ``summary_keep`` limits how many summary lines are
    shown (thinned from the middle); ``ui_chars`` cuts every full screen. With the defaults the
    result equals ``build_outcome_messages(instruction, steps, final_ui=..., answer=...)``.
    """
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError("instruction must be a non-empty string")
    n = len(steps)
    first = n if keep_first is None else max(0, min(keep_first, n))
    last = max(0, min(keep_last, n - first))
    middle = list(range(first + 1, n - last + 1))  # 1-based step numbers summarised
    lines = ["The user's task:\n" + data_block("task", instruction), ""]
    if not steps:
        lines.append("The agent took no steps.")

    def full(i: int) -> None:
        ui, action = step_fields(steps[i - 1])
        lines.append(f"Step {i}, screen before the action:")
        lines.append(data_block(f"screen {i}", ui, max_chars=ui_chars))
        lines.append(f"Step {i}, action taken:")
        lines.append(data_block(f"action {i}", describe_action(action)))
        lines.append("")

    for i in range(1, first + 1):
        full(i)
    if middle:
        summary = [summarise_step(i, steps[i - 1]) for i in middle]
        keep = len(summary) if summary_keep is None else max(0, min(summary_keep, len(summary)))
        if keep < len(summary):
            head = (keep + 1) // 2
            tail = keep - head
            gap = middle[head:len(middle) - tail]
            summary = (summary[:head]
                       + [f"... {len(gap)} more steps ({gap[0]} to {gap[-1]}) left out ..."]
                       + (summary[len(summary) - tail:] if tail else []))
        lines.append(f"Steps {middle[0]} to {middle[-1]}, summarised to fit the length limit "
                     "(each action, and the element under it when known):")
        lines.append(data_block("summary", "\n".join(summary)))
        lines.append("")
    for i in range(n - last + 1, n + 1):
        full(i)
    if final_ui is not None:
        lines.append("Final screen after the last action:")
        lines.append(data_block("final screen", final_ui, max_chars=ui_chars))
        lines.append("")
    if answer is not None:
        lines.append("The agent's final answer:")
        lines.append(data_block("answer", answer))
        lines.append("")
    lines.append("Was the task completed?")
    return [
        {"role": "system", "content": OUTCOME_SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def messages_text(messages: Sequence[dict[str, Any]]) -> str:
    """The text of chat messages joined (image parts left out), as measured against a budget."""
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(p["text"] for p in content if p.get("type") == "text")
    return "\n\n".join(out)


def fit_outcome_messages(
    instruction: str,
    steps: Sequence[Any],
    *,
    final_ui: str | None = None,
    answer: str | None = None,
    budget: int = 32000,
    count_tokens: Callable[[str], int] | None = None,
    keep_first: int = 1,
    keep_last: int = 2,
    max_ui_chars: int | None = None,
) -> FittedPrompt:
    """Outcome-verifier messages for the episode that fit ``budget`` (see the module docstring for the order).

    ``budget`` counts characters of the messages' text, or tokens when ``count_tokens(text) -> int`` is
    given. ``max_ui_chars`` cuts every screen in every form (None: screens are only cut when needed).
    """
    if not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be a positive int, got {budget!r}")
    if keep_first < 0 or keep_last < 0:
        raise ValueError(f"keep_first and keep_last must be >= 0, got {keep_first}, {keep_last}")
    if max_ui_chars is not None and max_ui_chars < 0:
        raise ValueError(f"max_ui_chars must be >= 0, got {max_ui_chars}")
    unit = "chars" if count_tokens is None else "tokens"
    n = len(steps)

    def measure(messages: list[dict[str, Any]]) -> int:
        text = messages_text(messages)
        return len(text) if count_tokens is None else int(count_tokens(text))

    def attempt(first: int | None, last: int, cap: int | None, keep: int | None) -> FittedPrompt:
        messages = render_outcome_messages(instruction, steps, final_ui=final_ui, answer=answer, keep_first=first,
                                           keep_last=last, ui_chars=cap, summary_keep=keep)
        size = measure(messages)
        f = n if first is None else min(first, n)
        la = min(last, n - f)
        summarised = n - f - la
        omitted = 0 if keep is None else max(0, summarised - keep)
        return FittedPrompt(messages, size, budget, unit, size <= budget, f if summarised else n, la if summarised else 0,
                            summarised, omitted, cap)

    best = attempt(None, 0, max_ui_chars, None)
    if best.fits:
        return best
    # Steps 2 and 3: fewer steps in full, the rest summarised.
    pairs: list[tuple[int, int]] = []
    f, la = min(keep_first, n), min(max(keep_last, 1), n)  # the last step, where the outcome shows, stays in full
    candidates = [(f, k) for k in range(la, 0, -1)] + [(k, min(la, 1)) for k in range(f - 1, -1, -1)]
    for pair in candidates:
        if pair[0] + pair[1] < n and pair not in pairs:
            pairs.append(pair)
    first, last = (pairs[-1] if pairs else (None, 0))
    for pf, pl in pairs:
        trial = attempt(pf, pl, max_ui_chars, None)
        if trial.fits:
            return trial
        best = trial
    # Step 4: cut the screens still shown in full.
    longest = max([len(step_fields(s)[0]) for s in steps] + [len(final_ui or "")])
    top = longest if max_ui_chars is None else min(longest, max_ui_chars)

    def largest_cap(keep: int | None) -> FittedPrompt | None:
        lo_fit = attempt(first, last, 0, keep)
        if not lo_fit.fits:
            return None
        lo, hi = 0, top  # lo always fits; find the largest cap that fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if attempt(first, last, mid, keep).fits:
                lo = mid
            else:
                hi = mid - 1
        return attempt(first, last, lo, keep)

    fitted = largest_cap(None)
    if fitted is not None:
        return fitted
    # Step 5: thin the summary, then cut the screens as little as possible.
    summarised = best.summarised
    if summarised:
        lo, hi = -1, summarised  # find the most summary lines that fit with screens cut to nothing
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if attempt(first, last, 0, max(mid, 0)).fits:
                lo = mid
            else:
                hi = mid - 1
        if lo >= 0:
            fitted = largest_cap(lo)
            if fitted is not None:
                return fitted
    return attempt(first, last, 0, 0 if summarised else None)
