"""Rollout benchmark: K-sampling throughput (prefix caching on/off) and the time split of one Coach iteration.

Two measurements, printed as ONE JSON object (``--out`` also writes it to a file):

1. **K-sampling.** ``--states N`` states are recorded from simulated rollouts (screenshot, UI text,
   history: the requests the policy really saw). For every K in ``--k``, K actions are generated per
   state in one batch; the result is actions/s and generated tokens/s, with vLLM's prefix caching on and
   off (``--backend vllm``; the cache is emptied before each timed run, so only the sharing of a prompt
   among its own K samples counts) and the speed-up of caching per K. ``--backend hf`` has no prefix
   cache: it reports the "off" column only.
2. **Time split of a Coach iteration** at ``--num-envs E``: env stepping and generation of the rollout
   (:class:`coach_rl.rollout.RolloutCollector`), generation of ``--split-k`` actions for the states
   visited (the SSMA resampling of Algorithm 1), critic scoring of those actions
   (:meth:`coach_rl.critic.Critic.score`), and the update: the critic regression on the returns
   (:class:`coach_rl.critic.CriticTrainer`) plus one PPO-clip actor step with ACLOO advantages
   (:class:`coach_rl.actor.ActorUpdater`); seconds and shares of the iteration. Critic and actor read the
   templated prompt TEXT (a screenshot is its one placeholder token, no pixels), as ActorUpdater does; the
   update of a VLM with image features (CoachTrainer with images) costs more than measured here.

Models: ``--model tiny`` (the tiny text Qwen2 of the smoke runs, UI text prompts), ``--model tiny-vl``
(a tiny Qwen2-VL with screenshots), a checkpoint path, or ``--random-arch qwen2.5-vl-3b|qwen2.5-vl-7b``:
that architecture with RANDOM weights (bf16, CUDA) from a config written below (sizes of the public
configs), with a tokenizer trained locally and padded to the real vocabulary size (nothing is
downloaded). With vLLM the random model is loaded with ``load_format="dummy"`` from a temp folder holding
its config, tokenizer and processor, so no weights are written. A full-parameter update of the 7B
(actor + critic with AdamW) does not fit one 80 GB GPU: ``--update auto`` skips it there and says why.

CPU smoke run (about 35 s of CPU on an idle 2-core machine; ``--threads 1`` by default)::

    .venv/bin/python tools/bench/rollout_split.py --backend hf --model tiny --out /tmp/rollout_split.json

GPU machine (H100/H200), real-size architecture with random weights, HF generate (no prefix cache)::

    python tools/bench/rollout_split.py --backend hf --random-arch qwen2.5-vl-3b --states 16 --k 1 2 4 8 \
        --num-envs 8 --max-steps 4 --max-new-tokens 64 --out $OUT/rollout_split_3b_hf.json
    python tools/bench/rollout_split.py --backend hf --random-arch qwen2.5-vl-7b --states 16 --k 1 2 4 8 \
        --num-envs 8 --max-steps 4 --max-new-tokens 64 --out $OUT/rollout_split_7b_hf.json

and with vLLM installed (prefix caching on/off, the issue's measurement)::

    python tools/bench/rollout_split.py --backend vllm --random-arch qwen2.5-vl-3b --states 32 --k 1 2 4 8 \
        --num-envs 8 --max-steps 4 --out $OUT/rollout_split_3b_vllm.json
    python tools/bench/rollout_split.py --backend vllm --random-arch qwen2.5-vl-7b --states 32 --k 1 2 4 8 \
        --num-envs 8 --max-steps 4 --out $OUT/rollout_split_7b_vllm.json

The lent GPU machines of this workplace have torch, transformers 5.17, pyarrow, pandas... but not the
project's packages, trl, datasets or gymnasium, and no network. Carry these pure-Python wheels (15 MB;
vLLM itself, hundreds of MB and pinned to its own torch, cannot be carried, so only ``--backend hf`` runs
there)::

    pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
        trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 gymnasium==1.4.0 \
        farama-notifications==0.0.6 transformers==5.24.0 regex==2026.11.19
    # on the GPU machine, with .whl carried:
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && \
    export PYTHONPATH=/tmp/site:packages/android-gym/src:packages/coach-reward/src:packages/coach-rl/src && \
    PYTHONUNBUFFERED=1 python3 tools/bench/rollout_split.py --backend hf --random-arch qwen2.5-vl-3b ...
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

from coach_rl.actor import ActorSample, ActorUpdater  # noqa: E402
from coach_rl.advantages import acloo  # noqa: E402
from coach_rl.critic import Critic, CriticTrainer  # noqa: E402
from coach_rl.envs import make_envs  # noqa: E402
from coach_rl.policy import HFPolicy, PolicyFormat, PolicyOutput, PolicyRequest, VLLMPolicy  # noqa: E402
from coach_rl.rollout import RolloutCollector  # noqa: E402

__all__ = ["RANDOM_ARCHS", "RecordingPolicy", "bench_k", "build_random_arch", "coach_iteration", "main", "parse_args",
           "random_arch_config"]

_VOCAB = 151936
_VISION = {  # the Qwen2.5-VL vision tower (same for 3B and 7B except the merger's output width)
    "depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16, "in_chans": 3,
    "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 112,
    "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "hidden_act": "silu",
}
RANDOM_ARCHS: dict[str, dict[str, Any]] = {
    "qwen2.5-vl-3b": {"hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
                      "num_attention_heads": 16, "num_key_value_heads": 2, "tie_word_embeddings": True},
    "qwen2.5-vl-7b": {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
                      "num_attention_heads": 28, "num_key_value_heads": 4, "tie_word_embeddings": False},
    "qwen2.5-vl-tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                        "num_attention_heads": 2, "num_key_value_heads": 1, "tie_word_embeddings": True,
                        "vision": {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                                   "fullatt_block_indexes": [1]}},
}
"""Text-model sizes of the public Qwen2.5-VL-3B/7B-Instruct configs (vocabulary 151936, mRoPE [16, 24, 24]);
``qwen2.5-vl-tiny`` is the same code path at toy size (runs on CPU: the check of the GPU path)."""
_CPU_ARCHS = ("qwen2.5-vl-tiny",)

_UPDATE_BYTES_PER_PARAM = 12
"""Memory a full-parameter actor + critic update adds to the resident bf16 weights: (grads + 2 AdamW moments)
x 2 bytes x 2 models."""
_ACTIVATION_MARGIN = 12 * 2**30
"""Room kept for activations and float32 logits of the update's micro-batches."""


