r"""The actor update with the K replies of a state sharing one pass over its prompt (``share_prompt_update``).

TRL's loss forward runs every row as ``prompt + completion``: the K replies of a state each carry the whole prompt
(~2,300 tokens at real size, for replies of a few dozen), so the forward and backward of an actor update grow
linearly with K. Here the rows whose prompts are identical are **packed** into one sequence::

    prompt[:-1] | prompt[-1] c_1[:-1] | prompt[-1] c_2[:-1] | ... | prompt[-1] c_K[:-1]

with a block attention mask: the prompt is causal, and segment ``i`` sees the whole prompt and (causally) itself,
never another segment. Segment ``i`` repeats the prompt's last token so that its positions ``0..C-1`` predict
``c_i[0..C-1]`` exactly as the unshared row's last prompt token and completion do, with the same position ids (the
prompt's last position, then onward). Every completion token thus attends to the same keys and values at the same
relative positions as in its own row: the per-token log-probs (and entropies) are those of the unshared path up to
floating-point reassociation, and so are the loss and the gradients (the prompt's activations get the sum of the K
replies' gradients, which the unshared path sums over K copies). The prompt runs once per state, forward and
backward.

Vision-language policies (Qwen2-VL / Qwen2.5-VL style: ``pixel_values`` per image patch, ``image_grid_thw``,
multimodal RoPE) pack the same way: the screenshot goes through the vision tower once per state, the prompt keeps
the 3D positions the model's own ``get_rope_index`` gives it, and the replies continue from its last position as text
after an image does (:func:`vlm_prompt_inputs` gives both from a TRL batch; :func:`split_by_images` packs rows
together only when their screenshots are equal pixel for pixel, not just their text).

``CoachTrainer`` (:mod:`coach_rl.algorithms.coach`) runs its log-prob passes through :func:`shared_prefix_logps`, and
:func:`shuffle_groups` shuffles its generated batches by whole groups of K, so a state's replies stay in one micro-batch.

Limits: the mask is an explicit 4D mask, which the "sdpa" and "eager" attention implementations take (flash
attention does not: those models keep the unshared path, with a warning). Other multimodal layouts (video, tiles)
keep the unshared path too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import Any

import torch

__all__ = ["SHARED_ATTENTION", "VLM_FIELDS", "group_rows", "pack_groups", "shared_prefix_logps",
           "shuffle_groups", "split_by_images", "vlm_prompt_inputs"]

SHARED_ATTENTION: tuple[str, ...] = ("sdpa", "eager")
"""Attention implementations that take the explicit 4D block mask of the packed sequence."""


def group_rows(input_ids: torch.Tensor, attention_mask: torch.Tensor, completion_length: int) -> list[list[int]]:
    """The rows of a ``(B, P + C)`` batch grouped by identical prompt (its real tokens), in order of first appearance.

    The prompt part is ``input_ids[:, :-completion_length]`` (left padded: the mask marks its real tokens).
    """
    prompt_ids = input_ids[:, :-completion_length].cpu()
    prompt_mask = attention_mask[:, :-completion_length].cpu().bool()
    index: dict[tuple[int, ...], int] = {}
    groups: list[list[int]] = []
    for row in range(prompt_ids.shape[0]):
        key = tuple(prompt_ids[row][prompt_mask[row]].tolist())
        if key not in index:
            index[key] = len(groups)
            groups.append([])
        groups[index[key]].append(row)
    return groups


def pack_groups(
    input_ids: torch.Tensor, attention_mask: torch.Tensor, completion_length: int, groups: list[list[int]],
    *, attention: str = "sdpa", pad_id: int = 0, prompt_positions: list[torch.Tensor] | None = None,
) -> dict[str, Any]:
    """The packed sequences of ``groups`` (one per group): ``input_ids``, 4D ``attention_mask``, ``position_ids``,
    ``shift_labels`` (each position's next-token label, -100 where nothing is scored) and ``where``: for each
    original row, ``(packed row, first position)`` of its C predicting positions.

    ``attention`` "sdpa" gives a boolean mask (True: may attend), "eager" an additive float one.
    ``prompt_positions`` (one ``(D, P)`` tensor per group, e.g. a VLM's 3D multimodal-RoPE positions of its prompt)
    replaces the plain ``0..P-1`` prompt positions; each reply then continues from its last prompt position, as the
    text after an image does. ``position_ids`` is then ``(D, G, L)``.
    """
    c = int(completion_length)
    if c < 1:
        raise ValueError(f"completion_length must be >= 1, got {completion_length!r}")
    completion = input_ids[:, -c:].cpu()
    completion_mask = attention_mask[:, -c:].cpu().bool()
    prompt_ids = input_ids[:, :-c].cpu()
    prompt_mask = attention_mask[:, :-c].cpu().bool()
    packed: list[torch.Tensor] = []
    labels: list[torch.Tensor] = []
    positions: list[torch.Tensor] = []
    segments: list[torch.Tensor] = []  # per position: -1 the shared prompt, i >= 0 the i-th reply's segment
    where: dict[int, tuple[int, int]] = {}
    for g, rows in enumerate(groups):
        prompt = prompt_ids[rows[0]][prompt_mask[rows[0]]]
        p = prompt.numel()
        if p < 1:
            raise ValueError(f"row {rows[0]} has an empty prompt: its first completion token has no context")
        ids = [prompt[:-1]]
        lab = [torch.full((p - 1,), -100, dtype=torch.long)]
        if prompt_positions is not None:
            given = prompt_positions[g].cpu().long()
            if given.dim() != 2 or given.shape[1] != p:
                raise ValueError(f"prompt_positions[{g}] must be (D, {p}), got {tuple(given.shape)}")
            pos = [given[:, :-1]]
        else:
            pos = [torch.arange(p - 1)[None]]
        seg = [torch.full((p - 1,), -1, dtype=torch.long)]
        start = p - 1
        for i, row in enumerate(rows):
            ids.append(torch.cat([prompt[-1:], completion[row, :-1]]))
            lab.append(torch.where(completion_mask[row], completion[row], torch.full_like(completion[row], -100)))
            pos.append(torch.arange(p - 1, p - 1 + c)[None] if prompt_positions is None
                       else given[:, -1:] + torch.arange(c)[None])
            seg.append(torch.full((c,), i, dtype=torch.long))
            where[row] = (g, start)
            start += c
        packed.append(torch.cat(ids))
        labels.append(torch.cat(lab))
        positions.append(torch.cat(pos, dim=1))
        segments.append(torch.cat(seg))
    width = max(t.numel() for t in packed)
    n = len(groups)
    out_ids = torch.full((n, width), pad_id, dtype=torch.long)
    out_labels = torch.full((n, width), -100, dtype=torch.long)
    dims = positions[0].shape[0]
    out_pos = torch.zeros((dims, n, width), dtype=torch.long)
    out_seg = torch.full((n, width), -2, dtype=torch.long)  # -2: padding of the packed batch
    for g in range(n):
        length = packed[g].numel()
        out_ids[g, :length], out_labels[g, :length] = packed[g], labels[g]
        out_pos[:, g, :length], out_seg[g, :length] = positions[g], segments[g]
    q_seg, k_seg = out_seg[:, :, None], out_seg[:, None, :]
    idx = torch.arange(width)
    causal = idx[None, :, None] >= idx[None, None, :]
    allowed = causal & (k_seg != -2) & (q_seg != -2) & ((k_seg == -1) | (k_seg == q_seg))
    allowed |= torch.eye(width, dtype=torch.bool)[None]  # padding attends to itself: no empty row, no NaN
    mask = allowed[:, None]
    if attention == "eager":
        mask = torch.zeros(mask.shape, dtype=torch.float32).masked_fill(~mask, torch.finfo(torch.float32).min)
    elif attention != "sdpa":
        raise ValueError(f"the packed block mask needs the 'sdpa' or 'eager' attention, not {attention!r}")
    return {"input_ids": out_ids, "attention_mask": mask,
            "position_ids": out_pos[0] if prompt_positions is None else out_pos, "shift_labels": out_labels,
            "where": where}


def shared_prefix_logps(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    completion_length: int,
    groups: list[list[int]],
    *,
    attention: str = "sdpa",
    compute_entropy: bool = False,
    rows_per_chunk: int | None = None,
    autocast: Callable[[], Any] | None = None,
    pad_id: int = 0,
    prompt_positions: list[torch.Tensor] | None = None,
    extra_inputs: Callable[[list[int]], dict[str, Any]] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token log-probs (and entropies) of the completions, ``(B, C)`` like TRL's, from one prompt pass per group.

    ``model`` must take ``fused_lm_head=True`` with ``shift_labels`` (TRL's ``add_fused_lm_head``, which every
    GRPO-family trainer adds). Positions that score nothing (completion padding) give 0, as in TRL's path.
    ``rows_per_chunk`` caps the original rows per forward (whole groups; at least one group per forward).
    ``prompt_positions`` (per group) and ``extra_inputs(group indices of a forward) -> model kwargs`` (a VLM's
    ``pixel_values`` and ``image_grid_thw`` of those groups' prompts, in that order) serve vision-language models.
    """
    c = int(completion_length)
    device = input_ids.device
    b = input_ids.shape[0]
    logps = torch.zeros((b, c), device=device)
    entropies = torch.zeros((b, c), device=device) if compute_entropy else None
    chunks: list[list[int]] = []  # group indices per forward
    current: list[int] = []
    size = 0
    cap = rows_per_chunk or b
    for index, rows in enumerate(groups):
        if current and size + len(rows) > cap:
            chunks.append(current)
            current, size = [], 0
        current.append(index)
        size += len(rows)
    if current:
        chunks.append(current)
    logp_parts: list[tuple[list[int], torch.Tensor]] = []
    entropy_parts: list[tuple[list[int], torch.Tensor]] = []
    for indices in chunks:
        chunk = [groups[i] for i in indices]
        positions = [prompt_positions[i] for i in indices] if prompt_positions is not None else None
        batch = pack_groups(input_ids, attention_mask, c, chunk, attention=attention, pad_id=pad_id,
                            prompt_positions=positions)
        where = batch.pop("where")
        inputs = {k: v.to(device) for k, v in batch.items()}
        if extra_inputs is not None:
            inputs.update(extra_inputs(indices))
        with (autocast() if autocast is not None else nullcontext()):
            out = model(**inputs, fused_lm_head=True)
        rows = [r for group in chunk for r in group]
        g_idx = torch.tensor([where[r][0] for r in rows], device=device)
        pos = torch.tensor([where[r][1] for r in rows], device=device)[:, None] + torch.arange(c, device=device)
        logp_parts.append((rows, out.log_probs[g_idx[:, None], pos]))
        if compute_entropy:
            entropy_parts.append((rows, out.entropy[g_idx[:, None], pos]))
    order = [r for rows, _ in logp_parts for r in rows]
    inverse = torch.empty(b, dtype=torch.long, device=device)
    inverse[torch.tensor(order, device=device)] = torch.arange(b, device=device)
    logps = torch.cat([t for _, t in logp_parts])[inverse]
    if compute_entropy:
        entropies = torch.cat([t for _, t in entropy_parts])[inverse]
    return logps, entropies


# -- a TRL batch's vision-language rows, and its groups of K kept together --------------------------------------------


VLM_FIELDS = frozenset({"pixel_values", "image_grid_thw", "num_images", "mm_token_type_ids"})
"""The multimodal inputs of a Qwen-VL-style row the shared update knows how to pack (screenshots, no video)."""


def _image_spans(multimodal: Mapping[str, Any]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Per row: its ``(first, last)`` images in ``image_grid_thw`` and its ``(first, last)`` patches in ``pixel_values``."""
    counts = [int(n) for n in multimodal["num_images"]]
    patches = [int(p) for p in multimodal["image_grid_thw"].prod(-1).tolist()]
    images, rows_patches = [], []
    first_image = first_patch = 0
    for n in counts:
        size = sum(patches[first_image:first_image + n])
        images.append((first_image, first_image + n))
        rows_patches.append((first_patch, first_patch + size))
        first_image += n
        first_patch += size
    return images, rows_patches


def split_by_images(groups: list[list[int]] | None, multimodal: Mapping[str, Any]) -> list[list[int]] | None:
    """Groups of rows with the same prompt text AND the same screenshots (pixel for pixel): two states can share
    their text (the image placeholders only count patches) and differ in what the screen shows."""
    if groups is None:
        return None
    images, patches = _image_spans(multimodal)
    grid, pixels = multimodal["image_grid_thw"], multimodal["pixel_values"]

    def same(a: int, b: int) -> bool:
        (ia, ja), (ib, jb) = images[a], images[b]
        (pa, qa), (pb, qb) = patches[a], patches[b]
        return (ja - ia == jb - ib and qa - pa == qb - pb and torch.equal(grid[ia:ja], grid[ib:jb])
                and torch.equal(pixels[pa:qa], pixels[pb:qb]))

    out: list[list[int]] = []
    for rows in groups:
        split: list[list[int]] = []
        for row in rows:
            for part in split:
                if same(part[0], row):
                    part.append(row)
                    break
            else:
                split.append([row])
        out.extend(split)
    return out


def vlm_prompt_inputs(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, completion_length: int,
                      groups: list[list[int]], multimodal: Mapping[str, Any]) -> dict[str, Any]:
    """What a Qwen-VL-style policy needs for the packed prompts: each group's multimodal-RoPE positions (its
    ``get_rope_index`` over the prompt, images at their grid positions) and, per forward, its screenshots' patches."""
    images, patches = _image_spans(multimodal)
    grid, pixels = multimodal["image_grid_thw"], multimodal["pixel_values"]
    token_types = multimodal.get("mm_token_type_ids")
    config = model.config
    positions = []
    for rows in groups:
        row = rows[0]
        real = attention_mask[row, :-completion_length].bool()
        ids = input_ids[row, :-completion_length][real]
        if token_types is not None:
            types = token_types[row, :-completion_length][real]
        else:
            types = (ids == getattr(config, "image_token_id", -1)).int()
        first, last = images[row]
        pos, _ = model.model.get_rope_index(ids[None], mm_token_type_ids=types[None].int(),
                                            image_grid_thw=grid[first:last], attention_mask=torch.ones_like(ids)[None])
        positions.append(pos[:, 0])

    def extra(indices: list[int]) -> dict[str, Any]:
        rows = [groups[i][0] for i in indices]
        return {"pixel_values": torch.cat([pixels[slice(*patches[r])] for r in rows]),
                "image_grid_thw": torch.cat([grid[slice(*images[r])] for r in rows])}

    return {"prompt_positions": positions, "extra_inputs": extra}


def shuffle_groups(batch: dict[str, Any], k: int) -> dict[str, Any]:
    """The rows of a generation batch with its groups of ``k`` consecutive rows in a random order (global torch RNG,
    as TRL's row shuffle); each group's rows stay together and in order."""
    rows = len(next(v for v in batch.values() if v is not None and not (isinstance(v, torch.Tensor) and v.ndim == 0)))
    if rows % k:
        raise RuntimeError(f"{rows} rows do not form whole groups of K={k}")
    order = (torch.randperm(rows // k)[:, None] * k + torch.arange(k)[None]).reshape(-1)

    def take(value: Any) -> Any:
        if value is None or (isinstance(value, torch.Tensor) and value.ndim == 0):
            return value
        if isinstance(value, torch.Tensor):
            return value[order]
        return [value[i] for i in order.tolist()]

    return {key: take(value) for key, value in batch.items()}
