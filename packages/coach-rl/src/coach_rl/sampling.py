r"""K actions for one state from one prompt pass: the prompt's KV cache computed once and shared by the K samples.

Single State Multiple Actions samples K replies to the same prompt. Generating them as K independent rows (what
``generate`` does with a prompt repeated K times, and what TRL's GRPO generation does) runs the prompt through the
model K times: for a screenshot prompt of a vision-language policy that is K passes of the vision encoder and K
prefills of ~1,600 image tokens (1080x2400 at the paper's ``max_pixels`` = 1,270,180), for replies of a few dozen
tokens. :func:`generate_shared_prefix` runs the prompt once per state (all but its last token, batched over the
states), repeats the cache K times along the batch, and lets ``generate`` sample the K continuations from it: the
same distribution as K independent rows (same model, same positions; greedy decoding gives the same tokens up to
floating-point reassociation), at the cost of one prompt pass per state.

``CoachTrainer`` (:mod:`coach_rl.algorithms.coach`, ``share_prompt_prefix``) finds the groups of K in a TRL generation
batch with :func:`field_layout`: how the batch's multimodal fields (screenshots) split into rows, so one copy per state
is tokenised and prefilled, and the fields of each group compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

__all__ = ["FieldLayout", "field_layout", "generate_shared_prefix", "images_per_row", "repeat_rows"]


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


# -- the groups of K in a TRL generation batch: how its multimodal fields split into rows -----------------------


def images_per_row(images: Any, rows: int) -> list[int]:
    """Images each row shows (TRL's ``images``: one list per row, ``None`` for a row without)."""
    if images is None:
        return [0] * rows
    return [len(row) if row else 0 for row in images]


class FieldLayout:
    """How the multimodal fields of a batch split into rows: per row, per image, or per image patch."""

    def __init__(self, kinds: dict[str, str], image_counts: list[int], patches: list[int]) -> None:
        self.kinds, self.image_counts, self.patches = kinds, image_counts, patches

    def _spans(self, row: int, kind: str) -> tuple[int, int]:
        if kind == "row":
            return row, row + 1
        first = sum(self.image_counts[:row])
        last = first + self.image_counts[row]
        if kind == "image":
            return first, last
        return sum(self.patches[:first]), sum(self.patches[:last])

    def take(self, fields: dict[str, Any], rows: list[int]) -> dict[str, Any]:
        """The fields of ``rows`` (in that order, repeats allowed), in the same layout."""
        out: dict[str, Any] = {}
        for key, value in fields.items():
            kind = self.kinds[key]
            if isinstance(value, (torch.Tensor, np.ndarray)):
                parts = [value[slice(*self._spans(r, kind))] for r in rows]
                join = torch.cat if isinstance(value, torch.Tensor) else np.concatenate
                out[key] = join(parts) if parts else value[:0]
            else:
                out[key] = [value[r] for r in rows]
        return out

    def groups_equal(self, fields: dict[str, Any], k: int) -> bool:
        """Whether each group of ``k`` consecutive rows holds the same values in every field."""
        rows = len(self.image_counts)
        for key, value in fields.items():
            kind = self.kinds[key]
            for row in range(rows):
                first = row - row % k
                if isinstance(value, (torch.Tensor, np.ndarray)):
                    a, b = value[slice(*self._spans(row, kind))], value[slice(*self._spans(first, kind))]
                    if a.shape != b.shape or not bool((a == b).all()):
                        return False
                elif value[row] != value[first]:
                    return False
        return True


def field_layout(fields: dict[str, Any], image_counts: list[int]) -> FieldLayout | None:
    """Classify each multimodal field (Qwen-VL style: ``image_grid_thw`` per image, ``pixel_values`` per patch).

    ``None`` when a field fits no known layout: the caller then leaves the batch to TRL as it is.
    """
    rows, n_images = len(image_counts), sum(image_counts)
    grid = fields.get("image_grid_thw")
    arrays = (torch.Tensor, np.ndarray)
    patches = [int(p) for p in grid.prod(-1).tolist()] if isinstance(grid, arrays) and grid.ndim == 2 else []
    kinds: dict[str, str] = {}
    for key, value in fields.items():
        is_array = isinstance(value, arrays) and value.ndim > 0
        size = value.shape[0] if is_array else (len(value) if isinstance(value, list) else -1)
        if size == rows and key != "pixel_values":
            kinds[key] = "row"
        elif is_array and size == n_images and key != "pixel_values":
            kinds[key] = "image"
        elif is_array and len(patches) == n_images and patches and size == sum(patches):
            kinds[key] = "patch"
        else:
            return None
    return FieldLayout(kinds, image_counts, patches)
