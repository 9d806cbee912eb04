r"""Critic pre-training data: ``(state, action, label)`` triples at demonstrated states (paper Appendix B).

Android Coach pre-trains the critic on PRM-labelled steps before online training, so that Q starts out
ranking actions the way the process reward does (without it the values diverge). The states are the policy's
own templated prompts at the expert's demonstrated states (the strings the critic scores online); the actions
are the expert's answer, ``samples`` answers sampled from the warmed-up policy, and ``contrast`` answers of
other demonstrated states with as many splices of two answers (the malformed mixtures a policy drifts into
under RL). Labels come from one of two judges:

* ``"match"``: whether the answer reads as the expert's action here (the PRM dataset's action-match rule);
* ``"prm"``: the run's process reward model (``coach_reward.ProcessRewardModel``, one batched call), 1 when it
  judges the step correct (p >= 0.5); steps it cannot judge are left out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["CRITIC_LABELS", "critic_pretrain_examples", "prm_dataset_examples"]

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


def critic_pretrain_examples(policy: Any, demos: Any, *, samples: int = 4, contrast: int = 2, seed: int = 0,
                             labels: str = "match", prm: Any = None) -> list[tuple[str, str, int]]:
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
    examples: list[tuple[str, str, int]] = []
    pending: list[tuple[str, str, Any]] = []  # (state, text, StepInput) for the PRM
    for record, texts in zip(records, candidates):
        state = policy.prompt_text_for(record.request)
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

