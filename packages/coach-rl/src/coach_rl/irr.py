r"""Iterative Reasoning Refinement (IRR, MobileRL §4.2): reasoning for action-only demonstrations, bootstrapped.

Expert demonstrations usually hold only the action taken at each screen. IRR lets a model write the
missing reasoning itself and keeps only reasoning that leads to the expert's action:

- **round 0** (bootstrap): the model (an instruct model, or the action-only SFT policy) proposes ``K``
  reasoning + action candidates per demonstrated step, sampled at ``temperature``; a candidate whose action
  matches the expert's (``coach_reward.prm_data.match_actions``, the PRM dataset's rule) is kept;
- **fine-tune** (``coach_rl.sft.sft_warmup``) on the kept (screen, reasoning, expert action) rows;
- **round t**: the fine-tuned model proposes again; per step the best matching explanation replaces the
  earlier one; repeat while the **match rate** (matching candidates / all candidates) rises, for at most
  ``rounds`` rounds.

Per step the explanation kept is the most concise and most likely among the matching candidates: a candidate
with reasoning before one without, then the fewest words of reasoning, then the highest mean token
log-probability of the reply, then the earliest candidate.

The dataset rows are TRL prompt-completion pairs in the policy's own prompt format, the completion
``Thought: <reasoning>\nAction: <expert answer>``: :func:`coach_rl.sft.sft_warmup` reads them
(:func:`load_irr_dataset`). Demonstrations come from the simulated phone's experts (:func:`irr_steps_from_demos`)
or AndroidControl-format files (:func:`irr_steps_from_expert_steps` over ``coach_reward.prm_data.read_androidcontrol``).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from android_gym.actions import Action, ActionFormatError
from android_gym.trajectory import Step
from coach_rl.policy import HFPolicy, PolicyFormat, PolicyRequest, json_safe_messages

__all__ = ["IRRCandidate", "IRRResult", "IRRRound", "IRRStep", "irr_steps_from_demos", "irr_steps_from_expert_steps",
           "iterative_reasoning_refinement", "load_irr_dataset", "pick_explanation", "plot_match_rate",
           "write_irr_dataset"]


@dataclass
class IRRStep:
    """One demonstrated step: what the policy is asked, the expert's action and that action as the policy's answer."""

    request: PolicyRequest
    expert: Action
    answer: str
    """The expert action written in the policy's format (index JSON or a UI-TARS call)."""
    key: str
    """A stable id (source, episode, step) for the dataset row."""


@dataclass
class IRRCandidate:
    """One sampled reply: its reasoning, parsed action, whether it matches the expert, and its likelihood."""

    text: str
    thought: str
    matched: bool
    mean_logprob: float
    """Mean token log-probability of the reply under the model that wrote it."""


@dataclass
class IRRRound:
    """What one round measured."""

    round: int
    match_rate: float
    """Matching candidates / all candidates."""
    steps_matched: int
    """Steps with at least one matching candidate."""
    candidates: int
    dataset_rows: int
    """Rows of the dataset after this round."""
    with_reasoning: int
    """Rows whose kept explanation has non-empty reasoning."""
    sft_steps: int = 0
    """Fine-tuning steps run after this round (0 for the last)."""
    seconds: float = 0.0


