"""A completion-only SFT loss that skips the prompt's positions on CPU, for PRM training and policy warm-ups.

Both of the project's supervised fine-tunes (a PRM's verdicts here, coach-rl's warm-up on expert actions) train
on short completions after long screen prompts, where TRL's loss spends most of a CPU step on positions it masks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["completion_only_sft_trainer"]


def completion_only_sft_trainer() -> type:
    """TRL's ``SFTTrainer`` whose loss projects only the completion's positions through the LM head on CPU.

    TRL's fused LM head scores every position of the batch on devices without Triton (and masks the prompt's
    afterwards), so on CPU most of a step went into log-probabilities of prompt tokens that the loss then drops:
    a policy's warm-up (coach-rl) or a PRM's verdicts score ~4,000 positions per batch where ~100 count. This
    subclass computes the same completion-only loss from the completion's hidden states alone; anything it does
    not cover (GPUs, images, label smoothing, another loss type, custom losses, MoE, scaled logits) goes to TRL.
    """
    import torch
    import torch.nn.functional as F
    from trl import SFTTrainer

    scaled = ("final_logit_softcapping", "logit_scale", "output_multiplier", "lm_head_multiplier", "logits_scaling")

    class CompletionOnlySFTTrainer(SFTTrainer):
        def _compact_loss_applies(self, model: Any, inputs: Mapping[str, Any]) -> bool:
            text_config = model.config.get_text_config()
            backbone = getattr(model, getattr(model, "base_model_prefix", ""), None)
            return (isinstance(backbone, torch.nn.Module) and model.device.type == "cpu"
                    and set(inputs) <= {"input_ids", "attention_mask", "position_ids", "labels"}
                    and self.args.loss_type == "nll" and self.label_smoother is None
                    and self.compute_loss_func is None and not self.aux_loss_enabled
                    and all(getattr(text_config, name, None) is None for name in scaled))

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: D102
            if return_outputs or not self._compact_loss_applies(model, inputs):
                return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                            num_items_in_batch=num_items_in_batch)
            labels = inputs["labels"][:, 1:]
            mask = labels != -100
            backbone = getattr(model, model.base_model_prefix)
            hidden = backbone(**{k: v for k, v in inputs.items() if k != "labels"}, use_cache=False).last_hidden_state
            logits = model.get_output_embeddings()(hidden[:, :-1][mask]).float()
            targets = labels[mask]
            count = mask.sum() if num_items_in_batch is None else num_items_in_batch
            loss = F.cross_entropy(logits, targets, reduction="sum") / torch.as_tensor(count).clamp(min=1)
            if self.args.average_tokens_across_devices and num_items_in_batch is not None:
                loss = loss * self.accelerator.num_processes
            with torch.no_grad():  # the metrics TRL logs for SFT, over the same positions
                mode = "train" if model.training else "eval"
                n = max(int(mask.sum()), 1)
                log_p = torch.log_softmax(logits, dim=-1)
                self._metrics[mode]["entropy"].append(float(-(log_p.exp() * log_p).sum(-1).sum()) / n)
                self._metrics[mode]["mean_token_accuracy"].append(float((logits.argmax(-1) == targets).sum()) / n)
                if mode == "train" and "attention_mask" in inputs:
                    self._total_train_tokens += int(inputs["attention_mask"].sum())
                    self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
            return loss

    return CompletionOnlySFTTrainer
