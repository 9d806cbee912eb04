"""The actor update's cost in K with and without ``share_prompt_update`` (the K replies sharing one prompt pass).

One Android Coach actor update step as ``CoachTrainer`` runs it: the Eq. 4 loss over ``--states`` states with K
replies each (``CoachTrainer._compute_loss``: the policy's per-token log-probs of every reply given its prompt, the
clipped surrogate), its backward and an AdamW step, timed for every K in ``--k``, with the prompt shared
(:mod:`coach_rl.prefix_update`: one packed sequence per state) and unshared (TRL's K rows, each with the whole
prompt). Prompts of ``--prompt-tokens`` (the real recipe's ~2,300) and replies of ``--reply-tokens`` random token ids:
the cost depends on the lengths, not on the text. Also checks, per K, that both ways give the same loss.

Models: ``tiny`` (a small Qwen2 built locally, CPU) or ``qwen2.5-3b`` / ``qwen2.5-7b`` (the text backbones' public
sizes with RANDOM weights, bf16 on CUDA, gradient checkpointing on; no download). This bench isolates the text
path of the update; the real-size vision-language recipe measures the whole iteration with and without the shared
update in tools/bench/real_size_path.py (``--compare-unshared-update``).

CPU::

    .venv/bin/python tools/bench/shared_prefix_update.py --model tiny --k 1 4 8 --out /tmp/shared_update_cpu.json

GPU (one call)::

    python3 tools/bench/shared_prefix_update.py --model qwen2.5-3b --k 1 4 8 --prompt-tokens 2300 \
        --reply-tokens 64 --out $OUT/shared_update_3b.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

__all__ = ["ARCHS", "main", "parse_args", "time_update"]

ARCHS: dict[str, dict[str, int]] = {
    "qwen2.5-3b": {"hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16,
                   "num_key_value_heads": 2, "vocab_size": 151936},
    "qwen2.5-7b": {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
                   "num_key_value_heads": 4, "vocab_size": 152064},
}
"""The public Qwen2.5 text configs' sizes (random weights are built from them: nothing is downloaded)."""


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def build(name: str, seed: int) -> tuple[Any, Any]:
    """The policy and its tokenizer: the tiny Qwen2, or a real-size architecture with random weights (CUDA)."""
    from coach_reward.tiny_models import build_tiny_causal_lm

    model, tok = build_tiny_causal_lm(seed=seed)
    if name == "tiny":
        return model, tok
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(**ARCHS[name], max_position_embeddings=32768, tie_word_embeddings=name == "qwen2.5-3b",
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                         attn_implementation="sdpa")
    with torch.device("cuda"):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    return model, tok


def _inputs(states: int, k: int, prompt_tokens: int, reply_tokens: int, vocab: int, pad: int,
            seed: int) -> dict[str, torch.Tensor]:
    """A generated batch as TRL lays it out: each state's (left-padded) prompt K times, K replies, advantages."""
    g = torch.Generator().manual_seed(seed)
    lengths = [max(2, prompt_tokens - 7 * i) for i in range(states)]  # distinct lengths: left padding is exercised
    width = max(lengths)
    prompt_ids = torch.full((states * k, width), pad, dtype=torch.long)
    prompt_mask = torch.zeros((states * k, width), dtype=torch.long)
    for s, n in enumerate(lengths):
        ids = torch.randint(5, vocab, (n,), generator=g)
        for r in range(s * k, (s + 1) * k):
            prompt_ids[r, width - n:], prompt_mask[r, width - n:] = ids, 1
    completion_ids = torch.randint(5, vocab, (states * k, reply_tokens), generator=g)
    completion_mask = torch.ones_like(completion_ids)
    return {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "completion_ids": completion_ids,
            "completion_mask": completion_mask, "advantages": torch.randn(states * k, generator=g),
            # the sampling policy's log-probs (a reused batch): the loss then depends on the current log-probs
            "old_per_token_logps": -7.0 + 0.5 * torch.randn((states * k, reply_tokens), generator=g),
            "num_items_in_batch": completion_mask.sum()}


def _one_update(trainer: Any, batch: dict[str, torch.Tensor], shared: bool) -> tuple[float, float, float | None]:
    """Seconds, loss and peak GPU GiB of one loss forward + backward + optimiser step."""
    trainer.args.share_prompt_update = shared
    model = trainer.model_wrapped
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    _sync()
    started = time.perf_counter()
    loss = trainer._compute_loss(model, batch)
    loss.backward()
    trainer.optimizer.step()
    trainer.optimizer.zero_grad(set_to_none=True)
    _sync()
    seconds = time.perf_counter() - started
    peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None
    return seconds, float(loss.detach()), peak


