"""The real coach-rl path at real size: K-sampling from a shared prompt cache, critic scoring, actor and critic updates.

One Android Coach actor update (``CoachTrainer.actor_update``, TRL's GRPO machinery with our overrides) on
``--states`` stored states of the simulated phone, each shown as its 1080x2400 screenshot resized to the paper's
``max_pixels`` (1,270,180, Table 5: 756x1680, 1,620 image tokens) in the UI-TARS prompt with its action history,
for every K in ``--k``; then one critic update (``CriticTrainer.update``, the clipped value loss of Eq. 2). Gradient checkpointing is on for both models. Per K and phase: seconds, actions/s
and peak GPU memory; the training cost of K relative to K = 1 (the paper's Table 3: 1.00 / 1.22 / 1.62 / 2.18x for
K = 1/2/4/8). K = 1 is Table 3's N = 1 row (one fresh action per state, its Q as the advantage: ``coach_advantage
= "q"``); K >= 2 use ACLOO.

Phases, timed inside ``actor_update`` by wrapping the trainer's own methods:

- ``tokenize``: the chat template and the screenshot's resize/normalise (``_tokenize_prompts``; with
  ``share_prompt_prefix`` once per state, else once per row);
- ``sample``: generation of the K replies (``_generate_single_turn``; shared: one prompt pass per state, the
  prompt's KV cache repeated K times; unshared: TRL's K independent rows);
- ``critic_score``: Q(s, a) of the K replies (``Critic.score``);
- ``actor_update``: the rest of ``actor_update`` (TRL re-processes the images for the loss forward, the policy's
  log-probabilities of the K replies with its prompt and screenshot, Eq. 4's loss, backward, AdamW step; with
  ``share_prompt_update``, the default, each state's prompt and screenshot run once and its K replies are packed
  after them);
- ``critic_update``: one ``CriticTrainer.update`` (Eq. 2) on one action per state (the critic learns from the
  executed actions of the online steps, so this phase does not grow with K).

Models: ``--model tiny`` (the same Qwen2.5-VL code at toy size, CPU: the CI twin of the GPU run),
``qwen2.5-vl-3b`` / ``qwen2.5-vl-7b`` (the public configs' sizes, RANDOM bf16 weights on CUDA, built offline by
``tools/bench/rollout_split.py``'s ``build_random_arch``; a locally trained tokenizer padded to the real
vocabulary). Random weights never write EOS, so every reply runs to ``--max-new-tokens``: the replies' length is
fixed, which is what a cost comparison across K needs (say so when quoting the numbers).

CPU twin (about a minute)::

    .venv/bin/python tools/bench/real_size_path.py --model tiny --out /tmp/real_size_tiny.json

GPU (one call; see packages/coach-rl/README.md for the wheels that travel)::

    python3 tools/bench/real_size_path.py --model qwen2.5-vl-3b --states 2 --k 1 4 8 --max-new-tokens 128 \
        --compare-unshared --compare-unshared-update --out $OUT/real_size_3b.json

``--compare-unshared-update`` adds runs that sample from the shared prompt but update over K rows that each repeat
the prompt and screenshot (``share_prompt_update`` off): beside the default runs (both shared) they measure what the
shared update saves in the ``actor_update`` phase at each K.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

__all__ = ["PAPER_K_COST", "collect_rows", "main", "parse_args", "run_k"]

PAPER_K_COST = {1: 1.00, 2: 1.22, 4: 1.62, 8: 2.18}
"""Training time of Android Coach at K relative to K = 1 (paper, Table 3)."""
PAPER_MAX_PIXELS = 1270180
PAPER_MIN_PIXELS = 256
_MODELS = {"tiny": "qwen2.5-vl-tiny", "qwen2.5-vl-3b": "qwen2.5-vl-3b", "qwen2.5-vl-7b": "qwen2.5-vl-7b"}


def _rollout_split() -> Any:
    """tools/bench/rollout_split.py (its random-architecture builders), imported by path."""
    path = Path(__file__).resolve().with_name("rollout_split.py")
    spec = importlib.util.spec_from_file_location("rollout_split_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _peak_reset() -> None:
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()


def _peak_gib() -> float | None:
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


# -- states ----------------------------------------------------------------------------------------------


def collect_rows(n: int, fmt: Any, processor: Any, seed: int) -> list[dict[str, Any]]:
    """``n`` stored states of the simulated phone (each after 0-2 expert steps, so prompts carry history) as rows.

    A row is what the training loop gives ``CoachTrainer``: the policy's chat messages (``prompt``, images as
    placeholders), the critic's state text (``state``: the templated prompt) and the screenshot (``images``).
    """
    import gymnasium as gym

    import android_gym  # noqa: F401  (registers the env ids)
    from coach_reward.prompts import to_pil_image
    from coach_rl.policy import PolicyRequest, json_safe_messages

    rows = []
    env = gym.make("AndroidSim-v0", screenshot=True, max_steps=8)
    try:
        for i in range(n):
            obs, _ = env.reset(seed=seed + i)
            for _ in range(i % 3):
                obs, _, terminated, truncated, _ = env.step(env.unwrapped.expert_action())
                if terminated or truncated:
                    obs, _ = env.reset(seed=seed + 100 + i)
                    break
            request = PolicyRequest.from_observation(obs, env.unwrapped.trajectory.steps)
            messages = fmt.messages(request)
            rows.append({
                "prompt": json_safe_messages(messages),
                "state": processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True),
                "images": [to_pil_image(obs["screenshot"])],
            })
    finally:
        env.close()
    return rows


# -- one K -----------------------------------------------------------------------------------------------


class _PhaseTimer:
    """Seconds and peak GPU memory of named phases, by wrapping callables."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.peak: dict[str, float | None] = {}

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            _sync()
            _peak_reset()
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                _sync()
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
                peak = _peak_gib()
                self.peak[name] = peak if self.peak.get(name) is None else max(self.peak[name], peak)
                _peak_reset()  # what follows (the loss) is measured from here

        return timed


