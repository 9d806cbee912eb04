"""Supervised warm-up of the policy on expert demonstrations, with TRL's ``SFTTrainer``.

Before RL the policy is fine-tuned on demonstrations in its own format (:mod:`coach_rl.demos`), so that
its first rollouts already produce parseable, sometimes right, actions. Rows are conversational
prompt-completion pairs; the loss covers only the completion (TRL's ``completion_only_loss``): the
answer and its end-of-turn token. The defaults suit a CPU: no mixed precision, no gradient checkpointing,
no dataloader workers, nothing saved to disk.

:func:`demo_accuracy` measures what the warm-up achieved: how often the greedy reply equals the
demonstrated answer exactly, and how often it parses to the demonstrated action.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from coach_reward.completion_loss import completion_only_sft_trainer
from coach_rl.demos import DemoRecord, DemoSet

__all__ = ["DemoAccuracy", "SFTResult", "demo_accuracy", "sft_warmup"]

_ROW_KEYS = ("prompt", "completion", "images")


@dataclass
class SFTResult:
    """What :func:`sft_warmup` did: optimizer ``steps``, the per-logging-step ``losses``, the mean
    ``train_loss``, ``examples`` seen, and wall time."""

    steps: int
    train_loss: float
    losses: list[float] = field(default_factory=list)
    examples: int = 0
    seconds: float = 0.0


def _rows(examples: DemoSet | Sequence[Mapping[str, Any]], policy: Any) -> list[dict[str, Any]]:
    rows = examples.examples(policy) if isinstance(examples, DemoSet) else list(examples)
    if not rows:
        raise ValueError("no SFT examples: collect demonstrations first (coach_rl.demos.collect_demos)")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or "prompt" not in row or "completion" not in row:
            raise ValueError(f"example {i} must be a dict with 'prompt' and 'completion' (TRL prompt-completion rows)")
        out.append({k: row[k] for k in _ROW_KEYS if k in row})
    if len({("images" in r) for r in out}) > 1:
        raise ValueError("either every example has images or none does")
    return out


def sft_warmup(
    model: Any,
    processing_class: Any,
    examples: DemoSet | Sequence[Mapping[str, Any]],
    *,
    max_steps: int = -1,
    num_train_epochs: float = 1.0,
    learning_rate: float = 5e-4,
    per_device_train_batch_size: int = 8,
    gradient_accumulation_steps: int = 1,
    lr_scheduler_type: str = "constant",
    warmup_steps: int = 0,
    weight_decay: float = 0.0,
    max_length: int | None = None,
    seed: int = 0,
    logging_steps: int = 1,
    report_to: str | list[str] = "none",
    output_dir: str | None = None,
    policy: Any = None,
    callbacks: list[Any] | None = None,
    args: Any = None,
    **config_overrides: Any,
) -> SFTResult:
    """Fine-tune ``model`` in place on demonstrations with TRL's ``SFTTrainer`` (completion-only loss).

    Args:
        model: the policy model (trained in place; left in eval mode).
        processing_class: its tokenizer (text models) or processor (VLMs).
        examples: a :class:`~coach_rl.demos.DemoSet` or TRL prompt-completion rows.
        max_steps: optimizer steps (-1: ``num_train_epochs`` epochs).
        learning_rate, per_device_train_batch_size, gradient_accumulation_steps, lr_scheduler_type,
            warmup_steps, weight_decay, seed, logging_steps, report_to: as in ``SFTConfig``.
        max_length: truncate longer sequences (TRL keeps the start, so a long prompt would lose its answer:
            by default nothing is truncated).
        output_dir: where TRL may write (default: a temporary folder, removed afterwards; nothing is saved).
        policy: for a ``DemoSet``, the ``HFPolicy`` whose prompts to use (when it fits prompts to a budget).
        callbacks: extra ``transformers`` trainer callbacks.
        args: a ready ``SFTConfig`` (then the keyword settings above are ignored).
        config_overrides: further ``SFTConfig`` fields.
    """
    from datasets import Dataset
    from transformers import PrinterCallback
    from trl import SFTConfig

    rows = _rows(examples, policy)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="coach-rl-sft-") as scratch:
        if args is None:
            settings: dict[str, Any] = dict(
                output_dir=output_dir or scratch, max_steps=max_steps, num_train_epochs=num_train_epochs,
                learning_rate=learning_rate, per_device_train_batch_size=per_device_train_batch_size,
                gradient_accumulation_steps=gradient_accumulation_steps, lr_scheduler_type=lr_scheduler_type,
                warmup_steps=warmup_steps, weight_decay=weight_decay, max_length=max_length, seed=seed,
                data_seed=seed, logging_steps=logging_steps, report_to=report_to, completion_only_loss=True,
                bf16=False, fp16=False, activation_checkpointing=False, dataloader_num_workers=0,
                dataloader_pin_memory=False, save_strategy="no", disable_tqdm=True, dataset_num_proc=None,
            )
            settings.update(config_overrides)
            args = SFTConfig(**settings)
        trainer = completion_only_sft_trainer()(model=model, args=args, train_dataset=Dataset.from_list(rows),
                             processing_class=processing_class, callbacks=callbacks)
        if args.disable_tqdm:  # no progress bar wanted: no per-step log lines on stdout either
            trainer.remove_callback(PrinterCallback)
        output = trainer.train()
        losses = [float(e["loss"]) for e in trainer.state.log_history if "loss" in e]
    model.eval()
    train_loss = float(output.training_loss) if output.training_loss is not None else math.nan
    return SFTResult(steps=int(trainer.state.global_step), train_loss=train_loss, losses=losses,
                     examples=len(rows), seconds=time.perf_counter() - started)


@dataclass
class DemoAccuracy:
    """Greedy replies against demonstrations: ``exact`` (reply text equals the answer) and ``action``
    (the reply parses to the demonstrated action) rates, ``parsed`` (any valid action) rate, over ``n`` steps."""

    exact: float
    action: float
    parsed: float
    n: int


def demo_accuracy(policy: Any, demos: DemoSet | Sequence[DemoRecord], *, limit: int | None = None) -> DemoAccuracy:
    """Ask ``policy`` (greedy) for every demonstrated step (the first ``limit``) and compare with the answers."""
    records = list(demos.records if isinstance(demos, DemoSet) else demos)
    if limit is not None:
        records = records[:limit]
    if not records:
        raise ValueError("no demonstration records to compare with")
    outputs = policy.act([r.request for r in records], greedy=True)
    exact = sum(o.text.strip() == r.answer.strip() for o, r in zip(outputs, records))
    same = sum(o.action == r.action for o, r in zip(outputs, records))
    parsed = sum(o.action is not None for o in outputs)
    n = len(records)
    return DemoAccuracy(exact=exact / n, action=same / n, parsed=parsed / n, n=n)