@dataclass
class IRRResult:
    """The rounds and the final dataset (TRL prompt-completion rows, one per step that ever matched)."""

    rounds: list[IRRRound] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""

    @property
    def match_rates(self) -> list[float]:
        """The match rate of every round, in order."""
        return [r.match_rate for r in self.rounds]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary (without the rows)."""
        return {"rounds": [asdict(r) for r in self.rounds], "rows": len(self.rows), "stopped": self.stopped}


def irr_steps_from_demos(demos: Any) -> list[IRRStep]:
    """IRR steps from a :class:`coach_rl.demos.DemoSet` (the sim's expert episodes, already in the policy's format)."""
    steps = []
    for r in demos.records:
        steps.append(IRRStep(r.request, r.action, r.answer, f"sim:{r.task}:{r.seed}:{r.step_index}"))
    if not steps:
        raise ValueError("the demonstrations hold no steps")
    return steps


def irr_steps_from_expert_steps(expert_steps: Iterable[Any], fmt: PolicyFormat) -> tuple[list[IRRStep], int]:
    """IRR steps from ``coach_reward.prm_data.ExpertStep``s (AndroidControl files, recorded trajectories).

    The expert action is written in ``fmt`` (use ``action_format="uitars"`` for data without element lists);
    steps the format cannot express are skipped. Returns the steps and how many were skipped.
    """
    out: list[IRRStep] = []
    skipped = 0
    for s in expert_steps:
        history = [Step(ui="", action=None, response=f"Action: {h}") for h in s.history]
        request = PolicyRequest(instruction=s.instruction, ui=s.ui, elements=list(s.elements) or None,
                                screenshot=s.screenshot if fmt.mode != "xml" else None, history=history,
                                screen_size=tuple(s.screen_size))
        try:
            answer = fmt.answer_for(s.expert, request)
        except (ActionFormatError, ValueError):
            skipped += 1
            continue
        out.append(IRRStep(request, s.expert, answer, f"{s.source or 'file'}:{s.episode_id}:{s.step_index}"))
    return out, skipped


def _completion(thought: str, answer: str) -> str:
    thought = " ".join(thought.split())
    return f"Thought: {thought}\nAction: {answer}" if thought else answer


def pick_explanation(candidates: Sequence[IRRCandidate]) -> int | None:
    """Index of the explanation to keep among ``candidates`` (None when none matches); see the module docstring."""
    matching = [i for i, c in enumerate(candidates) if c.matched]
    if not matching:
        return None

    def key(i: int) -> tuple[int, int, float, int]:
        c = candidates[i]
        words = len(c.thought.split())
        return (0 if words else 1, words, -c.mean_logprob, i)

    return min(matching, key=key)


def _sample(policy: HFPolicy, steps: Sequence[IRRStep], k: int, match: Callable[[Any, IRRStep], bool]
            ) -> list[list[IRRCandidate]]:
    requests = [s.request for s in steps for _ in range(k)]
    outputs = policy.act(requests)
    groups: list[list[IRRCandidate]] = []
    for i, step in enumerate(steps):
        group = []
        for out in outputs[i * k:(i + 1) * k]:
            logps = out.token_logprobs or []
            mean = sum(logps) / len(logps) if logps else -math.inf
            group.append(IRRCandidate(out.text, out.thought or "", match(out.action, step), mean))
        groups.append(group)
    return groups


def iterative_reasoning_refinement(
    model: Any,
    tokenizer: Any,
    steps: Sequence[IRRStep],
    *,
    fmt: PolicyFormat,
    k: int = 4,
    rounds: int = 3,
    temperature: float = 1.0,
    max_new_tokens: int = 128,
    sft_steps: int = 50,
    sft_learning_rate: float = 1e-5,
    sft_batch_size: int = 8,
    tolerance: float | None = None,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
) -> IRRResult:
    """Run IRR on ``steps`` with ``model`` (fine-tuned in place between rounds); see the module docstring.

    ``k`` candidates per step and round, at most ``rounds`` rounds, each followed (unless it is the last or
    the match rate stopped rising) by ``sft_steps`` fine-tuning steps on the dataset so far. ``tolerance``:
    the click-distance tolerance of the match rule (default: the PRM dataset's). ``log`` gets one line per round.
    """
    import torch

    from coach_reward.prm_data import DEFAULT_TOLERANCE, match_actions
    from coach_rl.sft import sft_warmup

    steps = list(steps)
    if not steps:
        raise ValueError("no demonstrated steps to refine")
    for name, value in (("k", k), ("rounds", rounds), ("max_new_tokens", max_new_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(sft_steps, bool) or not isinstance(sft_steps, int) or sft_steps < 0:
        raise ValueError(f"sft_steps must be an integer >= 0, got {sft_steps!r}")
    tol = DEFAULT_TOLERANCE if tolerance is None else tolerance

    def match(action: Any, step: IRRStep) -> bool:
        width = (step.request.screen_size or (1080, 2400))[0]
        return action is not None and match_actions(action, step.expert, screen_width=int(width), tolerance=tol).match

    policy = HFPolicy(model, tokenizer, format=fmt, max_new_tokens=max_new_tokens, temperature=temperature,
                      record_logprobs=True)
    result = IRRResult()
    chosen: dict[str, tuple[IRRStep, IRRCandidate]] = {}
    for r in range(rounds):
        started = time.perf_counter()
        torch.manual_seed(seed + r)
        groups = _sample(policy, steps, k, match)
        matched = sum(c.matched for g in groups for c in g)
        rate = matched / (len(steps) * k)
        for step, group in zip(steps, groups):
            best = pick_explanation(group)
            if best is not None:
                chosen[step.key] = (step, group[best])
        rows = [_row(policy, step, cand) for step, cand in chosen.values()]
        result.rows = rows
        info = IRRRound(round=r, match_rate=rate, steps_matched=sum(any(c.matched for c in g) for g in groups),
                        candidates=len(steps) * k, dataset_rows=len(rows),
                        with_reasoning=sum(bool(c.thought.strip()) for _, c in chosen.values()))
        result.rounds.append(info)
        previous = result.rounds[-2].match_rate if len(result.rounds) > 1 else None
        if previous is not None and rate <= previous:
            result.stopped = f"the match rate stopped rising ({previous:.3f} -> {rate:.3f})"
        elif r == rounds - 1:
            result.stopped = f"reached rounds={rounds}"
        elif not rows:
            result.stopped = "no candidate matched the expert: nothing to fine-tune on"
        elif sft_steps > 0:
            sft_warmup(model, tokenizer, rows, max_steps=sft_steps, learning_rate=sft_learning_rate,
                       per_device_train_batch_size=sft_batch_size, seed=seed + r)
            info.sft_steps = sft_steps
        info.seconds = time.perf_counter() - started
        if log is not None:
            log(f"IRR round {r}: match rate {rate:.3f} ({matched}/{len(steps) * k} candidates, "
                f"{info.steps_matched}/{len(steps)} steps), dataset {len(rows)} rows "
                f"({info.with_reasoning} with reasoning)")
        if result.stopped:
            break
        if sft_steps == 0:
            result.stopped = "sft_steps=0: one bootstrap round only"
            break
    return result


def _row(policy: HFPolicy, step: IRRStep, cand: IRRCandidate) -> dict[str, Any]:
    return {"prompt": json_safe_messages(policy.messages_for(step.request)),
            "completion": [{"role": "assistant", "content": _completion(cand.thought, step.answer)}],
            "id": step.key}


def write_irr_dataset(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write the rows as JSON lines (prompt, completion, id)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def load_irr_dataset(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The prompt-completion rows of an IRR dataset file, ready for :func:`coach_rl.sft.sft_warmup`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no IRR dataset at {path}")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{n}: not JSON ({err})") from err
        if not isinstance(row, dict) or "prompt" not in row or "completion" not in row:
            raise ValueError(f"{path}:{n}: a row needs 'prompt' and 'completion'")
        rows.append({"prompt": row["prompt"], "completion": row["completion"]})
    return rows


def plot_match_rate(result: IRRResult, path: str | os.PathLike[str]) -> Path:
    """A PNG of the match rate per round."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    rounds = [r.round for r in result.rounds]
    ax.plot(rounds, result.match_rates, marker="o")
    ax.set_xticks(rounds)
    ax.set_xlabel("IRR round")
    ax.set_ylabel("match rate")
    ax.set_ylim(0, 1)
    ax.set_title("Iterative Reasoning Refinement")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
