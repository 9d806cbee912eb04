"""coach-reward: process reward models and outcome verifiers for Android GUI agents."""

from coach_reward.backends import (
    Backend,
    BackendConnectionError,
    BackendError,
    BackendHTTPError,
    BackendTimeoutError,
    ChatRequest,
    Completion,
    OpenAIBackend,
    TokenLogprob,
    TransformersBackend,
    VLLMBackend,
)
from coach_reward.gguf_models import GGUFConversion, GGUFError, convert_gguf, packaged_gguf
from coach_reward.judgment import (
    Judgment,
    parse_judgment,
    parse_judgment_detailed,
    parse_outcome_verdict,
    parse_outcome_verdict_detailed,
)
from coach_reward.prm import PRMScore, ProcessRewardModel, StepInput, verdict_probability
from coach_reward.probing import (
    BackendProbeAgent,
    Probe,
    ProbeAborted,
    ProbeResult,
    ProbingVerifier,
    parse_probes,
    probe_claims,
    rule_judgement,
    scripted_evaluator,
    trajectory_claims,
)
from coach_reward.prompts import (
    OUTCOME_SYSTEM_PROMPT,
    PRM_SYSTEM_PROMPT,
    build_outcome_messages,
    build_prm_messages,
    sanitize_untrusted,
)
from coach_reward.selection import CandidateScore, Selection, score_candidates, select_best
from coach_reward.server import ChatCompletionServer, serve
from coach_reward.trajectory_fit import FittedPrompt, fit_outcome_messages
from coach_reward.verifiers import (
    LAST_SCREEN_SYSTEM_PROMPT,
    BackendJudge,
    CompositeVerifier,
    LastScreenshotJudge,
    LLMJudgeVerifier,
    MajorityVote,
    OutcomeVerifier,
    RuleVerifier,
    Verdict,
    VerificationError,
    answer_probability,
    final_view,
)

__version__ = "0.1.0"

__all__ = [
    "BackendProbeAgent",
    "Probe",
    "ProbeAborted",
    "ProbeResult",
    "ProbingVerifier",
    "parse_probes",
    "probe_claims",
    "rule_judgement",
    "scripted_evaluator",
    "trajectory_claims",
    "FittedPrompt",
    "fit_outcome_messages",
    "LAST_SCREEN_SYSTEM_PROMPT",
    "BackendJudge",
    "CompositeVerifier",
    "LastScreenshotJudge",
    "LLMJudgeVerifier",
    "MajorityVote",
    "OutcomeVerifier",
    "RuleVerifier",
    "VerificationError",
    "Verdict",
    "answer_probability",
    "final_view",
    "OUTCOME_SYSTEM_PROMPT",
    "PRM_SYSTEM_PROMPT",
    "Backend",
    "BackendConnectionError",
    "BackendError",
    "BackendHTTPError",
    "BackendTimeoutError",
    "ChatCompletionServer",
    "ChatRequest",
    "Completion",
    "Judgment",
    "OpenAIBackend",
    "PRMScore",
    "ProcessRewardModel",
    "StepInput",
    "TokenLogprob",
    "TransformersBackend",
    "VLLMBackend",
    "build_outcome_messages",
    "build_prm_messages",
    "build_tiny_causal_lm",
    "build_tiny_tokenizer",
    "build_tiny_vision_lm",
    "parse_judgment",
    "parse_judgment_detailed",
    "parse_outcome_verdict",
    "parse_outcome_verdict_detailed",
    "sanitize_untrusted",
    "serve",
    "verdict_probability",
    "CandidateScore",
    "Selection",
    "score_candidates",
    "select_best",
    "GGUFConversion",
    "GGUFError",
    "convert_gguf",
    "packaged_gguf",
]

_LAZY = {"build_tiny_causal_lm": "coach_reward.tiny_models", "build_tiny_tokenizer": "coach_reward.tiny_models",
         "build_tiny_vision_lm": "coach_reward.tiny_models"}
"""Names imported on first use: the tiny-model builders import transformers (seconds), which a process that only
builds prompts or scores through a server (a Ray device worker, a coach-rl subprocess) never needs."""


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'coach_reward' has no attribute {name!r}")