# -- models ----------------------------------------------------------------------------------------------


def _padded_tokenizer(vocab_size: int) -> Any:
    """The tiny tokenizer (locally trained BPE, chat template with vision tokens) padded to ``vocab_size`` ids.

    Filler entries (``xfill<i>``, never produced by the merges) fill the vocabulary so every id a random model
    samples decodes to text, as with the real tokenizer.
    """
    from transformers import AddedToken, Qwen2Tokenizer

    from coach_reward.tiny_models import (
        ADDED_TOKENS,
        BOS_TOKEN,
        CHAT_TEMPLATE,
        ENDOFTEXT_TOKEN,
        EOS_TOKEN,
        IM_START_TOKEN,
        IMAGE_TOKEN,
        PAD_TOKEN,
        VISION_TOKENS,
        build_tiny_tokenizer,
    )

    base = build_tiny_tokenizer(vocab_size=1024)
    state = json.loads(base.backend_tokenizer.to_str())["model"]
    vocab = dict(state["vocab"])
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in state["merges"]]
    n_added = len(ADDED_TOKENS) + len(VISION_TOKENS)
    for i in range(max(0, vocab_size - n_added - len(vocab))):
        vocab[f"xfill{i}"] = len(vocab)
    tokenizer = Qwen2Tokenizer(
        vocab=vocab, merges=merges, unk_token=None, bos_token=BOS_TOKEN, eos_token=EOS_TOKEN, pad_token=PAD_TOKEN,
        extra_special_tokens=[IM_START_TOKEN, ENDOFTEXT_TOKEN, IMAGE_TOKEN], padding_side="left",
        model_max_length=32768)
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in ADDED_TOKENS])
    tokenizer.add_special_tokens({"additional_special_tokens": list(VISION_TOKENS)}, replace_extra_special_tokens=False)
    tokenizer.chat_template = CHAT_TEMPLATE.replace(
        "{{- '<|image_pad|>' -}}", "{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}")
    return tokenizer