def run_k(model: Any, processor: Any, critic: Any, rows: list[dict[str, Any]], k: int, args: argparse.Namespace,
          *, share: bool, beta: float = 0.0, share_update: bool | None = None) -> dict[str, Any]:
    """One ``CoachTrainer.actor_update`` and one ``CriticTrainer.update`` at K actions per state, timed by phase.

    ``share`` shares the prompt pass when sampling (``share_prompt_prefix``); ``share_update`` (default: ``share``)
    in the update's forward and backward (``share_prompt_update``: each state's prompt and screenshot once, the K
    replies packed after it).

    ``beta > 0`` adds the KL anchor (``CoachConfig.beta``): the trainer keeps a frozen copy of the policy, and every
    generated batch gets one more forward pass through it (TRL's ``ref_per_token_logps``), inside ``actor_update``.
    """
    from coach_rl.algorithms.coach import CoachTrainer
    from coach_rl.config import CoachConfig
    from coach_rl.critic import CriticTrainer

    cuda = torch.cuda.is_available()
    with tempfile.TemporaryDirectory(prefix="real_size_") as out:
        config = CoachConfig(
            output_dir=out, num_generations=k, coach_advantage="q" if k == 1 else "acloo",
            per_device_train_batch_size=len(rows) * k, gradient_accumulation_steps=1,
            max_completion_length=args.max_new_tokens, bf16=cuda, gradient_checkpointing=True,
            share_prompt_prefix=share, share_prompt_update=share if share_update is None else share_update,
            report_to=[], logging_strategy="no", save_strategy="no",
            seed=args.seed, critic_batch_size=args.critic_batch_size, dataloader_num_workers=0, optim=args.optim,
            beta=beta,
        )
        _sync()
        _peak_reset()
        trainer = CoachTrainer(model, critic, config, processor)
        anchor_gib = _peak_gib()  # the KL anchor's copy of the policy is made here
        timer = _PhaseTimer()
        trainer._tokenize_prompts = timer.wrap("tokenize", trainer._tokenize_prompts)
        trainer._generate_single_turn = timer.wrap("sample", trainer._generate_single_turn)
        score = critic.score
        critic.score = timer.wrap("critic_score", score)
        trainer._setup_actor_loop()  # optimiser and accelerate set-up: once per run, not part of an update
        try:
            _sync()
            _peak_reset()
            started = time.perf_counter()
            metrics = trainer.actor_update(rows, num_steps=1, log=False)
            _sync()
            total = time.perf_counter() - started
            update_peak = _peak_gib()
        finally:
            del critic.score  # back to the class's method
        actions = list(trainer.critic_reward.last_actions)
        states = list(trainer.critic_reward.last_states)
        phases = dict(timer.seconds)
        peaks = dict(timer.peak)
        phases["actor_update"] = total - sum(phases.values())
        peaks["actor_update"] = update_peak

        # The critic learns from the online steps (one executed action per state, Algorithm 1), not from the K
        # resampled ones: its update does not grow with K. The first sample of each group stands in for it.
        critic_trainer = CriticTrainer(critic, total_steps=1, micro_batch_size=args.critic_batch_size)
        gen = torch.Generator().manual_seed(args.seed)
        returns = torch.rand(len(rows), generator=gen).tolist()
        _sync()
        _peak_reset()
        started = time.perf_counter()
        critic_metrics = critic_trainer.update(states[::k], actions[::k], returns)
        _sync()
        phases["critic_update"] = time.perf_counter() - started
        peaks["critic_update"] = _peak_gib()
        new_tokens = [len(critic.tokenizer(a, add_special_tokens=False)["input_ids"]) for a in actions]
        shared_rows = trainer.shared_update_rows
        model.zero_grad(set_to_none=True)
        critic.zero_grad(set_to_none=True)
        del trainer, critic_trainer
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    seconds = sum(phases.values())
    return {
        "k": k, "share_prompt_prefix": share, "share_prompt_update": config.share_prompt_update, "beta": beta,
        "shared_update_rows": shared_rows, "states": len(rows), "actions": len(actions),
        "peak_gib_trainer_built": anchor_gib, "actor_kl": metrics.get("actor/kl"),
        "seconds": phases, "total_seconds": seconds, "actions_per_s": len(actions) / seconds,
        "sample_actions_per_s": len(actions) / phases["sample"] if phases.get("sample") else None,
        "peak_gib": peaks, "actor_loss": metrics.get("actor/loss"), "actor_grad_norm": metrics.get("actor/grad_norm"),
        # random weights can give NaN/inf logits for some prompts: such samples end early and are counted here, and a
        # step with nothing usable is skipped (coach_rl.nonfinite) instead of killing the run with a device assert
        "actor_skipped_steps": metrics.get("actor/skipped_steps"),
        "nonfinite": {key: value for key, value in metrics.items() if key.startswith("nonfinite/")},
        "critic_loss": critic_metrics.get("loss"), "mean_reply_tokens_retokenised": sum(new_tokens) / len(new_tokens),
    }


