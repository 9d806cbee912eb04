r"""The critic Q_phi(s, a): the policy's architecture plus a scalar value head, its pre-training and its online updates.

Android Coach (Section 3.2) scores a (state, action) pair with a copy of the policy's backbone topped by a
value head (``Linear(hidden, 1)``) read at the LAST real token of the tokenised ``state + action`` text.
The critic is pre-trained on PRM-labelled steps (labels mapped to 0/1) before RL, then regressed online
to the returns R_t with the clipped value loss of Equation 2 (:func:`coach_rl.losses.clipped_value_loss`).

**Why pre-training uses MSE towards {0, 1}, not BCE.** Online, Q is regressed (clipped MSE) straight onto
R_t = w_p sum gamma^(T-tau) r_p + w_o r_o, whose outcome part is w_o * r_o with r_o in {0, 1} (w_o = 1):
Q lives on the scale of returns, and every online step may move it by at most ``clip_range`` (0.5) away
from Q_old. BCE-with-logits would train Q as a *logit*: correct steps pushed towards +inf, wrong ones
towards -inf, typically several units away from {0, 1}. The first online updates would then have to pull
every prediction back across many clipped steps, which is exactly the early value divergence the paper's
pre-training is meant to prevent (Figure 6). MSE towards the binary label keeps Q in [0, 1], the range of
w_o * r_o; ``Q > 0.5`` reads as "judged correct". The pre-training loss is ``0.5 * (Q - y)^2``, Equation 2
without the clip, so both phases optimise the same kind of objective.

How text becomes a score: the state and the action are tokenised separately (the state with the
tokenizer's usual special tokens, the action without) and concatenated, exactly as a prompt and its
completion are during generation, then the EOS token is appended (``append_eos``). Sequences longer than
``max_length`` lose the START of the state, so the action and the most recent context are kept. Batches
are padded on the tokenizer's side; pooling finds the last attended position, so left and right padding
give the same scores, and position ids follow the attention mask so padding never shifts positions.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_model, save_model
from torch import nn
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedModel, get_scheduler

from coach_rl.losses import clipped_value_loss

__all__ = [
    "CRITIC_CONFIG_NAME",
    "CRITIC_WEIGHTS_NAME",
    "Critic",
    "CriticPretrainResult",
    "CriticTrainer",
    "balanced_batches",
    "paired_batches",
    "critic_pretrain",
    "critic_update",
    "last_token_index",
]

CRITIC_CONFIG_NAME = "critic_config.json"
"""File holding the critic's own settings (next to the backbone's ``config.json`` and the tokenizer files)."""
CRITIC_WEIGHTS_NAME = "critic.safetensors"
"""File holding backbone and value-head weights (keys ``backbone.*`` and ``value_head.*``)."""
_FORMAT = "coach_rl.critic"
_FORMAT_VERSION = 1


def last_token_index(attention_mask: torch.Tensor) -> torch.Tensor:
    """Index of the last attended position of each row of a ``(B, T)`` 0/1 mask (left, right or no padding).

    Raises ``ValueError`` if a row attends to nothing.
    """
    if attention_mask.dim() != 2:
        raise ValueError(f"attention_mask must be (batch, length), got shape {tuple(attention_mask.shape)}")
    mask = attention_mask != 0
    if not bool(mask.any(dim=1).all()):
        empty = (~mask.any(dim=1)).nonzero().flatten().tolist()
        raise ValueError(f"rows {empty} of attention_mask attend to no token: nothing to score")
    length = mask.shape[1]
    # argmax returns the first maximum: flip so the first True seen is the last real token.
    return (length - 1) - torch.argmax(mask.flip(dims=[1]).to(torch.int8), dim=1)


def _hidden_size(config: Any) -> int:
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    size = getattr(text, "hidden_size", None)
    if not isinstance(size, int) or size <= 0:
        raise ValueError(f"cannot read hidden_size from the backbone config ({type(config).__name__})")
    return size


def _is_multimodal(config: Any) -> bool:
    """Multimodal backbones (Qwen2-VL...) build their own (multi-axis) position ids: we must not pass 1-D ones."""
    return getattr(config, "vision_config", None) is not None


def _check_texts(states: Sequence[str], actions: Sequence[str]) -> None:
    for name, seq in (("states", states), ("actions", actions)):
        if isinstance(seq, str) or not isinstance(seq, Sequence):
            raise TypeError(f"{name} must be a list of strings, got {type(seq).__name__}")
        bad = [i for i, s in enumerate(seq) if not isinstance(s, str)]
        if bad:
            raise TypeError(f"{name}[{bad[0]}] must be a string, got {type(seq[bad[0]]).__name__}")
    if len(states) != len(actions):
        raise ValueError(f"states and actions must have one entry per pair, got {len(states)} and {len(actions)}")


class Critic(nn.Module):
    """Q(s, a): a causal-LM backbone (the policy's architecture) plus a float32 ``Linear(hidden, 1)`` value head.

    Holds its tokenizer so that :meth:`score` turns texts into values. Build one from a policy checkpoint
    with :meth:`from_pretrained_lm`; persist with :meth:`save` / :meth:`load`.
    """

    def __init__(
        self,
        backbone: PreTrainedModel,
        tokenizer: Any,
        *,
        max_length: int | None = None,
        append_eos: bool = True,
        action_targets: bool = False,
        seed: int | None = 0,
    ) -> None:
        """Wrap ``backbone`` (a base model, e.g. ``Qwen2Model``) and add a freshly initialised value head.

        The head's weights are drawn from N(0, 1/(hidden+1)) (small outputs whatever the hidden scale),
        bias 0, from a forked RNG seeded by ``seed`` (``None``: the global RNG). ``action_targets``: the
        critic reads an index-format action followed by the element it names (see :meth:`action_text`).
        """
        super().__init__()
        if not isinstance(backbone, nn.Module):
            raise TypeError(f"backbone must be a torch module (a transformers base model), got {type(backbone).__name__}")
        if tokenizer is None or not callable(tokenizer):
            raise TypeError("tokenizer must be a transformers tokenizer (the policy's)")
        if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2):
            raise ValueError(f"max_length must be None or an integer >= 2, got {max_length!r}")
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.append_eos = bool(append_eos)
        if not isinstance(action_targets, bool):
            raise TypeError(f"action_targets must be True or False, got {action_targets!r}")
        self.action_targets = action_targets
        hidden = _hidden_size(backbone.config)
        device = next(backbone.parameters()).device
        self.value_head = nn.Linear(hidden, 1, device=device, dtype=torch.float32)
        with torch.random.fork_rng(devices=[], enabled=seed is not None):
            if seed is not None:
                torch.manual_seed(seed)
            nn.init.normal_(self.value_head.weight, mean=0.0, std=1.0 / (hidden + 1))
        nn.init.zeros_(self.value_head.bias)

    # -- construction and persistence -------------------------------------------------------------------

    @classmethod
    def from_pretrained_lm(
        cls,
        path_or_model: str | os.PathLike[str] | PreTrainedModel,
        tokenizer: Any = None,
        *,
        max_length: int | None = None,
        append_eos: bool = True,
        action_targets: bool = False,
        seed: int | None = 0,
        torch_dtype: torch.dtype | None = None,
    ) -> Critic:
        """A critic whose backbone is a COPY of a policy's base model (the paper: same architecture as the policy).

        ``path_or_model`` is a checkpoint directory (loaded with ``AutoModel``, which drops the LM head) or a
        loaded model (its ``base_model`` is deep-copied, so training the critic never touches the policy).
        ``tokenizer`` defaults to the checkpoint's; it is required when a model object is passed.
        ``torch_dtype`` (paths only) loads the backbone in that dtype; the value head always stays float32.
        """
        if isinstance(path_or_model, (str, os.PathLike)):
            kwargs = {"dtype": torch_dtype} if torch_dtype is not None else {}
            backbone = AutoModel.from_pretrained(path_or_model, **kwargs)
            if tokenizer is None:
                tokenizer = AutoTokenizer.from_pretrained(path_or_model)
        elif isinstance(path_or_model, PreTrainedModel):
            if tokenizer is None:
                raise ValueError("pass the policy's tokenizer when building a critic from a model object")
            if torch_dtype is not None:
                raise ValueError(
                    "torch_dtype applies when loading from a path; a model object is copied as it is (load the "
                    "policy in the dtype you want: casting a built model also casts buffers such as RoPE frequencies)"
                )
            backbone = copy.deepcopy(path_or_model.base_model)
        else:
            raise TypeError(
                f"path_or_model must be a checkpoint path or a transformers model, got {type(path_or_model).__name__}"
            )
        backbone.config.use_cache = False
        return cls(backbone, tokenizer, max_length=max_length, append_eos=append_eos, action_targets=action_targets,
                   seed=seed)

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the critic to ``directory``: weights (safetensors), backbone ``config.json``, tokenizer, our JSON config."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        self.backbone.config.save_pretrained(out)
        self.tokenizer.save_pretrained(out)
        save_model(self, str(out / CRITIC_WEIGHTS_NAME))
        settings = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "max_length": self.max_length,
            "append_eos": self.append_eos,
            "action_targets": self.action_targets,
            "hidden_size": self.value_head.in_features,
            "backbone_class": type(self.backbone).__name__,
            "backbone_dtype": str(next(self.backbone.parameters()).dtype).removeprefix("torch."),
        }
        (out / CRITIC_CONFIG_NAME).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        return out

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        device: str | torch.device | None = None,
        torch_dtype: torch.dtype | None = None,
    ) -> Critic:
        """Rebuild a critic written by :meth:`save` (offline: nothing is downloaded)."""
        src = Path(directory)
        cfg_path = src / CRITIC_CONFIG_NAME
        if not cfg_path.is_file():
            raise FileNotFoundError(f"{src} is not a saved critic: {CRITIC_CONFIG_NAME} is missing")
        settings = json.loads(cfg_path.read_text(encoding="utf-8"))
        if settings.get("format") != _FORMAT or settings.get("version") != _FORMAT_VERSION:
            raise ValueError(
                f"{cfg_path} is not a {_FORMAT} v{_FORMAT_VERSION} config: format={settings.get('format')!r}, "
                f"version={settings.get('version')!r}"
            )
        config = AutoConfig.from_pretrained(src)
        dtype_name = settings.get("backbone_dtype", "float32")
        dtype = torch_dtype or getattr(torch, dtype_name, torch.float32)
        backbone = AutoModel.from_config(config, dtype=dtype)
        tokenizer = AutoTokenizer.from_pretrained(src)
        critic = cls(backbone, tokenizer, max_length=settings.get("max_length"),
                     append_eos=settings.get("append_eos", True),
                     action_targets=bool(settings.get("action_targets", False)), seed=None)
        load_model(critic, str(src / CRITIC_WEIGHTS_NAME), strict=True)
        if device is not None:
            critic.to(device)
        return critic

    # -- scoring ----------------------------------------------------------------------------------------

    @property
    def device(self) -> torch.device:
        """Where the value head (and, normally, the backbone) lives."""
        return self.value_head.weight.device

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **backbone_kwargs: Any) -> torch.Tensor:
        """Q for each row: the value head on the backbone's last hidden state at the last attended token; shape ``(B,)``.

        Position ids are derived from ``attention_mask`` (``cumsum - 1``) unless given or the backbone is
        multimodal, so left padding does not shift positions. Extra keyword arguments go to the backbone.
        """
        if input_ids.shape != attention_mask.shape:
            raise ValueError(
                f"input_ids {tuple(input_ids.shape)} and attention_mask {tuple(attention_mask.shape)} differ in shape"
            )
        last = last_token_index(attention_mask)
        if "position_ids" not in backbone_kwargs and not _is_multimodal(self.backbone.config):
            backbone_kwargs["position_ids"] = (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)
        out = self.backbone(input_ids=input_ids, attention_mask=attention_mask, use_cache=False, **backbone_kwargs)
        hidden = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        pooled = hidden[rows, last.to(hidden.device)]
        return self.value_head(pooled.to(self.value_head.weight.dtype)).squeeze(-1)

    def action_text(self, state: str, action: str) -> str:
        """The action as the critic reads it: as given, or with ``action_targets`` followed by `` on <element>``.

        ``{"action_type": "click", "index": 4}`` becomes ``... on TextView 'Network & internet'`` (the screen line
        the index names in ``state``, :func:`coach_rl.prompting.screen_index_target`), so that the critic compares
        the task with the element's text next to the action instead of looking the number up through the screen
        list, which a small backbone fits poorly. Actions without an index are unchanged.
        """
        if not self.action_targets:
            return action
        from coach_rl.prompting import screen_index_target

        target = screen_index_target(state, action)
        return action if target is None else f"{action} on {target}"

    def tokenize_pair(self, state: str, action: str) -> list[int]:
        """Token ids of one ``state + action`` (see the module docstring: separate tokenisation, EOS, left truncation)."""
        tok = self.tokenizer
        ids = list(tok(state, add_special_tokens=True)["input_ids"]) + list(
            tok(self.action_text(state, action), add_special_tokens=False)["input_ids"]
        )
        eos = tok.eos_token_id
        if self.append_eos and eos is not None and (not ids or ids[-1] != eos):
            ids.append(eos)
        if not ids:
            raise ValueError("state and action are both empty: nothing to score")
        if self.max_length is not None and len(ids) > self.max_length:
            ids = ids[-self.max_length:]
        return ids

    def encode(
        self, states: Sequence[str], actions: Sequence[str], *, padding_side: str | None = None
    ) -> dict[str, torch.Tensor]:
        """``input_ids``/``attention_mask`` of a batch of pairs, padded on ``padding_side`` (default: the tokenizer's)."""
        _check_texts(states, actions)
        if not states:
            raise ValueError("cannot encode an empty batch")
        side = padding_side or getattr(self.tokenizer, "padding_side", "right")
        if side not in ("left", "right"):
            raise ValueError(f"padding_side must be 'left' or 'right', got {side!r}")
        seqs = [self.tokenize_pair(s, a) for s, a in zip(states, actions)]
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, seq in enumerate(seqs):
            span = slice(width - len(seq), width) if side == "left" else slice(0, len(seq))
            ids[row, span] = torch.tensor(seq, dtype=torch.long)
            mask[row, span] = 1
        return {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}

    def values(self, states: Sequence[str], actions: Sequence[str]) -> torch.Tensor:
        """Q for a batch of pairs WITH gradient (one forward pass; the trainer's micro-batches use this)."""
        return self(**self.encode(states, actions))

    @torch.no_grad()
    def score(self, states: Sequence[str], actions: Sequence[str], batch_size: int = 8) -> torch.Tensor:
        """Q(s, a) for every pair, without gradient, in eval mode; a float32 CPU tensor of shape ``(B,)``.

        Pairs are batched by length (less padding); results come back in input order.
        """
        _check_texts(states, actions)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        out = torch.empty(len(states), dtype=torch.float32)
        if not states:
            return out
        lengths = [len(s) + len(a) for s, a in zip(states, actions)]
        order = sorted(range(len(states)), key=lengths.__getitem__)
        was_training = self.training
        self.eval()
        try:
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                q = self.values([states[i] for i in chunk], [actions[i] for i in chunk])
                out[torch.tensor(chunk)] = q.float().cpu()
        finally:
            self.train(was_training)
        return out


def _disable_dropout(module: nn.Module) -> None:
    """Set every dropout probability to 0 (value regression wants Q and Q_old from the same function)."""
    for sub in module.modules():
        if isinstance(sub, nn.Dropout):
            sub.p = 0.0
        for name in ("attention_dropout", "dropout", "hidden_dropout", "resid_dropout"):
            value = getattr(sub, name, None)
            if isinstance(value, float) and value > 0:
                setattr(sub, name, 0.0)


def _finite_mean(values: Sequence[float]) -> float:
    finite = [float(v) for v in values if math.isfinite(float(v))]
    return sum(finite) / len(finite) if finite else math.nan


def _as_float_list(values: Any, name: str, n: int) -> torch.Tensor:
    t = torch.as_tensor(values, dtype=torch.float32).detach().cpu().flatten()
    if t.numel() != n:
        raise ValueError(f"{name} must have one value per pair ({n}), got {t.numel()}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


class CriticTrainer:
    """The critic's optimiser loop: AdamW, linear warmup (``warmup_ratio`` of ``total_steps``), grad-norm clip.

    Kept across RL iterations so the optimiser state carries over; :meth:`state_dict` /
    :meth:`load_state_dict` give an exact resume (critic weights, optimiser, scheduler, shuffling RNG, step).
    Dropout is switched off in the critic (``disable_dropout``): Q_old and Q must come from the same function.
    """

    def __init__(
        self,
        critic: Critic,
        *,
        total_steps: int,
        learning_rate: float = 1e-5,
        warmup_ratio: float = 0.1,
        clip_range: float = 0.5,
        max_grad_norm: float = 1.0,
        micro_batch_size: int = 8,
        weight_decay: float = 0.0,
        betas: tuple[float, float] = (0.9, 0.999),
        lr_scheduler_type: str = "constant_with_warmup",
        disable_dropout: bool = True,
        seed: int = 0,
    ) -> None:
        """Set up the optimiser and the schedule; ``total_steps`` (optimiser steps planned) sizes the warmup."""
        if not isinstance(critic, Critic):
            raise TypeError(f"critic must be a coach_rl Critic, got {type(critic).__name__}")
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"total_steps must be a positive integer, got {total_steps!r}")
        for name, value in (("learning_rate", learning_rate), ("clip_range", clip_range),
                            ("max_grad_norm", max_grad_norm)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        if not (isinstance(warmup_ratio, (int, float)) and 0 <= warmup_ratio < 1):
            raise ValueError(f"warmup_ratio must be in [0, 1), got {warmup_ratio!r}")
        if isinstance(micro_batch_size, bool) or not isinstance(micro_batch_size, int) or micro_batch_size < 1:
            raise ValueError(f"micro_batch_size must be a positive integer, got {micro_batch_size!r}")
        self.critic = critic
        self.total_steps = total_steps
        self.learning_rate = float(learning_rate)
        self.warmup_ratio = float(warmup_ratio)
        self.warmup_steps = int(warmup_ratio * total_steps)
        self.clip_range = float(clip_range)
        self.max_grad_norm = float(max_grad_norm)
        self.micro_batch_size = micro_batch_size
        self.lr_scheduler_type = lr_scheduler_type
        if disable_dropout:
            _disable_dropout(critic)
        params = [p for p in critic.parameters() if p.requires_grad]
        if not params:
            raise ValueError("the critic has no trainable parameters")
        self.optimizer = torch.optim.AdamW(params, lr=self.learning_rate, betas=betas, weight_decay=weight_decay)
        self.scheduler = get_scheduler(lr_scheduler_type, self.optimizer, num_warmup_steps=self.warmup_steps,
                                       num_training_steps=total_steps)
        self.generator = torch.Generator().manual_seed(seed)
        self.step = 0
        from coach_rl.nonfinite import NonFiniteMonitor

        self.nonfinite = NonFiniteMonitor()
        """Counts skipped steps (a NaN/inf loss or gradient: ``nonfinite/critic_update``); the loop shares its own."""

    @classmethod
    def from_config(cls, critic: Critic, config: Any, total_steps: int, **overrides: Any) -> CriticTrainer:
        """A trainer with the ``critic_*`` fields of a :class:`coach_rl.arguments.CriticArguments` (e.g. ``CoachConfig``)."""
        kwargs: dict[str, Any] = {
            "learning_rate": config.critic_learning_rate,
            "warmup_ratio": config.critic_warmup_ratio,
            "clip_range": config.critic_clip_range,
            "max_grad_norm": config.critic_max_grad_norm,
            "micro_batch_size": config.critic_batch_size,
            "seed": getattr(config, "seed", 0),
        }
        kwargs.update(overrides)
        return cls(critic, total_steps=total_steps, **kwargs)

    # -- one optimiser step -----------------------------------------------------------------------------

    def _optimizer_step(
        self,
        states: Sequence[str],
        actions: Sequence[str],
        loss_fn: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, dict[str, torch.Tensor]]],
    ) -> dict[str, float]:
        """Accumulate ``loss_fn(q, rows)`` over micro-batches (weighted to the batch mean), clip, step."""
        n = len(states)
        self.critic.train()
        self.optimizer.zero_grad(set_to_none=True)
        totals: dict[str, float] = {}
        for start in range(0, n, self.micro_batch_size):
            rows = torch.arange(start, min(n, start + self.micro_batch_size))
            q = self.critic.values([states[i] for i in rows], [actions[i] for i in rows])
            loss, extra = loss_fn(q, rows)
            weight = len(rows) / n
            (loss * weight).backward()
            for key, value in {"loss": loss, **extra}.items():
                totals[key] = totals.get(key, 0.0) + float(value.detach()) * weight
        grad_norm = torch.nn.utils.clip_grad_norm_(self.critic.parameters(), self.max_grad_norm)
        lr = self.optimizer.param_groups[0]["lr"]
        if not (math.isfinite(totals.get("loss", 0.0)) and math.isfinite(float(grad_norm))):
            # a NaN/inf loss or gradient (a broken critic, a bad batch) never reaches the weights: the step is skipped
            self.optimizer.zero_grad(set_to_none=True)
            self.nonfinite.bad("critic_update", f"state {states[0]!r}" if states else "the critic update",
                               f"critic step skipped: loss {totals.get('loss', math.nan):g}, gradient norm "
                               f"{float(grad_norm):g}")
            totals.update(grad_norm=math.nan, learning_rate=float(lr), skipped_steps=1.0)
            return totals
        self.nonfinite.ok("critic_update")
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        totals.update(grad_norm=float(grad_norm), learning_rate=float(lr), skipped_steps=0.0)
        return totals

    def update(
        self,
        states: Sequence[str],
        actions: Sequence[str],
        returns: Sequence[float] | torch.Tensor,
        q_old: Sequence[float] | torch.Tensor | None = None,
        *,
        epochs: int = 1,
        mini_batch_size: int | None = None,
    ) -> dict[str, float]:
        """Regress Q onto the returns with the clipped value loss (Eq. 2); returns mean metrics over the steps.

        ``q_old`` are the critic's values of these pairs before this update (computed here with
        :meth:`Critic.score` when ``None``). The batch is cut into shuffled mini-batches of
        ``mini_batch_size`` (default: the whole batch), one optimiser step each, for ``epochs`` passes;
        from the second step on Q may drift from Q_old, and the clip keeps it within ``clip_range``.
        Metrics: ``loss``, ``value_mse`` (unclipped), ``value_mean``, ``return_mean``, ``value_clip_fraction``
        (share of pairs whose gradient the clip removed), ``grad_norm``, ``learning_rate``, ``steps``.
        """
        _check_texts(states, actions)
        n = len(states)
        if n == 0:
            raise ValueError("cannot update the critic on an empty batch")
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
        size = n if mini_batch_size is None else mini_batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"mini_batch_size must be a positive integer or None, got {mini_batch_size!r}")
        target = _as_float_list(returns, "returns", n)
        old = (self.critic.score(states, actions, batch_size=self.micro_batch_size) if q_old is None
               else _as_float_list(q_old, "q_old", n))
        clip = self.clip_range
        history: list[dict[str, float]] = []
        for _ in range(epochs):
            order = torch.randperm(n, generator=self.generator) if size < n else torch.arange(n)
            for start in range(0, n, size):
                idx = order[start:start + size].tolist()
                batch_states = [states[i] for i in idx]
                batch_actions = [actions[i] for i in idx]
                r_all, o_all = target[idx], old[idx]

                def loss_fn(q: torch.Tensor, rows: torch.Tensor, r_all: torch.Tensor = r_all,
                            o_all: torch.Tensor = o_all) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
                    r = r_all[rows].to(q.device, q.dtype)
                    o = o_all[rows].to(q.device, q.dtype)
                    loss = clipped_value_loss(q, o, r, clip_range=clip)
                    with torch.no_grad():
                        q_clipped = o + (q - o).clamp(-clip, clip)
                        clipped = ((q_clipped - r) ** 2 > (q - r) ** 2).float().mean()
                    return loss, {"value_mse": ((q - r) ** 2).mean(), "value_mean": q.mean(),
                                  "return_mean": r.mean(), "value_clip_fraction": clipped}

                history.append(self._optimizer_step(batch_states, batch_actions, loss_fn))
        out = {key: _finite_mean([h[key] for h in history]) for key in history[0]}  # skipped steps' NaN left out
        out["skipped_steps"] = sum(h["skipped_steps"] for h in history)
        out["steps"] = float(len(history))
        return out

    def regress(
        self, states: Sequence[str], actions: Sequence[str], targets: Sequence[float] | torch.Tensor
    ) -> dict[str, float]:
        """One optimiser step of plain MSE ``0.5 * (Q - y)^2`` (pre-training on 0/1 labels); metrics as in :meth:`update`."""
        _check_texts(states, actions)
        if not states:
            raise ValueError("cannot train the critic on an empty batch")
        target = _as_float_list(targets, "targets", len(states))

        def loss_fn(q: torch.Tensor, rows: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
            y = target[rows].to(q.device, q.dtype)
            err = (q - y) ** 2
            with torch.no_grad():
                accuracy = ((q > 0.5) == (y > 0.5)).float().mean()
            return 0.5 * err.mean(), {"value_mse": err.mean(), "value_mean": q.mean(), "accuracy": accuracy}

        return self._optimizer_step(states, actions, loss_fn)

    # -- resume -----------------------------------------------------------------------------------------

    def state_dict(self, include_critic: bool = True) -> dict[str, Any]:
        """Everything needed to continue exactly: critic weights (unless excluded), optimiser, scheduler, RNG, step."""
        state: dict[str, Any] = {
            # Deep copies: the optimizer's moment tensors are updated in place by the next step, so a
            # state held in memory (not saved at once) would otherwise change under the caller.
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "scheduler": copy.deepcopy(self.scheduler.state_dict()),
            "generator": self.generator.get_state(),
            "step": self.step,
            "hparams": {"total_steps": self.total_steps, "learning_rate": self.learning_rate,
                        "warmup_ratio": self.warmup_ratio, "clip_range": self.clip_range,
                        "max_grad_norm": self.max_grad_norm, "lr_scheduler_type": self.lr_scheduler_type},
        }
        if include_critic:
            state["critic"] = {k: v.detach().clone() for k, v in self.critic.state_dict().items()}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; the schedule settings must match this trainer's (``ValueError`` otherwise)."""
        missing = {"optimizer", "scheduler", "generator", "step"} - set(state)
        if missing:
            raise ValueError(f"not a CriticTrainer state: missing {sorted(missing)}")
        saved = state.get("hparams", {})
        for key in ("total_steps", "warmup_ratio", "lr_scheduler_type"):
            if key in saved and saved[key] != getattr(self, key):
                raise ValueError(f"the saved trainer had {key}={saved[key]!r}, this one has {getattr(self, key)!r}")
        if "critic" in state:
            self.critic.load_state_dict(state["critic"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.generator.set_state(state["generator"])
        self.step = int(state["step"])


def critic_update(
    trainer: CriticTrainer,
    batch: Sequence[tuple[str, str, float]],
    q_old: Sequence[float] | torch.Tensor | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """Online critic update on ``(state_text, action_text, return R_t)`` triples with the clipped value loss.

    A thin wrapper over :meth:`CriticTrainer.update` (the trainer keeps the optimiser across calls); ``kwargs``
    go there (``epochs``, ``mini_batch_size``).
    """
    if not isinstance(trainer, CriticTrainer):
        raise TypeError(f"trainer must be a CriticTrainer (it owns the optimiser), got {type(trainer).__name__}")
    states, actions, returns = _unzip3(batch, "batch", "(state, action, return)")
    return trainer.update(states, actions, returns, q_old, **kwargs)


def _unzip3(rows: Sequence[Any], name: str, shape: str) -> tuple[list[str], list[str], list[float]]:
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
        raise TypeError(f"{name} must be a list of {shape} triples")
    a: list[str] = []
    b: list[str] = []
    c: list[float] = []
    for i, row in enumerate(rows):
        if not isinstance(row, (tuple, list)) or len(row) != 3:
            raise ValueError(f"{name}[{i}] must be a {shape} triple, got {row!r:.80}")
        a.append(row[0])
        b.append(row[1])
        value = row[2]
        if isinstance(value, torch.Tensor):
            value = value.item()
        if isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name}[{i}] has a non-numeric or non-finite third value {value!r}")
        c.append(float(value))
    return a, b, c


@dataclass
class CriticPretrainResult:
    """What :func:`critic_pretrain` did: per-step metrics and the accuracy (Q > 0.5 vs label) it ended with."""

    steps: int
    losses: list[float] = field(default_factory=list)
    accuracy: float = float("nan")
    """Accuracy on the training examples after the last step."""
    eval_accuracy: float | None = None
    """Accuracy on ``eval_examples`` after the last step, when given."""
    trainer: CriticTrainer | None = None


def critic_pretrain(
    critic: Critic,
    examples: Sequence[tuple[str, str, int | float | bool]],
    *,
    learning_rate: float = 1e-5,
    epochs: int = 1,
    batch_size: int = 8,
    warmup_ratio: float = 0.1,
    max_grad_norm: float = 1.0,
    micro_batch_size: int | None = None,
    max_steps: int | None = None,
    lr_scheduler_type: str = "constant_with_warmup",
    seed: int = 0,
    eval_examples: Sequence[tuple[str, str, int | float | bool]] | None = None,
    balanced: bool = False,
    paired: bool = False,
) -> CriticPretrainResult:
    """Pre-train Q on PRM-labelled steps (Appendix B): MSE of Q towards the 0/1 label (see the module docstring).

    ``examples`` are ``(state_text, action_text, label)`` with label 0/1 (or False/True). Each epoch visits
    them in an order shuffled by ``seed``; ``batch_size`` pairs per optimiser step (micro-batched by
    ``micro_batch_size``, default ``batch_size``); ``max_steps`` stops early. Returns the per-step losses
    and the final accuracies (``Q > 0.5`` predicts label 1).

    ``balanced`` (beyond the paper): every batch holds as many label-1 as label-0 pairs, drawn with replacement
    (:func:`balanced_batches`). With about one correct action in five, plain passes let a small critic settle
    on the label prior (Q near 0.2 for everything, accuracy equal to the majority class) and rank poorly.

    ``paired`` (beyond the paper, implies balanced): every label-1 pair in a batch comes with a label-0 pair of the
    SAME state (:func:`paired_batches`), so nothing that describes the state alone can lower the loss: only what
    separates the actions a state offers, which is the comparison ACLOO makes among the K actions.
    """
    states, actions, labels = _unzip3(examples, "examples", "(state, action, label)")
    if not states:
        raise ValueError("examples is empty: nothing to pre-train on")
    bad = [i for i, y in enumerate(labels) if y not in (0.0, 1.0)]
    if bad:
        raise ValueError(f"labels must be 0 or 1 (PRM judgments mapped to binary scores); examples[{bad[0]}] has "
                         f"{labels[bad[0]]!r}")
    for name, value in (("epochs", epochs), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    steps_per_epoch = math.ceil(len(states) / batch_size)
    total = epochs * steps_per_epoch if max_steps is None else min(max_steps, epochs * steps_per_epoch)
    if total < 1:
        raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
    trainer = CriticTrainer(critic, total_steps=total, learning_rate=learning_rate, warmup_ratio=warmup_ratio,
                            max_grad_norm=max_grad_norm, micro_batch_size=micro_batch_size or batch_size,
                            lr_scheduler_type=lr_scheduler_type, seed=seed)
    result = CriticPretrainResult(steps=0, trainer=trainer)
    if paired or balanced:
        batches = (paired_batches(states, labels, batch_size, total, trainer.generator) if paired
                   else balanced_batches(labels, batch_size, total, trainer.generator))
        for idx in batches:
            metrics = trainer.regress([states[i] for i in idx], [actions[i] for i in idx], [labels[i] for i in idx])
            result.losses.append(metrics["loss"])
            result.steps += 1
    while result.steps < total:
        order = torch.randperm(len(states), generator=trainer.generator).tolist()
        for start in range(0, len(order), batch_size):
            if result.steps >= total:
                break
            idx = order[start:start + batch_size]
            metrics = trainer.regress([states[i] for i in idx], [actions[i] for i in idx], [labels[i] for i in idx])
            result.losses.append(metrics["loss"])
            result.steps += 1
    result.accuracy = _accuracy(critic, states, actions, labels, batch_size)
    if eval_examples is not None:
        e_states, e_actions, e_labels = _unzip3(eval_examples, "eval_examples", "(state, action, label)")
        result.eval_accuracy = _accuracy(critic, e_states, e_actions, e_labels, batch_size)
    return result


def balanced_batches(
    labels: Sequence[float], batch_size: int, steps: int, generator: torch.Generator
) -> list[list[int]]:
    """``steps`` batches of example indices, each half label 1 and half label 0 (the odd one out a label 0),
    drawn with replacement by ``generator``; ``ValueError`` when one of the two classes is missing."""
    positives = [i for i, y in enumerate(labels) if y > 0.5]
    negatives = [i for i, y in enumerate(labels) if y <= 0.5]
    if not positives or not negatives:
        raise ValueError(f"balanced batches need both labels: {len(positives)} positive and {len(negatives)} "
                         "negative examples")
    if batch_size < 2:
        raise ValueError(f"balanced batches need batch_size >= 2, got {batch_size}")
    half = batch_size // 2
    out = []
    for _ in range(steps):
        pos = torch.randint(len(positives), (half,), generator=generator).tolist()
        neg = torch.randint(len(negatives), (batch_size - half,), generator=generator).tolist()
        out.append([positives[i] for i in pos] + [negatives[i] for i in neg])
    return out


def paired_batches(
    states: Sequence[str], labels: Sequence[float], batch_size: int, steps: int, generator: torch.Generator
) -> list[list[int]]:
    """``steps`` batches of example indices ``[pos_1, neg_1, pos_2, neg_2, ...]`` where ``neg_i`` is a label-0
    example of ``pos_i``'s own state (states that hold both labels only; an odd batch size ends with one more
    such negative), drawn with replacement by ``generator``; ``ValueError`` when no state holds both labels."""
    if batch_size < 2:
        raise ValueError(f"paired batches need batch_size >= 2, got {batch_size}")
    by_state: dict[str, tuple[list[int], list[int]]] = {}
    for i, (state, y) in enumerate(zip(states, labels)):
        by_state.setdefault(state, ([], []))[0 if y > 0.5 else 1].append(i)
    groups = [(pos, neg) for pos, neg in by_state.values() if pos and neg]
    if not groups:
        raise ValueError("paired batches need states with both a correct and a wrong action; none of the "
                         f"{len(by_state)} states has both")
    positives = [(i, neg) for pos, neg in groups for i in pos]
    out = []
    for _ in range(steps):
        batch: list[int] = []
        while len(batch) < batch_size:
            i, neg = positives[int(torch.randint(len(positives), (1,), generator=generator))]
            j = neg[int(torch.randint(len(neg), (1,), generator=generator))]
            batch.extend([i, j] if len(batch) + 2 <= batch_size else [j])
        out.append(batch)
    return out


def _accuracy(critic: Critic, states: list[str], actions: list[str], labels: list[float], batch_size: int) -> float:
    if not states:
        return float("nan")
    q = critic.score(states, actions, batch_size=batch_size)
    y = torch.tensor(labels) > 0.5
    return float(((q > 0.5) == y).float().mean())
