r"""K actions for one state from one prompt pass: the prompt's KV cache computed once and shared by the K samples.

Single State Multiple Actions samples K replies to the same prompt. Generating them as K independent rows (what
``generate`` does with a prompt repeated K times, and what TRL's GRPO generation does) runs the prompt through the
model K times: for a screenshot prompt of a vision-language policy that is K passes of the vision encoder and K
prefills of ~1,600 image tokens (1080x2400 at the paper's ``max_pixels`` = 1,270,180), for replies of a few dozen
tokens. :func:`generate_shared_prefix` runs the prompt once per state (all but its last token, batched over the
states), repeats the cache K times along the batch, and lets ``generate`` sample the K continuations from it: the
same distribution as K independent rows (same model, same positions; greedy decoding gives the same tokens up to
floating-point reassociation), at the cost of one prompt pass per state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

__all__ = ["generate_shared_prefix", "repeat_rows"]


def repeat_rows(value: Any, k: int) -> Any:
    """Each row of a batch tensor repeated ``k`` times in place (row 0 K times, then row 1...); others as they are."""
    if isinstance(value, torch.Tensor) and value.dim() > 0:
        return value.repeat_interleave(k, dim=0)
    return value


def _cache_of(output: Any) -> Any:
    # transformers >= 5.2x names the field ``cache``; earlier releases ``past_key_values``.
    cache = getattr(output, "cache", None)
    return cache if cache is not None else getattr(output, "past_key_values", None)


_CACHE_KWARG: dict[type, str] = {}


def _cache_kwarg(model: Any) -> str:
    """The name ``generate`` takes a ready KV cache under: ``cache`` (transformers >= 5.2x) or ``past_key_values``."""
    import inspect

    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    _CACHE_KWARG[type(model)] = name
    return name


def _repeat_rope_deltas(model: torch.nn.Module, batch: int, k: int) -> list[tuple[torch.nn.Module, Any]]:
    """Repeat the per-row rotary offsets multimodal-RoPE models keep after a prefill (Qwen2-VL family); undo list."""
    saved = []
    for module in model.modules():
        deltas = getattr(module, "rope_deltas", None)
        if isinstance(deltas, torch.Tensor) and deltas.dim() > 0 and deltas.shape[0] == batch and k > 1:
            saved.append((module, deltas))
            module.rope_deltas = deltas.repeat_interleave(k, dim=0)
    return saved


@torch.no_grad()
def generate_shared_prefix(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    k: int,
    *,
    prefill_inputs: Mapping[str, Any] | None = None,
    **generate_kwargs: Any,
) -> torch.Tensor:
    """Sample ``k`` continuations of each of the ``B`` prompts with one prompt pass per prompt; ``(B*k, L+new)``.

    ``input_ids``/``attention_mask`` are the ``B`` distinct prompts, left-padded (``(B, L)``). ``prefill_inputs``
    holds what only the prompt pass needs (``pixel_values``, ``image_grid_thw``, ``mm_token_type_ids``...): the
    images are encoded once, there. ``generate_kwargs`` go to ``model.generate`` (``generation_config``,
    ``max_new_tokens``, ``do_sample``...). Rows come back grouped: the ``k`` samples of prompt 0, then of prompt 1,
    each as ``prompt + completion`` like ``generate``'s output.

    Raises ``ValueError`` for ``k < 1``, mismatched shapes, or a prompt shorter than 2 tokens (nothing to share).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k (samples per prompt) must be a positive integer, got {k!r}")
    if input_ids.dim() != 2 or input_ids.shape != attention_mask.shape:
        raise ValueError(f"input_ids {tuple(input_ids.shape)} and attention_mask {tuple(attention_mask.shape)} must "
                         "be the same (batch, length) shape")
    if input_ids.shape[1] < 2:
        raise ValueError("prompts must be at least 2 tokens long to share a prefix (the last one starts decoding)")
    batch = input_ids.shape[0]
    prefill = dict(prefill_inputs or {})
    was_training = model.training
    model.eval()
    saved: list[tuple[torch.nn.Module, Any]] = []
    try:
        # The prompt minus its last token: generate() then feeds that token (every row's is real: left padding).
        # logits_to_keep=1: the prefill's logits are not used, and over a 150k vocabulary they would cost more than
        # the prompt pass itself.
        inputs = {key: (value[:, :-1] if key == "mm_token_type_ids" else value) for key, value in prefill.items()}
        mask = attention_mask[:, :-1]
        if getattr(model.config, "vision_config", None) is None and "position_ids" not in inputs:
            # Positions as generate() counts them (left padding does not shift a prompt); multimodal-RoPE models
            # derive their own from the mask and the image grid.
            inputs["position_ids"] = (mask.long().cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=input_ids[:, :-1], attention_mask=mask, use_cache=True, logits_to_keep=1, **inputs)
        cache = _cache_of(out)
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            raise TypeError(f"{type(model).__name__} returned no repeatable KV cache; generate without sharing")
        del out
        cache.batch_repeat_interleave(k)
        saved = _repeat_rope_deltas(model, batch, k)
        extra = {}
        if "mm_token_type_ids" in prefill:  # per-token, so it travels with the rows (decoding reads its tail)
            extra["mm_token_type_ids"] = repeat_rows(prefill["mm_token_type_ids"], k)
        extra[_CACHE_KWARG.get(type(model)) or _cache_kwarg(model)] = cache
        return model.generate(input_ids=repeat_rows(input_ids, k), attention_mask=repeat_rows(attention_mask, k),
                              **extra, **generate_kwargs)
    finally:
        for module, deltas in saved:
            module.rope_deltas = deltas
        model.train(was_training)
