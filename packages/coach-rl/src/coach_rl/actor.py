r"""The actor update the GRPO and PPO baselines share: PPO clipped surrogate on stored (prompt, response) pairs.

Android Coach resamples K fresh actions per state (``coach_rl.algorithms.coach.CoachTrainer``); the SSSA baselines
instead learn from the one action the policy took in the environment. :class:`ActorUpdater` does that: it
tokenises each ``(prompt_text, completion_text)`` exactly as generation saw it (the templated prompt, then
the response tokens, then EOS), computes per-token log-probabilities of the completion, and minimises
:func:`coach_rl.losses.ppo_clip_loss` (Eq. 4) with one advantage per sample, token-mean over the mini-batch
(verl's ``token-mean``, the same aggregation as CoachTrainer's ``loss_type="dapo"``). Optimiser, learning
rate, clip ratio and gradient clip default to Android Coach's actor settings (AdamW, 1e-6, 0.2, 1.0; Table 5)
so the comparison between algorithms is fair; :meth:`ActorUpdater.from_config` reads them from a CoachConfig.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from transformers import get_scheduler

from coach_rl.losses import ppo_clip_loss

__all__ = ["ActorSample", "ActorUpdater", "actor_sample", "check_epochs"]


@dataclass
class ActorSample:
    """One stored action to learn from: the prompt the policy saw, its reply, the advantage, optional old log-probs."""

    prompt_text: str
    """The templated prompt string the policy generated from (``PolicyOutput.prompt_text``)."""
    completion_text: str
    """The policy's reply text (the response stored with the step)."""
    advantage: float
    """One advantage for every token of the reply."""
    old_logps: Sequence[float] | None = None
    """Per-token log-probs of the reply under the behaviour policy, one per completion token (see
    ``completion_ids``); ``None``: computed before the first epoch of the update (the policy that acted, when the
    update follows its own rollout)."""
    completion_ids: Sequence[int] | None = None
    """The generated token ids (``PolicyOutput.token_ids``, EOS included when generation stopped on it). When
    given they are learned from as they are; otherwise ``completion_text`` is tokenised and EOS appended."""


def _disable_dropout(model: nn.Module) -> None:
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0


