"""Fixtures for coach_reward tests: one tiny offline model per test session (building one takes ~0.3 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coach_reward.tiny_models import build_tiny_causal_lm


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny Qwen2 model + tokenizer folder (loads with the Auto classes, offline)."""
    path = tmp_path_factory.mktemp("tiny-model")
    build_tiny_causal_lm(path, seed=0)
    return path


@pytest.fixture(scope="session")
def tiny_lm():
    """(model, tokenizer) of a tiny random Qwen2 model; treat as read-only (shared by the session)."""
    return build_tiny_causal_lm(seed=0)
