"""Best-of-N selection with an outcome verifier (ProRe's test-time scaling): score N attempts, keep one.

An agent that can retry a task from the same start state N times (a snapshot, a seeded reset) asks a
verifier which attempt succeeded and keeps that one. :func:`score_candidates` runs any
:class:`~coach_reward.verifiers.OutcomeVerifier` (rule, LLM judge, ProRe probing) on the candidates and turns a
failing verifier into a recorded failure instead of an exception; :func:`select_best` picks the candidate.

Order of preference, fully deterministic: a verdict over no verdict (the verifier failed on it), a decided
verdict over an abstention, the higher score, among decided verdicts the shorter trajectory (fewer steps to the
same outcome), then the earlier candidate. Abstentions do not prefer short attempts: a verifier that cannot tell
says nothing about them, and a short attempt is as often one that gave up early, so undecided ties keep the
earliest (what one attempt would have given). When the verifier failed on every candidate the first one is kept
and the selection says so.

Verifiers that look at the device (rule checks, probing) need each candidate's device in its end state:
either pass ``devices`` aligned with the candidates, or score each attempt right after it ends (call
:func:`score_candidates` on it alone) and give the stored scores to :func:`select_best`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from coach_reward.verifiers import OutcomeVerifier, Verdict, as_trajectory

__all__ = ["CandidateScore", "Selection", "score_candidates", "select_best"]


@dataclass(frozen=True)
class CandidateScore:
    """The verifier's view of one candidate: its verdict, or why there is none."""

    verdict: Verdict | None
    """The verifier's decision (None when it failed on this candidate)."""
    error: str | None = None
    """What went wrong when there is no verdict."""

    @property
    def score(self) -> float | None:
        """The verdict's score in [0, 1] (None without a verdict)."""
        return None if self.verdict is None else float(self.verdict.score)

    @property
    def abstained(self) -> bool:
        """Whether the verifier gave no readable answer (a neutral verdict)."""
        return self.verdict is not None and self.verdict.abstained

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (the verdict without its details)."""
        v = self.verdict
        return {"score": self.score, "success": None if v is None else bool(v.success), "abstained": self.abstained,
                "reason": None if v is None else v.reason, "error": self.error}


@dataclass(frozen=True)
class Selection:
    """Which candidate :func:`select_best` kept, and why."""

    index: int
    """Position of the chosen candidate."""
    scores: list[CandidateScore] = field(default_factory=list)
    """Every candidate's score, in input order."""
    reason: str = ""

    @property
    def chosen(self) -> CandidateScore:
        """The chosen candidate's score."""
        return self.scores[self.index]


def _check_candidates(candidates: Sequence[Any]) -> list[Any]:
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        raise TypeError(f"candidates must be a list of trajectories, got {type(candidates).__name__}")
    if not candidates:
        raise ValueError("no candidates to select from")
    return [as_trajectory(c) for c in candidates]


def _aligned(name: str, values: Sequence[Any] | None, n: int) -> list[Any]:
    if values is None:
        return [None] * n
    values = list(values)
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} entries for {n} candidates")
    return values


def score_candidates(
    candidates: Sequence[Any],
    verifier: OutcomeVerifier,
    *,
    devices: Sequence[Any] | None = None,
    tasks: Sequence[Any] | None = None,
) -> list[CandidateScore]:
    """The verifier's verdict on each candidate (one batched call; per candidate when the batch fails).

    A candidate on which the verifier raises, or returns something that is not a finite ``Verdict``, gets a
    :class:`CandidateScore` without verdict whose ``error`` says why; nothing is raised for it.
    """
    trajectories = _check_candidates(candidates)
    if not callable(getattr(verifier, "verify", None)):
        raise TypeError(f"verifier must be an outcome verifier with verify(), got {type(verifier).__name__}")
    n = len(trajectories)
    devs, tks = _aligned("devices", devices, n), _aligned("tasks", tasks, n)
    batch = getattr(verifier, "verify_batch", None)
    if callable(batch):
        try:
            verdicts = list(batch(trajectories, devices=devs, tasks=tks))
            if len(verdicts) == n:
                return [_checked(v) for v in verdicts]
        except Exception:  # noqa: BLE001 - one bad candidate must not lose the others: retry one by one
            pass
    out = []
    for t, d, k in zip(trajectories, devs, tks):
        try:
            out.append(_checked(verifier.verify(t, device=d, task=k)))
        except Exception as err:  # noqa: BLE001 - a failing verifier is a recorded outcome here
            out.append(CandidateScore(None, f"{type(err).__name__}: {err}"))
    return out


def _checked(verdict: Any) -> CandidateScore:
    if not isinstance(verdict, Verdict):
        return CandidateScore(None, f"the verifier returned {type(verdict).__name__}, not a Verdict")
    if not math.isfinite(verdict.score):
        return CandidateScore(None, f"the verifier returned a non-finite score {verdict.score!r}")
    return CandidateScore(verdict)


def select_best(
    candidates: Sequence[Any],
    verifier: OutcomeVerifier | None = None,
    *,
    scores: Sequence[CandidateScore] | None = None,
    devices: Sequence[Any] | None = None,
    tasks: Sequence[Any] | None = None,
) -> Selection:
    """Pick one of N attempts at the same task instance (see the module docstring for the order).

    Give either a ``verifier`` (the candidates are scored now, with ``devices``/``tasks`` when it needs them)
    or the ``scores`` already computed for them.
    """
    trajectories = _check_candidates(candidates)
    if (verifier is None) == (scores is None):
        raise ValueError("give either a verifier or the candidates' scores, not both or neither")
    if scores is None:
        scores = score_candidates(trajectories, verifier, devices=devices, tasks=tasks)  # type: ignore[arg-type]
    scores = list(scores)
    if len(scores) != len(trajectories):
        raise ValueError(f"scores has {len(scores)} entries for {len(trajectories)} candidates")
    for i, s in enumerate(scores):
        if not isinstance(s, CandidateScore):
            raise TypeError(f"scores[{i}] must be a CandidateScore, got {type(s).__name__}")
    if all(s.verdict is None for s in scores):
        return Selection(0, scores, "the verifier failed on every candidate; kept the first")

    def key(i: int) -> tuple[int, int, float, int, int]:
        s = scores[i]
        if s.verdict is None:
            return (1, 1, 0.0, len(trajectories[i].steps), i)
        length = 0 if s.abstained else len(trajectories[i].steps)
        return (0, int(s.abstained), -float(s.verdict.score), length, i)

    best = min(range(len(trajectories)), key=key)
    s = scores[best]
    ties = sum(1 for i, o in enumerate(scores)
               if i != best and o.verdict is not None and o.abstained == s.abstained and o.score == s.score)
    reason = f"score {s.score:.3f}" + (" (abstained)" if s.abstained else "")
    if ties:
        reason += f"; tied with {ties} other(s), kept the " + ("first" if s.abstained else "shortest, then the first")
    return Selection(best, scores, reason)