# -- main ------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--help`` lists them)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(_MODELS), default="tiny",
                        help="tiny (CPU twin) or a real-size architecture with random weights (CUDA)")
    parser.add_argument("--states", type=int, default=2, help="stored states per actor update")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 2, 4, 8], help="actions sampled per state")
    parser.add_argument("--max-new-tokens", type=int, default=16, help="reply length (random weights: always this)")
    parser.add_argument("--max-pixels", type=int, default=PAPER_MAX_PIXELS, help="image budget (paper: 1,270,180)")
    parser.add_argument("--min-pixels", type=int, default=PAPER_MIN_PIXELS, help="paper: 256")
    parser.add_argument("--critic-batch-size", type=int, default=8, help="pairs per critic forward/micro-batch")
    parser.add_argument("--optim", default="adamw_torch",
                        help="the actor's optimiser (TrainingArguments.optim); adafactor keeps no first moment, which "
                        "lets a full-parameter 7B actor and critic share one 141 GB GPU")
    parser.add_argument("--compare-unshared", action="store_true",
                        help="also run every K with share_prompt_prefix and share_prompt_update off (TRL's K "
                        "independent rows, in sampling and in the update)")
    parser.add_argument("--compare-unshared-update", action="store_true",
                        help="also run every K with the sampling shared but share_prompt_update off (the update's "
                        "forward and backward over K rows that each repeat the prompt): what sharing the update saves")
    parser.add_argument("--beta", type=float, nargs="+", default=[0.0],
                        help="KL weights to run every K with (CoachConfig.beta; 0 = Eq. 4, the default): e.g. "
                        "--beta 0 0.1 measures what the KL anchor's frozen policy copy costs in memory and time")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false",
                        help="skip the untimed K = 2 update run first")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (CPU runs)")
    parser.add_argument("--tiny-vocab", type=int, default=2048,
                        help="vocabulary of the tiny twin (the real-size models keep 151,936)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here (rewritten after each K)")
    args = parser.parse_args(argv)
    for name in ("states", "max_new_tokens", "max_pixels", "min_pixels", "critic_batch_size", "threads", "tiny_vocab"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if any(k < 1 for k in args.k):
        parser.error("--k values must be >= 1")
    if any(not b >= 0 for b in args.beta):
        parser.error("--beta values must be >= 0")
    if args.model != "tiny" and not torch.cuda.is_available():
        parser.error(f"--model {args.model} builds a real-size model on the GPU: CUDA is not available here")
    return args


def _write(result: dict[str, Any], out: Path | None) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, default=float) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Build the model, collect the states, run every K (shared, and unshared with ``--compare-unshared``)."""
    import transformers
    import trl

    from coach_rl.critic import Critic
    from coach_rl.policy import PolicyFormat

    args = parse_args(argv)
    cuda = torch.cuda.is_available()
    if not cuda:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    started = time.perf_counter()
    tmp = tempfile.TemporaryDirectory(prefix="real_size_model_")
    vocab = {"vocab_size": args.tiny_vocab} if args.model == "tiny" else {}
    model, processor, _ = _rollout_split().build_random_arch(
        _MODELS[args.model], Path(tmp.name) / "model", min_pixels=args.min_pixels, max_pixels=args.max_pixels,
        **vocab)
    tokenizer = processor.tokenizer
    critic = Critic.from_pretrained_lm(model, tokenizer, seed=args.seed)
    critic.backbone.gradient_checkpointing_enable()  # as build_coach does when the config asks for checkpointing
    build_s = time.perf_counter() - started
    fmt = PolicyFormat(mode="screenshot", action_format="uitars", coordinates="smart_resize",
                       min_pixels=args.min_pixels, max_pixels=args.max_pixels)
    rows = collect_rows(args.states, fmt, processor, args.seed)
    encoded = processor(text=[rows[0]["state"]], images=[rows[0]["images"]], return_tensors="pt")
    result: dict[str, Any] = {
        "model": args.model, "device": "cuda" if cuda else "cpu",
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "params": sum(p.numel() for p in model.parameters()),
        "critic_params": sum(p.numel() for p in critic.parameters()),
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "screenshot": list(rows[0]["images"][0].size), "max_pixels": args.max_pixels,
        "image_grid_thw": encoded["image_grid_thw"][0].tolist(),
        "image_tokens": int(encoded["image_grid_thw"][0].prod()) // 4,
        "prompt_tokens": int(encoded["input_ids"].shape[1]), "states": args.states,
        "max_new_tokens": args.max_new_tokens, "gradient_checkpointing": True, "optim": args.optim,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__, "trl": trl.__version__},
        "build_seconds": build_s, "runs": [],
    }
    _write(result, args.out)
    if args.warmup:  # CUDA context, cuBLAS heuristics and the allocator's first growth: not part of any K
        started_warmup = time.perf_counter()
        run_k(model, processor, critic, rows, 2, args, share=True)
        result["warmup_seconds"] = time.perf_counter() - started_warmup
    modes = [(True, True)] + [(False, False)] * args.compare_unshared + [(True, False)] * args.compare_unshared_update
    for (share, share_update), beta in [(m, b) for m in modes for b in args.beta]:
        for k in args.k:
            try:
                run = run_k(model, processor, critic, rows, k, args, share=share, beta=beta, share_update=share_update)
            except torch.cuda.OutOfMemoryError as err:  # keep going; say where memory ran out
                run = {"k": k, "share_prompt_prefix": share, "share_prompt_update": share_update, "beta": beta,
                       "error": f"out of GPU memory: {str(err).splitlines()[0]}", "peak_gib_before": _peak_gib()}
                model.zero_grad(set_to_none=True)
                critic.zero_grad(set_to_none=True)
                gc.collect()
                torch.cuda.empty_cache()
            result["runs"].append(run)
            print(json.dumps({key: run.get(key) for key in ("k", "share_prompt_prefix", "share_prompt_update", "beta",
                                                             "total_seconds", "seconds", "error")}, default=float),
                  file=sys.stderr, flush=True)
            _write(result, args.out)
    result["relative_cost"] = _relative_cost(result["runs"])
    result["paper_relative_cost"] = {str(k): v for k, v in PAPER_K_COST.items()}
    result["wall_seconds"] = time.perf_counter() - started
    tmp.cleanup()
    _write(result, args.out)
    print(json.dumps(result, indent=2, default=float))
    return result


def _relative_cost(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Total seconds at each K over K = 1's (beta = 0, prompt shared), per sharing mode and KL weight.

    Keys: ``shared`` / ``unshared`` for beta = 0, ``shared+beta=0.1`` and so on with the KL anchor,
    ``shared+unshared_update`` for sampling shared and the update not. One baseline for all, so a row's number also
    says what the anchor adds.
    """
    out: dict[str, dict[str, float]] = {}

    def mode(run: dict[str, Any]) -> tuple[bool, bool]:
        share = run["share_prompt_prefix"]
        return share, run.get("share_prompt_update", share)

    base = {(mode(r), r.get("beta", 0.0)): r["total_seconds"]
            for r in runs if r.get("k") == 1 and "total_seconds" in r}
    for run in runs:
        beta = run.get("beta", 0.0)
        share, share_update = mode(run)
        label = ("shared" if share else "unshared") + ("+unshared_update" if share and not share_update else "") \
            + (f"+beta={beta:g}" if beta else "")
        ref = base.get((mode(run), 0.0)) or base.get(((True, True), 0.0))
        if ref and "total_seconds" in run:
            out.setdefault(label, {})[str(run["k"])] = run["total_seconds"] / ref
    return out


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