def _processor(tokenizer: Any, min_pixels: int, max_pixels: int) -> Any:
    """A Qwen2.5-VL processor over ``tokenizer`` (with a video processor when torchvision is there, as vLLM needs)."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from coach_reward.tiny_models import ImageOnlyQwen2VLProcessor

    image_processor = Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels)
    try:
        from transformers import Qwen2_5_VLProcessor
        from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

        return Qwen2_5_VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                   video_processor=Qwen2VLVideoProcessor(), chat_template=tokenizer.chat_template)
    except (ImportError, ValueError, TypeError):  # no torchvision: the image-only processor (HF backend only)
        return ImageOnlyQwen2VLProcessor(image_processor, tokenizer, chat_template=tokenizer.chat_template)


def random_arch_config(name: str, tokenizer: Any, vocab_size: int = _VOCAB) -> Any:
    """The ``Qwen2_5_VLConfig`` of architecture ``name`` (see :data:`RANDOM_ARCHS`) with ``tokenizer``'s token ids."""
    from transformers import Qwen2_5_VLConfig

    if name not in RANDOM_ARCHS:
        raise ValueError(f"unknown architecture {name!r}; choose from {sorted(RANDOM_ARCHS)}")
    sizes = {k: v for k, v in RANDOM_ARCHS[name].items() if k != "vision"}
    ids = {key: tokenizer.convert_tokens_to_ids(tok) for key, tok in (
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>"))}
    special = {"bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
               "pad_token_id": tokenizer.pad_token_id}
    half = sizes["hidden_size"] // sizes["num_attention_heads"] // 2
    mrope = [16, 24, 24] if half == 64 else [half - 2 * (half // 3), half // 3, half // 3]
    text = {**sizes, "vocab_size": max(vocab_size, len(tokenizer)), "max_position_embeddings": 128000,
            "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "hidden_act": "silu", "torch_dtype": "bfloat16",
            "rope_scaling": {"type": "mrope", "mrope_section": mrope}, **special}
    vision = {**_VISION, **RANDOM_ARCHS[name].get("vision", {}), "out_hidden_size": sizes["hidden_size"]}
    return Qwen2_5_VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=sizes["tie_word_embeddings"],
                            torch_dtype="bfloat16", **ids, **special)


def build_random_arch(name: str, folder: str | Path, *, min_pixels: int, max_pixels: int,
                      build_model: bool = True, vocab_size: int = _VOCAB) -> tuple[Any, Any, Path]:
    """Architecture ``name`` with random bf16 weights on CUDA (float32 on CPU, tiny only), its processor, and ``folder`` holding config,
    tokenizer and processor (enough for ``vllm.LLM(folder, load_format="dummy")``; no weights are written).

    ``vocab_size`` defaults to the real 151,936; a CPU twin may take a small one (the LM head over 150k ids is
    most of a toy model's cost)."""
    from transformers import GenerationConfig, Qwen2_5_VLForConditionalGeneration

    tokenizer = _padded_tokenizer(vocab_size)
    processor = _processor(tokenizer, min_pixels, max_pixels)
    config = random_arch_config(name, tokenizer, vocab_size)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config.save_pretrained(folder)
    processor.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    generation = GenerationConfig(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                  pad_token_id=tokenizer.pad_token_id)
    generation.save_pretrained(folder)
    model = None
    if build_model:
        if not torch.cuda.is_available() and name not in _CPU_ARCHS:
            raise RuntimeError(f"--random-arch {name} builds a real-size model on the GPU: CUDA is not available")
        cuda = torch.cuda.is_available()
        with torch.device("cuda" if cuda else "cpu"):
            model = Qwen2_5_VLForConditionalGeneration._from_config(config, dtype=torch.bfloat16 if cuda else torch.float32)
        model.generation_config = generation
        model.eval()
    return model, processor, folder


def _tiny(kind: str, seed: int) -> tuple[Any, Any, str]:
    from coach_reward.tiny_models import build_tiny_causal_lm, build_tiny_vision_lm

    if kind == "tiny":
        model, tokenizer = build_tiny_causal_lm(vocab_size=1024, hidden_size=64, num_layers=2, num_heads=4, seed=seed)
        return model, tokenizer, "xml"
    model, processor = build_tiny_vision_lm(vocab_size=1024, hidden_size=64, num_layers=2, num_heads=4, seed=seed)
    return model, processor, "both"


def _load_path(path: str, device: str) -> tuple[Any, Any, str]:
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForImageTextToText,
        AutoProcessor,
        AutoTokenizer,
    )

    config = AutoConfig.from_pretrained(path)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    if getattr(config, "vision_config", None) is not None:
        model = AutoModelForImageTextToText.from_pretrained(path, dtype=dtype).to(device)
        return model, AutoProcessor.from_pretrained(path), "both"
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(device)
    return model, AutoTokenizer.from_pretrained(path), "xml"


# -- measurement pieces ----------------------------------------------------------------------------------


class RecordingPolicy:
    """A policy wrapper that keeps every request it was asked (the states the benchmark re-samples)."""

    def __init__(self, policy: Any) -> None:
        """Wrap ``policy`` (HFPolicy or VLLMPolicy)."""
        self.policy = policy
        self.requests: list[PolicyRequest] = []

    @property
    def version(self) -> int:
        """The wrapped policy's version."""
        return int(getattr(self.policy, "version", 0))

    def act(self, requests: Sequence[PolicyRequest], *, greedy: bool = False) -> list[PolicyOutput]:
        """Record ``requests``, then answer them with the wrapped policy."""
        self.requests.extend(requests)
        return self.policy.act(requests, greedy=greedy)


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _timed_act(policy: Any, requests: list[PolicyRequest]) -> tuple[float, list[PolicyOutput]]:
    _sync()
    t0 = time.perf_counter()
    outputs = policy.act(requests)
    _sync()
    return time.perf_counter() - t0, outputs


def _reset_prefix_cache(policy: Any) -> None:
    llm = getattr(policy, "llm", None)
    if llm is not None and callable(getattr(llm, "reset_prefix_cache", None)):
        llm.reset_prefix_cache()


def bench_k(policy: Any, states: list[PolicyRequest], ks: Sequence[int], repeats: int) -> dict[str, Any]:
    """K actions per state for each K: median seconds over ``repeats``, actions/s and generated tokens/s."""
    out: dict[str, Any] = {}
    _reset_prefix_cache(policy)
    _timed_act(policy, states[: max(1, min(2, len(states)))])  # warm-up (kernels, CUDA graphs, allocator)
    for k in ks:
        requests = [r for r in states for _ in range(k)]
        seconds, tokens = [], []
        for _ in range(repeats):
            _reset_prefix_cache(policy)  # only the sharing among this run's own K samples may hit the cache
            s, outputs = _timed_act(policy, requests)
            seconds.append(s)
            tokens.append(sum(o.num_tokens for o in outputs))
        med = statistics.median(seconds)
        tok = statistics.median(tokens)
        out[str(k)] = {"actions": len(requests), "seconds": med, "seconds_all": seconds,
                       "actions_per_s": len(requests) / med, "tokens": tok, "tokens_per_s": tok / med,
                       "mean_new_tokens": tok / len(requests)}
    return out


def _update_skip_reason(args: argparse.Namespace, model: Any) -> str | None:
    if args.update == "off":
        return "--update off"
    if args.update == "on" or model is None:
        return None
    params = sum(p.numel() for p in model.parameters())
    need = params * _UPDATE_BYTES_PER_PARAM + _ACTIVATION_MARGIN
    if torch.cuda.is_available() and next(model.parameters()).is_cuda:
        free, _ = torch.cuda.mem_get_info()
        if need > free:
            return (f"a full-parameter actor + critic update of {params / 1e9:.2f}B parameters needs about "
                    f"{need / 2**30:.0f} GiB more (bf16 grads and AdamW moments for both models, plus activations) "
                    f"and {free / 2**30:.0f} GiB are free")
    return None


def coach_iteration(policy: Any, model: Any, tokenizer: Any, args: argparse.Namespace, mode: str) -> dict[str, Any]:
    """One Coach iteration at ``--num-envs`` envs, timed by phase; also returns the states the rollout visited."""
    env_kwargs: dict[str, Any] = {"screenshot": mode != "xml", "max_steps": args.max_steps}
    if args.latency:
        env_kwargs["latency"] = args.latency
    envs = make_envs("AndroidSim-v0", args.num_envs, env_kwargs=env_kwargs)
    recorder = RecordingPolicy(policy)
    collector = RolloutCollector(envs, recorder, keep_xml=False, threads=args.env_threads)
    _sync()
    t_iter = time.perf_counter()
    batch = collector.collect(args.num_envs * args.episodes_per_env, seeds=args.seed)
    stats = batch.stats
    rng = random.Random(args.seed)
    states = list(recorder.requests)
    picked = rng.sample(states, min(len(states), args.actor_states)) if args.actor_states else states
    k = args.split_k
    gen_k_s, outputs = _timed_act(policy, [r for r in picked for _ in range(k)])

    critic = Critic.from_pretrained_lm(model, tokenizer, seed=args.seed)
    critic_states = [o.prompt_text for o in outputs]
    critic_actions = [o.text for o in outputs]
    _sync()
    t0 = time.perf_counter()
    q = critic.score(critic_states, critic_actions, batch_size=args.critic_batch_size)
    _sync()
    critic_s = time.perf_counter() - t0

    skip = _update_skip_reason(args, model)
    update: dict[str, Any] = {"skipped": skip}
    if skip is None:
        records = batch.records
        on_cuda = next(model.parameters()).is_cuda
        micro = args.update_micro_batch or (1 if on_cuda else 4)
        trainer = CriticTrainer(critic, total_steps=1, micro_batch_size=micro)
        updater = ActorUpdater(model, tokenizer, micro_batch_size=micro,
                               autocast_dtype=torch.bfloat16 if on_cuda else None)
        advantages = acloo(q.view(len(picked), k)).reshape(-1).tolist()
        samples = [ActorSample(o.prompt_text, o.text, a, completion_ids=o.token_ids or None)
                   for o, a in zip(outputs, advantages) if o.num_tokens]
        try:
            _sync()
            t0 = time.perf_counter()
            critic_metrics = trainer.update([r.prompt_text for r in records], [r.response for r in records],
                                            [r.return_t for r in records])
            _sync()
            t1 = time.perf_counter()
            actor_metrics = updater.update(samples) if samples else {}
            _sync()
            t2 = time.perf_counter()
            update.update(critic_seconds=t1 - t0, actor_seconds=t2 - t1, critic_pairs=len(records),
                          actor_samples=len(samples), micro_batch=micro, critic_loss=critic_metrics.get("loss"),
                          actor_loss=actor_metrics.get("loss"))
        except torch.cuda.OutOfMemoryError as err:  # report it and keep the generation numbers
            skip = update["skipped"] = f"out of GPU memory during the update: {str(err).splitlines()[0]}"
        finally:
            model.zero_grad(set_to_none=True)
            model.eval()
        del trainer, updater
    iteration_s = time.perf_counter() - t_iter
    for env in envs:
        env.close()
    del critic
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()

    update_s = (update.get("critic_seconds", 0.0) + update.get("actor_seconds", 0.0)) if skip is None else 0.0
    phases = {"env": stats.env_seconds, "generation": stats.generation_seconds + gen_k_s, "critic": critic_s,
              "update": update_s}
    total = sum(phases.values())
    return {
        "num_envs": args.num_envs, "episodes": stats.episodes, "env_steps": stats.env_steps, "split_k": k,
        "states_resampled": len(picked), "seconds": phases,
        "shares": {key: (value / total if total > 0 else math.nan) for key, value in phases.items()},
        "detail": {"rollout_generation": stats.generation_seconds, "k_generation": gen_k_s,
                   "rollout_wall": stats.wall_seconds, "reward": stats.reward_seconds, "iteration_wall": iteration_s,
                   "rollout_tokens": stats.generated_tokens, "parse_errors": stats.parse_errors,
                   "q_mean": float(q.mean()) if len(q) else math.nan},
        "update": update,
        "_states": states,
    }


# -- main ------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring for the GPU command lines)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("hf", "vllm"), default="hf")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--model", default=None, help="tiny (text), tiny-vl (vision) or a checkpoint path (default: tiny)")
    source.add_argument("--random-arch", choices=sorted(RANDOM_ARCHS), default=None,
                        help="real-size architecture with random bf16 weights (CUDA only)")
    parser.add_argument("--states", type=int, default=8, help="stored states for K-sampling")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 2, 4, 8], help="actions per state")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per K (median reported)")
    parser.add_argument("--num-envs", type=int, default=4, help="envs of the Coach iteration")
    parser.add_argument("--episodes-per-env", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=4, help="env step limit per episode")
    parser.add_argument("--latency", default=None, help="sim latency preset (e.g. emulator: env steps cost device time)")
    parser.add_argument("--env-threads", action="store_true", help="step the envs in threads (with --latency)")
    parser.add_argument("--split-k", type=int, default=4, help="K of the iteration's resampling (ACLOO needs >= 2)")
    parser.add_argument("--actor-states", type=int, default=8, help="states resampled in the iteration (0: all)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--update", choices=("auto", "on", "off"), default="auto",
                        help="auto: skip the update when it cannot fit the GPU")
    parser.add_argument("--hf-batch-size", type=int, default=64, help="prompts per HF generate call")
    parser.add_argument("--critic-batch-size", type=int, default=8)
    parser.add_argument("--update-micro-batch", type=int, default=None,
                        help="sequences per forward/backward of the critic and actor updates (default: 1 on CUDA, "
                             "where a 3B model's activations without gradient checkpointing are large; 4 on CPU)")
    parser.add_argument("--min-pixels", type=int, default=256 * 28 * 28)
    parser.add_argument("--max-pixels", type=int, default=1280 * 28 * 28, help="image budget of the random-arch processor")
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.35,
                        help="vLLM's share of the GPU (the HF actor and critic need the rest)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (CPU runs; more threads than free cores slows everything down)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    for name in ("states", "num_envs", "episodes_per_env", "max_steps", "max_new_tokens", "repeats", "hf_batch_size", "threads",
                 "critic_batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if any(k < 1 for k in args.k):
        parser.error("--k values must be >= 1")
    if args.split_k < 2:
        parser.error("--split-k must be >= 2 (ACLOO's leave-one-out baseline needs two actions per state)")
    if args.update_micro_batch is not None and args.update_micro_batch < 1:
        parser.error("--update-micro-batch must be >= 1")
    if args.actor_states < 0:
        parser.error("--actor-states must be >= 0")
    if args.model is None and args.random_arch is None:
        args.model = "tiny"
    return args