class ActorUpdater:
    """PPO-clip updates of a causal LM on ``(prompt_text, completion_text, advantage[, old_logps])`` samples.

    Keep one object for a whole run: the optimiser state persists across :meth:`update` calls, and
    :meth:`state_dict` / :meth:`load_state_dict` give an exact resume.
    """

    def __init__(
        self,
        model: nn.Module,
        tokenizer: Any,
        *,
        lr: float = 1e-6,
        clip_eps: float = 0.2,
        grad_clip: float = 1.0,
        micro_batch_size: int = 4,
        betas: tuple[float, float] = (0.9, 0.999),
        adam_eps: float = 1e-8,
        weight_decay: float = 0.0,
        lr_scheduler_type: str = "constant",
        warmup_steps: int = 0,
        total_steps: int | None = None,
        temperature: float = 1.0,
        append_eos: bool = True,
        add_special_tokens: bool = False,
        max_length: int | None = None,
        disable_dropout: bool = True,
        autocast_dtype: torch.dtype | None = None,
        seed: int = 0,
    ) -> None:
        """Set up AdamW and the schedule (default constant, verl's actor default; the paper's PPO baseline too).

        ``temperature`` divides the logits before the log-softmax, as TRL does, so log-probs refer to the
        distribution the actions were sampled from. ``append_eos`` adds the tokenizer's EOS after each reply
        (generation ended there; TRL trains on it too). ``max_length`` cuts the START of over-long prompts.
        ``autocast_dtype`` runs the forward under ``torch.autocast`` (TRL's ``bf16``/``fp16``); log-softmax stays float32.
        """
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch module (a causal LM), got {type(model).__name__}")
        if tokenizer is None or not callable(tokenizer):
            raise TypeError("tokenizer must be the policy's transformers tokenizer")
        for name, value in (("lr", lr), ("clip_eps", clip_eps), ("temperature", temperature)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        if isinstance(grad_clip, bool) or not isinstance(grad_clip, (int, float)) or not grad_clip >= 0:
            raise ValueError(f"grad_clip must be a number >= 0 (0 disables clipping), got {grad_clip!r}")
        if isinstance(micro_batch_size, bool) or not isinstance(micro_batch_size, int) or micro_batch_size < 1:
            raise ValueError(f"micro_batch_size must be a positive integer, got {micro_batch_size!r}")
        if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2):
            raise ValueError(f"max_length must be None or an integer >= 2, got {max_length!r}")
        if lr_scheduler_type not in ("constant", "constant_with_warmup") and total_steps is None:
            raise ValueError(f"lr_scheduler_type={lr_scheduler_type!r} decays over total_steps: pass total_steps")
        self.model = model
        self.tokenizer = tokenizer
        self.lr = float(lr)
        self.clip_eps = float(clip_eps)
        self.grad_clip = float(grad_clip)
        self.micro_batch_size = micro_batch_size
        self.temperature = float(temperature)
        self.append_eos = bool(append_eos)
        self.add_special_tokens = bool(add_special_tokens)
        self.max_length = max_length
        self.lr_scheduler_type = lr_scheduler_type
        self.autocast_dtype = autocast_dtype
        self.warmup_steps = int(warmup_steps)
        self.total_steps = total_steps
        if disable_dropout:
            _disable_dropout(model)
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise ValueError("the model has no trainable parameters")
        self.optimizer = torch.optim.AdamW(params, lr=self.lr, betas=betas, eps=adam_eps, weight_decay=weight_decay)
        if lr_scheduler_type == "constant" and warmup_steps:
            lr_scheduler_type = "constant_with_warmup"
        self.scheduler = get_scheduler(lr_scheduler_type, self.optimizer, num_warmup_steps=self.warmup_steps,
                                       num_training_steps=total_steps)
        self.generator = torch.Generator().manual_seed(seed)
        self.step = 0
        from coach_rl.nonfinite import NonFiniteMonitor

        self.nonfinite = NonFiniteMonitor()
        """Counts skipped steps (a NaN/inf loss or gradient: ``nonfinite/actor_update``); the loop shares its own."""

    @classmethod
    def from_config(cls, model: nn.Module, tokenizer: Any, config: Any, **overrides: Any) -> ActorUpdater:
        """An updater with the actor settings of a CoachConfig (lr, clip ratio, grad clip, AdamW betas/eps/decay,
        temperature, micro-batch, bf16/fp16 autocast), so baselines and Android Coach train the actor alike."""
        kwargs: dict[str, Any] = {
            "lr": config.learning_rate,
            "clip_eps": config.epsilon,
            "grad_clip": config.max_grad_norm,
            "betas": (config.adam_beta1, config.adam_beta2),
            "adam_eps": config.adam_epsilon,
            "weight_decay": config.weight_decay,
            "temperature": config.temperature,
            "micro_batch_size": config.per_device_train_batch_size,
            "autocast_dtype": torch.bfloat16 if config.bf16 else (torch.float16 if config.fp16 else None),
            "seed": config.seed,
        }
        kwargs.update(overrides)
        return cls(model, tokenizer, **kwargs)

    # -- tokenisation and log-probs -----------------------------------------------------------------------

    @property
    def device(self) -> torch.device:
        """Where the model's parameters live."""
        return next(self.model.parameters()).device

    def encode_pair(
        self, prompt_text: str, completion_text: str, completion_ids: Sequence[int] | None = None
    ) -> tuple[list[int], int]:
        """Token ids of ``prompt + completion`` and how many of them (at the end) are the completion.

        The completion is ``completion_ids`` as generated when given, else ``completion_text`` tokenised
        plus EOS (``append_eos``): re-tokenising decoded text need not give the generated ids back, and a
        reply cut at the token limit has no EOS, so pass the ids when the collector recorded them.
        """
        if not isinstance(prompt_text, str) or not isinstance(completion_text, str):
            raise TypeError("prompt_text and completion_text must be strings")
        tok = self.tokenizer
        prompt = list(tok(prompt_text, add_special_tokens=self.add_special_tokens)["input_ids"])
        if completion_ids is not None:
            completion = [int(t) for t in completion_ids]
            vocab = self.model.get_input_embeddings().num_embeddings
            if any(not 0 <= t < vocab for t in completion):
                raise ValueError(f"completion_ids hold token ids outside the model's vocabulary (0..{vocab - 1})")
        else:
            completion = list(tok(completion_text, add_special_tokens=False)["input_ids"])
            eos = tok.eos_token_id
            if self.append_eos and eos is not None and (not completion or completion[-1] != eos):
                completion.append(eos)
        if not completion:
            raise ValueError("the completion is empty and append_eos is off: there is no token to learn from")
        if not prompt:
            raise ValueError("the prompt is empty: the first completion token would have no context")
        ids = prompt + completion
        if self.max_length is not None and len(ids) > self.max_length:
            if len(completion) >= self.max_length:
                raise ValueError(f"the completion alone has {len(completion)} tokens, max_length is {self.max_length}")
            ids = ids[-self.max_length:]
        return ids, len(completion)

    def _collate(self, pairs: Sequence[tuple[list[int], int]]) -> dict[str, torch.Tensor]:
        """Right-padded ``input_ids``/``attention_mask``, position ids and the completion-token mask (aligned to targets)."""
        width = max(len(ids) for ids, _ in pairs)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        n = len(pairs)
        input_ids = torch.full((n, width), pad, dtype=torch.long)
        attention = torch.zeros((n, width), dtype=torch.long)
        target_mask = torch.zeros((n, width - 1), dtype=torch.bool)
        for row, (ids, n_completion) in enumerate(pairs):
            input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            attention[row, : len(ids)] = 1
            # target position j predicts token j + 1; completion tokens are the last n_completion of the row
            target_mask[row, len(ids) - 1 - n_completion : len(ids) - 1] = True
        device = self.device
        return {
            "input_ids": input_ids.to(device),
            "attention_mask": attention.to(device),
            "position_ids": (attention.cumsum(dim=1) - 1).clamp(min=0).to(device),
            "target_mask": target_mask.to(device),
        }

    def _token_logps(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(B, T-1)`` log-probs of each next token under the model (float32, temperature applied)."""
        autocast = (torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)
                    if self.autocast_dtype is not None else nullcontext())
        with autocast:
            out = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                             position_ids=batch["position_ids"], use_cache=False)
        logits = out.logits[:, :-1].float() / self.temperature
        targets = batch["input_ids"][:, 1:]
        picked = torch.gather(logits, -1, targets.unsqueeze(-1)).squeeze(-1)
        return picked - torch.logsumexp(logits, dim=-1)

    @torch.no_grad()
    def token_logprobs(
        self,
        prompts: Sequence[str],
        completions: Sequence[str],
        batch_size: int | None = None,
        completion_ids: Sequence[Sequence[int] | None] | None = None,
    ) -> list[torch.Tensor]:
        """Per-token log-probs of each completion (as :meth:`encode_pair` builds it), one CPU float32 tensor per pair."""
        if isinstance(prompts, str) or isinstance(completions, str):
            raise TypeError("prompts and completions must be lists of strings")
        if len(prompts) != len(completions):
            raise ValueError(f"prompts and completions differ in length: {len(prompts)} vs {len(completions)}")
        ids = list(completion_ids) if completion_ids is not None else [None] * len(prompts)
        if len(ids) != len(prompts):
            raise ValueError(f"completion_ids has {len(ids)} entries for {len(prompts)} pairs")
        size = batch_size or self.micro_batch_size
        pairs = [self.encode_pair(p, c, i) for p, c, i in zip(prompts, completions, ids)]
        out: list[torch.Tensor] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(pairs), size):
                chunk = pairs[start:start + size]
                batch = self._collate(chunk)
                logps = self._token_logps(batch).cpu()
                mask = batch["target_mask"].cpu()
                out.extend(logps[row][mask[row]].clone() for row in range(len(chunk)))
        finally:
            self.model.train(was_training)
        return out

    def sequence_logprobs(self, prompts: Sequence[str], completions: Sequence[str]) -> torch.Tensor:
        """``log pi(completion | prompt)`` of each pair: the sum of its token log-probs (a ``(B,)`` tensor)."""
        return torch.stack([t.sum() for t in self.token_logprobs(prompts, completions)])

    # -- the update ---------------------------------------------------------------------------------------

    def update(
        self,
        samples: Sequence[ActorSample],
        *,
        epochs: int = 1,
        mini_batch_size: int | None = None,
    ) -> dict[str, float]:
        """PPO-clip update (Eq. 4) on ``samples``; returns mean metrics over the optimiser steps.

        Samples without ``old_logps`` get them from the current model before the first epoch. Each epoch
        shuffles the samples (seeded) into mini-batches of ``mini_batch_size`` (default: all of them, one
        optimiser step), each accumulated over micro-batches of ``micro_batch_size`` with token weights, so
        the loss is the token mean over the mini-batch whatever the micro-batching.
        Metrics: ``loss``, ``clip_fraction``, ``approx_kl``, ``grad_norm``, ``learning_rate``, ``advantage_mean``,
        ``tokens``, ``steps``.
        """
        if isinstance(samples, (str, bytes)) or not isinstance(samples, Sequence):
            raise TypeError(f"samples must be a list of ActorSample, got {type(samples).__name__}")
        if not samples:
            raise ValueError("samples is empty: nothing to update on")
        for i, s in enumerate(samples):
            if not isinstance(s, ActorSample):
                raise TypeError(f"samples[{i}] must be an ActorSample, got {type(s).__name__}")
            if isinstance(s.advantage, bool) or not isinstance(s.advantage, (int, float)) or not math.isfinite(s.advantage):
                raise ValueError(f"samples[{i}].advantage must be a finite number, got {s.advantage!r}")
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
        n = len(samples)
        size = n if mini_batch_size is None else mini_batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"mini_batch_size must be a positive integer or None, got {mini_batch_size!r}")

        pairs = [self.encode_pair(s.prompt_text, s.completion_text, s.completion_ids) for s in samples]
        old = self._old_logps(samples, pairs)
        history: list[dict[str, float]] = []
        for _ in range(epochs):
            order = torch.randperm(n, generator=self.generator).tolist() if size < n else list(range(n))
            for start in range(0, n, size):
                idx = order[start:start + size]
                history.append(self._optimizer_step(idx, pairs, old, samples))
        out = {}
        for key in history[0]:  # a skipped step's NaN metrics are left out of the means
            finite = [h[key] for h in history if math.isfinite(h[key])]
            out[key] = sum(finite) / len(finite) if finite else math.nan
        out["skipped_steps"] = sum(h["skipped_steps"] for h in history)
        out["steps"] = float(len(history))
        return out

    def _old_logps(self, samples: Sequence[ActorSample], pairs: list[tuple[list[int], int]]) -> list[torch.Tensor]:
        missing = [i for i, s in enumerate(samples) if s.old_logps is None]
        computed: dict[int, torch.Tensor] = {}
        if missing:
            was_training = self.model.training
            self.model.eval()
            try:
                with torch.no_grad():
                    for start in range(0, len(missing), self.micro_batch_size):
                        chunk = missing[start:start + self.micro_batch_size]
                        batch = self._collate([pairs[i] for i in chunk])
                        logps = self._token_logps(batch).cpu()
                        mask = batch["target_mask"].cpu()
                        for row, i in enumerate(chunk):
                            computed[i] = logps[row][mask[row]].clone()
            finally:
                self.model.train(was_training)
        old: list[torch.Tensor] = []
        for i, s in enumerate(samples):
            if s.old_logps is None:
                old.append(computed[i])
                continue
            t = torch.as_tensor(list(s.old_logps), dtype=torch.float32)
            if t.numel() != pairs[i][1]:
                raise ValueError(f"samples[{i}].old_logps has {t.numel()} values but the completion has {pairs[i][1]} "
                                 "tokens (its completion_ids, or its text tokenised here with EOS when append_eos)")
            if not bool(torch.isfinite(t).all()):
                raise ValueError(f"samples[{i}].old_logps contains NaN or infinite values")
            old.append(t)
        return old

    def _optimizer_step(self, idx: list[int], pairs: list[tuple[list[int], int]], old: list[torch.Tensor],
                        samples: Sequence[ActorSample]) -> dict[str, float]:
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        total_tokens = sum(pairs[i][1] for i in idx)
        sums = {"loss": 0.0, "clip_fraction": 0.0, "approx_kl": 0.0}
        for start in range(0, len(idx), self.micro_batch_size):
            chunk = idx[start:start + self.micro_batch_size]
            batch = self._collate([pairs[i] for i in chunk])
            logps = self._token_logps(batch)
            mask = batch["target_mask"]
            old_t = torch.zeros_like(logps)
            adv = torch.zeros(len(chunk), dtype=logps.dtype, device=logps.device)
            for row, i in enumerate(chunk):
                old_t[row][mask[row]] = old[i].to(logps.device, logps.dtype)
                adv[row] = float(samples[i].advantage)
            result = ppo_clip_loss(logps, old_t, adv, clip_eps=self.clip_eps, mask=mask)
            weight = int(mask.sum()) / total_tokens
            (result.loss * weight).backward()
            sums["loss"] += float(result.loss.detach()) * weight
            sums["clip_fraction"] += float(result.clip_fraction) * weight
            sums["approx_kl"] += float(result.approx_kl) * weight
        sums.update(tokens=float(total_tokens), skipped_steps=0.0,
                    advantage_mean=sum(float(samples[i].advantage) for i in idx) / len(idx))
        stepped = self.optimizer_step(sums["loss"], f"state {samples[idx[0]].prompt_text!r}", sums)
        if not stepped:
            sums.update(skipped_steps=1.0, grad_norm=math.nan)
        return sums

    def optimizer_step(self, loss: float, where: str, metrics: dict[str, float] | None = None) -> bool:
        """The one optimiser step of every actor (PPO/GRPO here, DGRPO, DistRL), after the caller's ``backward()``:
        clip the gradient norm to ``grad_clip``, then step the optimiser and the schedule; a NaN/inf ``loss`` or
        gradient never reaches the weights (the gradients are dropped and the event counted in ``nonfinite``, naming
        ``where``). ``metrics`` gets ``grad_norm`` and ``learning_rate``; True when the weights moved."""
        from coach_rl.nonfinite import skip_nonfinite_step

        params = [p for p in self.model.parameters() if p.requires_grad]
        grad_norm = torch.nn.utils.clip_grad_norm_(params, self.grad_clip if self.grad_clip > 0 else float("inf"))
        if metrics is not None:
            metrics.update(grad_norm=float(grad_norm), learning_rate=float(self.optimizer.param_groups[0]["lr"]))
        if skip_nonfinite_step(self, loss, grad_norm, where):
            return False
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        return True

    # -- resume -------------------------------------------------------------------------------------------

    def state_dict(self, include_model: bool = True) -> dict[str, Any]:
        """Optimiser, scheduler, shuffling RNG, step count and (unless excluded) the model weights."""
        state: dict[str, Any] = {
            # deep copies: the optimiser updates its moment tensors in place on the next step
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "scheduler": copy.deepcopy(self.scheduler.state_dict()),
            "generator": self.generator.get_state(),
            "step": self.step,
            "hparams": {"lr": self.lr, "clip_eps": self.clip_eps, "lr_scheduler_type": self.lr_scheduler_type,
                        "warmup_steps": self.warmup_steps, "total_steps": self.total_steps},
        }
        if include_model:
            state["model"] = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; the schedule settings must match (``ValueError`` otherwise)."""
        missing = {"optimizer", "scheduler", "generator", "step"} - set(state)
        if missing:
            raise ValueError(f"not an ActorUpdater state: missing {sorted(missing)}")
        saved = state.get("hparams", {})
        for key in ("lr_scheduler_type", "warmup_steps", "total_steps"):
            if key in saved and saved[key] != getattr(self, key):
                raise ValueError(f"the saved updater had {key}={saved[key]!r}, this one has {getattr(self, key)!r}")
        if "model" in state:
            self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.generator.set_state(state["generator"])
        self.step = int(state["step"])


def actor_sample(step: Any, advantage: float, use_recorded_logprobs: bool) -> ActorSample:
    """An :class:`ActorSample` of one :class:`~coach_rl.records.StepRecord` with its advantage; recorded log-probs
    only when asked for and aligned with the ids."""
    old = None
    if use_recorded_logprobs:
        if step.token_logprobs is None or step.token_ids is None:
            raise ValueError("use_recorded_logprobs needs token_ids and token_logprobs on every step "
                             "(HFPolicy(record_logprobs=True))")
        old = step.token_logprobs
    # a down-weighted (stale) step counts less: scaling A scales its clipped surrogate term linearly
    return ActorSample(step.prompt_text, step.response, float(advantage) * step.sample_weight, old_logps=old,
                       completion_ids=step.token_ids)


def check_epochs(epochs: int, mini_batch_size: int | None) -> None:
    """``epochs`` a positive integer and ``mini_batch_size`` a positive integer or None (a ValueError naming them)."""
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    if mini_batch_size is not None and (isinstance(mini_batch_size, bool) or not isinstance(mini_batch_size, int)
                                        or mini_batch_size < 1):
        raise ValueError(f"mini_batch_size must be a positive integer or None, got {mini_batch_size!r}")
