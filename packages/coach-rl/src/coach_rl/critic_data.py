r"""Critic pre-training data: ``(state, action, label)`` triples at demonstrated states (paper Appendix B).

Android Coach pre-trains the critic on PRM-labelled steps before online training, so that Q starts out
ranking actions the way the process reward does (without it the values diverge). The states are the policy's
own templated prompts at the expert's demonstrated states (the strings the critic scores online); the actions
are the expert's answer, ``samples`` answers sampled from the warmed-up policy, and ``contrast`` answers of
other demonstrated states with as many splices of two answers (the malformed mixtures a policy drifts into
under RL). With ``screen_negatives`` (beyond the paper) each state also gets the other demonstrated states' answers
re-aimed at the same element of THIS screen (``click 25`` on 'Display' from the dark-theme task becomes a click on
this screen's 'Display', whatever its number), and their non-index answers when their screen shows the same
elements: the choices other goals make on a shared screen, which a small policy confuses and a critic that reads
the screen but not the goal scores high. Labels come from one of two judges:

* ``"match"``: whether the answer reads as the expert's action here (the PRM dataset's action-match rule);
* ``"prm"``: the run's process reward model (``coach_reward.ProcessRewardModel``, one batched call), 1 when it
  judges the step correct (p >= 0.5); steps it cannot judge are left out.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

__all__ = ["CRITIC_LABELS", "critic_pretrain_examples", "other_goal_answers", "prm_dataset_examples"]

_LINE_RE = re.compile(r"^\[(\d+)\] ")

CRITIC_LABELS: tuple[str, ...] = ("match", "prm")
"""Who labels the critic's pre-training actions: the expert action match, or the run's PRM."""


def prm_dataset_examples(path: str) -> list[tuple[str, str, int]]:
    """Triples from a PRM dataset saved by coach_reward (``critic_pretrain_dataset``)."""
    from coach_reward.prm_data import load_prm_dataset, to_critic_pretrain_examples

    return to_critic_pretrain_examples(load_prm_dataset(path))


def _candidates(records: list[Any], policy: Any, samples: int, contrast: int, seed: int) -> list[list[str]]:
    """Per demonstrated state: the policy's samples, other states' answers and splices (expert answer excluded)."""
    requests = [r.request for r in records]
    outputs = policy.act([q for q in requests for _ in range(samples)], greedy=False) if samples else []
    picker = np.random.default_rng(seed)
    out = []
    for i, record in enumerate(records):
        texts = [o.text for o in outputs[i * samples:(i + 1) * samples]]
        if contrast and len(records) > 1:
            others = picker.choice(len(records), size=min(contrast, len(records)), replace=False)
            for j in others.tolist():
                other = records[j].answer
                texts.append(other)
                cut_a = int(picker.integers(1, max(2, len(record.answer))))
                cut_b = int(picker.integers(0, max(1, len(other))))
                texts.append(record.answer[:cut_a] + other[cut_b:])
        seen = {record.answer.strip()}
        unique = []
        for text in texts:
            if text.strip() not in seen:
                seen.add(text.strip())
                unique.append(text)
        out.append(unique)
    return out


def _screen_targets(state: str) -> dict[str, int]:
    """What each element index of the screen rendered in ``state`` names (``screen_index_target``) -> its index."""
    from coach_rl.prompting import screen_index_target

    _, _, screen = state.rpartition("## Screen\n")
    out: dict[str, int] = {}
    for line in screen.splitlines():
        match = _LINE_RE.match(line)
        if match:
            target = screen_index_target(state, f'"index": {match.group(1)}')
            if target is not None:
                out.setdefault(target, int(match.group(1)))
    return out


def other_goal_answers(states: list[str], answers: list[str], *, min_overlap: float = 0.8) -> list[list[str]]:
    """Per state: the other states' answers as they would be given on this screen (see the module docstring).

    An index answer is re-aimed at the element of this screen that its own screen's index named (left out when this
    screen has no such element); other answers are taken from states whose actionable elements overlap this one's
    by at least ``min_overlap`` (Jaccard). Answers equal to the state's own are left out; labels come later.
    """
    from coach_rl.prompting import _INDEX_RE, screen_index_target

    targets = [_screen_targets(state) for state in states]
    actionable = [{t for t in ts if t.split()[-1] in ("click", "long-click") or " click " in t} for ts in targets]
    out = []
    for i in range(len(states)):
        seen = {answers[i].strip()}
        found: list[str] = []
        for j, answer in enumerate(answers):
            if j == i:
                continue
            match = _INDEX_RE.search(answer)
            if match is not None:
                target = screen_index_target(states[j], answer)
                index = targets[i].get(target) if target is not None else None
                if index is None:
                    continue
                text = answer[:match.start(1)] + str(index) + answer[match.end(1):]
            else:
                union = actionable[i] | actionable[j]
                if not union or len(actionable[i] & actionable[j]) / len(union) < min_overlap:
                    continue
                text = answer
            if text.strip() not in seen:
                seen.add(text.strip())
                found.append(text)
        out.append(found)
    return out


def critic_pretrain_examples(policy: Any, demos: Any, *, samples: int = 4, contrast: int = 2, seed: int = 0,
                             labels: str = "match", prm: Any = None,
                             screen_negatives: bool = False) -> list[tuple[str, str, int]]:
    """``(state, action, label)`` triples at the states of ``demos`` (see the module docstring)."""
    if labels not in CRITIC_LABELS:
        raise ValueError(f"labels must be one of {CRITIC_LABELS}, got {labels!r}")
    if labels == "prm" and not callable(getattr(prm, "score_batch", None)):
        raise ValueError("critic_pretrain_labels=prm needs the run's process reward model (use_prm with a learned "
                         "prm_model, not the sim oracle)")
    if demos is None or not len(demos):
        raise ValueError("critic pre-training needs demonstrations (policy_model: tiny or sft_instances_per_task > 0) "
                         "or a critic_pretrain_dataset")
    records = list(demos.records)
    candidates = _candidates(records, policy, samples, contrast, seed)
    states = [policy.prompt_text_for(record.request) for record in records]
    if screen_negatives:
        for texts, extra in zip(candidates, other_goal_answers(states, [r.answer for r in records])):
            known = {t.strip() for t in texts}
            texts.extend(t for t in extra if t.strip() not in known)
    examples: list[tuple[str, str, int]] = []
    pending: list[tuple[str, str, Any]] = []  # (state, text, StepInput) for the PRM
    for record, texts, state in zip(records, candidates, states):
        examples.append((state, record.answer, 1))
        for text in texts:
            _, action = policy.format.parse(text, record.request)
            if labels == "match":
                examples.append((state, text, int(action == record.action)))
            else:
                pending.append((state, text, _step_input(record.request, text, action)))
    if pending:
        scores = prm.score_batch([p[2] for p in pending])
        for (state, text, _), score in zip(pending, scores):
            if score.verdict is not None and math.isfinite(score.p_correct):
                examples.append((state, text, int(score.p_correct >= 0.5)))
    return examples


def _step_input(request: Any, text: str, action: Any) -> Any:
    """What the PRM judges for one candidate: the task, the screen, the earlier actions, thought and action."""
    from coach_reward.prm import StepInput
    from coach_rl.prompting import split_thought_action

    thought, _ = split_thought_action(text)
    history = [s.action if s.action is not None else s.response for s in request.history]
    from android_gym.actions import Action

    return StepInput(instruction=request.instruction, action=action if isinstance(action, Action) else text,
                     screenshot=request.screenshot, ui=request.ui, history=history, thought=thought)

