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
from coach_reward.judgment import (
    Judgment,
    parse_judgment,
    parse_judgment_detailed,
    parse_outcome_verdict,
    parse_outcome_verdict_detailed,
)
from coach_reward.prm import PRMScore, ProcessRewardModel, StepInput, verdict_probability
from coach_reward.prompts import (
    OUTCOME_SYSTEM_PROMPT,
    PRM_SYSTEM_PROMPT,
    build_outcome_messages,
    build_prm_messages,
    sanitize_untrusted,
)
from coach_reward.server import ChatCompletionServer, serve
from coach_reward.tiny_models import build_tiny_causal_lm, build_tiny_tokenizer, build_tiny_vision_lm

__version__ = "0.1.0"

__all__ = [
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
]