def time_update(trainer: Any, inputs: dict[str, torch.Tensor], repeats: int) -> dict[str, dict[str, Any]]:
    """Both ways, interleaved (unshared, shared, unshared, ...) so that a busy machine slows both alike; the first
    update of each way is untimed (warm-up) and checks the loss (same weights: the optimiser has not moved yet at
    that point, learning rate aside). Reported: the fastest and the median of ``repeats`` timed updates."""
    model = trainer.model_wrapped
    model.train()
    device = next(model.parameters()).device
    batch = {key: value.to(device) for key, value in inputs.items()}
    snapshot = {n: p.detach().clone() for n, p in model.named_parameters()}
    out: dict[str, dict[str, Any]] = {way: {"all_seconds": [], "peak_gib": None} for way in ("unshared", "shared")}
    for i in range(repeats + 1):
        for way in ("unshared", "shared"):
            if i == 0:
                with torch.no_grad():  # both ways' checked loss from the same weights
                    for n, p in model.named_parameters():
                        p.copy_(snapshot[n])
            seconds, loss, peak = _one_update(trainer, batch, way == "shared")
            if i == 0:
                out[way]["loss_before_step"] = loss
            else:
                out[way]["all_seconds"].append(seconds)
            if peak is not None:
                out[way]["peak_gib"] = max(out[way]["peak_gib"] or 0.0, peak)
    for way in out.values():
        way["seconds"] = min(way["all_seconds"])
        way["median_seconds"] = statistics.median(way["all_seconds"])
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--help`` lists them)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["tiny", *ARCHS], default="tiny")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 4, 8], help="replies per state")
    parser.add_argument("--states", type=int, default=2, help="states per update")
    parser.add_argument("--prompt-tokens", type=int, default=None, help="default: 512 (tiny), 2300 (real size)")
    parser.add_argument("--reply-tokens", type=int, default=None, help="default: 16 (tiny), 64 (real size)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed updates per setting (the fastest is `seconds`, beside the median)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (CPU runs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.model != "tiny" and not torch.cuda.is_available():
        parser.error(f"--model {args.model} builds a real-size model on the GPU: CUDA is not available here")
    real = args.model != "tiny"
    args.prompt_tokens = args.prompt_tokens or (2300 if real else 512)
    args.reply_tokens = args.reply_tokens or (64 if real else 16)
    for name in ("states", "prompt_tokens", "reply_tokens", "repeats", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if any(k < 1 for k in args.k):
        parser.error("--k values must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Time every K shared and unshared; print (and with ``--out`` write) the JSON."""
    from coach_rl.algorithms.coach import CoachTrainer
    from coach_rl.config import CoachConfig

    args = parse_args(argv)
    cuda = torch.cuda.is_available()
    if not cuda:
        torch.set_num_threads(args.threads)
    model, tok = build(args.model, args.seed)
    vocab = model.get_input_embeddings().num_embeddings
    result: dict[str, Any] = {
        "model": args.model, "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "params": sum(p.numel() for p in model.parameters()), "states": args.states,
        "prompt_tokens": args.prompt_tokens, "reply_tokens": args.reply_tokens, "repeats": args.repeats,
        "threads": None if cuda else args.threads, "runs": [],
    }
    with tempfile.TemporaryDirectory(prefix="shared_update_") as out:
        for k in args.k:
            config = CoachConfig(output_dir=out, use_cpu=not cuda, report_to="none", save_strategy="no",
                                 num_generations=k, coach_advantage="q" if k == 1 else "acloo",
                                 per_device_train_batch_size=args.states * k, max_completion_length=args.reply_tokens,
                                 learning_rate=1e-6, lr_scheduler_type="constant", bf16=cuda,
                                 gradient_checkpointing=cuda, seed=args.seed)
            trainer = CoachTrainer(model, lambda s, a: [0.0] * len(a), config, tok)
            trainer._setup_actor_loop()
            trainer.current_gradient_accumulation_steps = 1
            inputs = _inputs(args.states, k, args.prompt_tokens, args.reply_tokens, vocab, tok.pad_token_id, args.seed)
            row: dict[str, Any] = {"k": k, **time_update(trainer, inputs, args.repeats)}
            row["speedup"] = row["unshared"]["seconds"] / row["shared"]["seconds"]
            a, b = row["unshared"]["loss_before_step"], row["shared"]["loss_before_step"]
            row["loss_abs_diff"] = abs(a - b)
            result["runs"].append(row)
            print(json.dumps({"k": k, "unshared_s": row["unshared"]["seconds"], "shared_s": row["shared"]["seconds"],
                              "speedup": row["speedup"]}), file=sys.stderr, flush=True)
            del trainer
    base = {way: result["runs"][0][way]["seconds"] for way in ("unshared", "shared")} if result["runs"] else {}
    if result["runs"] and result["runs"][0]["k"] == 1:
        result["relative_to_k1"] = {way: {str(r["k"]): r[way]["seconds"] / base[way] for r in result["runs"]}
                                    for way in ("unshared", "shared")}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