def _shutdown(policy: Any) -> None:
    """Stop a vLLM engine so the next one (prefix caching off) gets its GPU memory back."""
    engine = getattr(getattr(policy, "llm", None), "llm_engine", None)
    core = getattr(engine, "engine_core", None)
    if callable(getattr(core, "shutdown", None)):
        core.shutdown()


def _require_vllm() -> None:
    try:
        import vllm  # noqa: F401
    except ImportError as err:
        raise SystemExit("--backend vllm needs vLLM on a CUDA machine (`pip install 'coach-rl[vllm]'`); "
                         "it is not installed here. Use --backend hf on this machine.") from err
    if not torch.cuda.is_available():
        raise SystemExit("--backend vllm needs a CUDA GPU; none is visible (torch.cuda.is_available() is False)")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run both measurements and return (and print) the JSON result."""
    args = parse_args(argv)
    if args.backend == "vllm":
        _require_vllm()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    started, cpu_started = time.perf_counter(), time.process_time()
    tmp = tempfile.TemporaryDirectory(prefix="rollout_split_")
    folder: Path | None = None
    if args.random_arch:
        model, processing, folder = build_random_arch(args.random_arch, Path(tmp.name) / "model",
                                                      min_pixels=args.min_pixels, max_pixels=args.max_pixels)
        mode = "both"
    elif args.model in ("tiny", "tiny-vl"):
        model, processing, mode = _tiny(args.model, args.seed)
        model.to(device)
        if args.backend == "vllm":
            folder = Path(tmp.name) / "model"
            model.save_pretrained(folder)
            processing.save_pretrained(folder)
    else:
        if not Path(args.model).exists():
            raise SystemExit(f"--model {args.model!r}: no such checkpoint folder (or use tiny / tiny-vl)")
        model, processing, mode = _load_path(args.model, device)
        folder = Path(args.model)
    tokenizer = getattr(processing, "tokenizer", processing)
    build_s = time.perf_counter() - started
    fmt = PolicyFormat(mode=mode, action_format="uitars")
    sampling = {"max_new_tokens": args.max_new_tokens, "temperature": 1.0, "top_p": 1.0}

    def make(caching: bool | None) -> Any:
        if args.backend == "hf":
            return HFPolicy(model, processing, format=fmt, batch_size=args.hf_batch_size, **sampling)
        llm_kwargs: dict[str, Any] = {"enable_prefix_caching": bool(caching), "seed": args.seed,
                                      "gpu_memory_utilization": args.gpu_memory_utilization}
        if mode != "xml":
            llm_kwargs["limit_mm_per_prompt"] = {"image": 1}
        if args.random_arch:
            llm_kwargs.update(load_format="dummy", max_model_len=16384)
        return VLLMPolicy(str(folder), format=fmt, llm_kwargs=llm_kwargs, **sampling)

    result: dict[str, Any] = {
        "backend": args.backend, "model": args.random_arch or args.model, "mode": mode, "device": device,
        "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "params": sum(p.numel() for p in model.parameters()) if model is not None else None,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch.") if model is not None else None,
        "max_new_tokens": args.max_new_tokens, "states": args.states, "k": list(args.k), "repeats": args.repeats,
        "host": {"python": platform.python_version(), "torch": torch.__version__, "cpus": os.cpu_count(),
                 "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None},
        "build_seconds": build_s,
    }
    caching_modes = [True, False] if args.backend == "vllm" else [None]
    ksampling: dict[str, Any] = {}
    states: list[PolicyRequest] = []
    for caching in caching_modes:
        policy = make(caching)
        if not states:  # the first policy plays the Coach iteration; its visited states are the K-sampling states
            split = coach_iteration(policy, model, tokenizer, args, mode)
            states = split.pop("_states")
            result["iteration"] = split
            if len(states) < args.states:
                raise RuntimeError(f"the rollout visited {len(states)} states, fewer than --states {args.states}: "
                                   "raise --num-envs or --max-steps")
            states = random.Random(args.seed).sample(states, args.states)
        label = "n/a" if caching is None else ("on" if caching else "off")
        ksampling[label] = bench_k(policy, states, args.k, args.repeats)
        _shutdown(policy)
        del policy
        gc.collect()
        if device == "cuda":
            torch.cuda.empty_cache()
    result["k_sampling"] = ksampling
    if "on" in ksampling and "off" in ksampling:
        result["prefix_caching_speedup"] = {
            k: ksampling["on"][k]["actions_per_s"] / ksampling["off"][k]["actions_per_s"] for k in ksampling["on"]}
    else:
        result["prefix_caching_speedup"] = None
        result["prefix_caching_note"] = "HF generate has no cross-request prefix cache; run --backend vllm for on/off"
    result["wall_seconds"] = time.perf_counter() - started
    result["cpu_seconds"] = time.process_time() - cpu_started
    result["host"]["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    tmp.cleanup()
    text = json.dumps(result, indent=2, default=float)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
