"""The process reward model: a generative judge that scores one agent step with p(correct).

The judge (Android Coach, Section 3.2 and Figure 10) reads the task, the screen, the history and
the agent's thought and action, reasons in ``<think>...</think>`` and ends with
``judgment:True|False``. ``ProcessRewardModel`` turns that into a number:

* with token log-probabilities (local models, vLLM, servers that return them), ``p_correct`` is
  P(True) / (P(True) + P(False)) at the verdict token, where P sums every alternative token that
  begins the word (so "T"+"rue" tokenisations count as True);
* otherwise 1.0 or 0.0 from the parsed verdict;
* when no verdict can be read, 0.5 (neutral) with the reason recorded; never a silent 0.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from coach_reward.backends import Backend, BackendHTTPError, TokenLogprob
from coach_reward.judgment import Judgment, parse_judgment_detailed
from coach_reward.prompts import build_prm_messages
from coach_reward.verdict_tokens import VerdictWords, verdict_token_probability

__all__ = ["PRMScore", "ProcessRewardModel", "StepInput", "verdict_probability"]

logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class StepInput:
    """One step to judge: the task, what the screen showed, earlier actions, the agent's thought and action."""

    instruction: str
    action: Any
    screenshot: Any = None
    ui: str | None = None
    history: Sequence[Any] = ()
    thought: str = ""


@dataclass(frozen=True)
class PRMScore:
    """A PRM judgment: ``p_correct`` in [0, 1], the parsed ``verdict`` (None if unreadable), the judge's text.

    ``source`` says where ``p_correct`` came from: "logprobs", "text" (parsed verdict) or "neutral"
    (no verdict: 0.5); ``reason`` explains it.
    """

    p_correct: float
    verdict: bool | None
    text: str
    reason: str
    source: str


_JUDGMENT_WORDS = VerdictWords(
    lead=re.compile(r"judge?ment[\s*_`]*[:：=][\s*_`\"'\[(]*$", re.IGNORECASE),
    positive=("true",),
    negative=("false",),
    names=("True", "False"),
)


def verdict_probability(
    text: str, token_logprobs: Sequence[TokenLogprob], judgment: Judgment | None = None
) -> tuple[float | None, str]:
    """P(True) / (P(True) + P(False)) at the verdict token of ``text``, from the top log-probabilities there.

    Returns (None, reason) when the verdict or its token cannot be found, or no True/False alternative is
    listed at that position.
    """
    judgment = judgment or parse_judgment_detailed(text)
    return verdict_token_probability(text, token_logprobs, judgment, _JUDGMENT_WORDS)


PromptBuilder = Callable[[StepInput], list[dict[str, Any]]]


class ProcessRewardModel:
    """Score agent steps with a generative judge behind any ``Backend``.

    ``use_logprobs``: "auto" asks for log-probabilities and falls back to the parsed verdict when the
    backend gives none; True requires them (error otherwise); False never asks. ``prompt_builder``
    replaces the default prompt (``build_prm_messages``) for judges trained on another format.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        use_logprobs: Literal["auto"] | bool = "auto",
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        top_logprobs: int = 20,
        max_ui_chars: int | None = None,
        prompt_builder: PromptBuilder | None = None,
    ):
        if use_logprobs not in ("auto", True, False):
            raise ValueError(f"use_logprobs must be 'auto', True or False, got {use_logprobs!r}")
        if not hasattr(backend, "generate"):
            raise TypeError(f"backend must be a coach_reward Backend (with generate()), got {type(backend).__name__}")
        if use_logprobs and top_logprobs < 2:
            raise ValueError("top_logprobs must be >= 2 to compare True with False (or use use_logprobs=False)")
        self.backend = backend
        self.use_logprobs = use_logprobs
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_logprobs = top_logprobs
        self.max_ui_chars = max_ui_chars
        self.prompt_builder = prompt_builder
        self._logprobs_unsupported = False

    def __repr__(self) -> str:
        return (f"ProcessRewardModel(backend={self.backend!r}, use_logprobs={self.use_logprobs!r}, "
                f"max_new_tokens={self.max_new_tokens}, temperature={self.temperature})")

    def messages(self, step: StepInput) -> list[dict[str, Any]]:
        """The chat messages sent to the judge for ``step``."""
        if self.prompt_builder is not None:
            return self.prompt_builder(step)
        return build_prm_messages(step.instruction, screenshot=step.screenshot, ui=step.ui, history=step.history,
                                  thought=step.thought, action=step.action, max_ui_chars=self.max_ui_chars)

    def score(
        self,
        instruction: str,
        screenshot: Any = None,
        ui: str | None = None,
        history: Sequence[Any] = (),
        thought: str = "",
        action: Any = None,
    ) -> PRMScore:
        """Judge one step (see ``StepInput`` for the fields)."""
        step = StepInput(instruction=instruction, action=action, screenshot=screenshot, ui=ui,
                         history=history, thought=thought)
        return self.score_batch([step])[0]

    def score_batch(self, steps: Sequence[StepInput]) -> list[PRMScore]:
        """Judge many steps with one backend call (the backend batches them)."""
        if not steps:
            return []
        requests = [self.messages(s) for s in steps]
        want = bool(self.use_logprobs) and not (self.use_logprobs == "auto" and self._logprobs_unsupported)
        try:
            outputs = self._generate(requests, want)
        except BackendHTTPError as exc:
            if not (want and self.use_logprobs == "auto" and exc.status in (400, 422)):
                raise
            logger.warning("the backend refused log-probabilities (%s); scoring from parsed verdicts", exc)
            self._logprobs_unsupported = True
            want = False
            outputs = self._generate(requests, want)
        return [self._score(group[0], want) for group in outputs]

    def _generate(self, requests: list[list[dict[str, Any]]], logprobs: bool):
        return self.backend.generate(requests, max_new_tokens=self.max_new_tokens, temperature=self.temperature,
                                     n=1, logprobs=logprobs, top_logprobs=self.top_logprobs if logprobs else 0)

    def _score(self, completion: Any, asked_logprobs: bool) -> PRMScore:
        text = completion.text
        judgment = parse_judgment_detailed(text)
        if judgment.verdict is None:
            return PRMScore(0.5, None, text, f"unparseable judgment, scored neutral: {judgment.reason}", "neutral")
        if asked_logprobs:
            if completion.token_logprobs is None:
                if self.use_logprobs is True:
                    raise ValueError("use_logprobs=True but the backend returned no log-probabilities")
            else:
                p, why = verdict_probability(text, completion.token_logprobs, judgment)
                if p is not None:
                    note = "" if (p >= 0.5) == judgment.verdict else "; note: the probability and the text disagree"
                    return PRMScore(p, judgment.verdict, text, f"{judgment.reason}; {why}{note}", "logprobs")
                if self.use_logprobs is True:
                    raise ValueError(f"use_logprobs=True but the verdict probability is unavailable: {why}")
                return PRMScore(1.0 if judgment.verdict else 0.0, judgment.verdict, text,
                                f"{judgment.reason}; from the text because {why}", "text")
        return PRMScore(1.0 if judgment.verdict else 0.0, judgment.verdict, text, judgment.reason, "text")
