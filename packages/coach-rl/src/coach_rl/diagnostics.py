r"""Oracle diagnostics: does the critic rank actions right, do the advantages point the right way, how far the actor moved.

The simulated phone knows the right next action in every state (its scripted expert). With
``oracle_diagnostics`` on (the default on the sim), the collector keeps, per step, the expert's action and the
elements an index answer points into (:class:`StateOracle`); the learners never read it. From it:

* **critic ranking** (Android Coach, on the K actions sampled at each stored state): the AUC of ``Q(s, a)``
  against "a is the expert's action" (pooled over the batch, and within groups that hold both kinds), the share
  of groups whose top-Q action is the expert's (``top1``), and the Q spread within a group;
* **advantage agreement** (every algorithm): the share of advantages whose sign says what the oracle says
  (positive for the expert's action, negative for any other), their mean magnitude and the mean advantage of
  expert and non-expert actions;
* **policy drift**: the KL divergence from the warm-up policy to the current one, per token, along the warm-up's
  greedy replies on a fixed set of probe states (:class:`PolicyDrift`).

Every function here is pure and tested against hand-computed numbers (tests/coach_rl/test_diagnostics.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

__all__ = [
    "ORACLE_TOLERANCE",
    "PolicyDrift",
    "StateOracle",
    "advantage_agreement",
    "binary_auc",
    "fixed_normal",
    "ranking_metrics",
    "step_advantage_metrics",
]

ORACLE_TOLERANCE = 0.14
"""Largest distance between two actions' points, as a share of the screen width, for them to count as the same
(the PRM dataset's action-match rule, and the sim-oracle PRM's)."""


@dataclass(frozen=True)
class StateOracle:
    """The expert's action in one state and what is needed to read any reply given there (the screen's elements)."""

    expert: Any
    """The expert's next action (an ``android_gym.Action``)."""
    elements: tuple[Any, ...] = ()
    """The screen's ``UIElement`` tuple in index order (what index-format replies point into)."""
    screen_size: tuple[int, int] | None = None
    """The device's (width, height) in pixels."""

    def to_json(self) -> str:
        """A compact JSON form (stored in the replay buffer's ``oracle`` column)."""
        return json.dumps({"expert": self.expert.to_dict(), "screen_size": list(self.screen_size or ()) or None,
                           "elements": [_element_row(e) for e in self.elements]}, ensure_ascii=False,
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> StateOracle:
        """Read :meth:`to_json` back (a ValueError naming the field for anything else)."""
        from android_gym.actions import action_from_dict
        from android_gym.xml import UIElement

        try:
            data = json.loads(text)
            expert = action_from_dict(data["expert"])
            size = data.get("screen_size")
            elements = tuple(UIElement(**{**row, "bounds": tuple(row["bounds"]), "index_path": tuple(row["index_path"])})
                             for row in data.get("elements") or ())
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"not a StateOracle JSON ({type(err).__name__}: {err})") from err
        return cls(expert, elements, tuple(size) if size else None)

    def matches(self, action: Any) -> bool:
        """Whether ``action`` (an android_gym ``Action``, None when unparsed) is the expert's by the action-match rule."""
        from coach_reward.prm_data import match_actions

        if action is None or isinstance(action, Exception):
            return False
        width = int(self.screen_size[0]) if self.screen_size else 1080
        return bool(match_actions(action, self.expert, screen_width=width, tolerance=ORACLE_TOLERANCE).match)

    def label_reply(self, reply: str, policy_format: Any) -> bool:
        """Whether the policy's reply text, read by ``policy_format`` (a ``PolicyFormat``) here, is the expert's action."""
        from coach_rl.policy import PolicyRequest

        request = PolicyRequest(instruction="", elements=self.elements, screen_size=self.screen_size)
        _, action = policy_format.parse(reply, request)
        return self.matches(action)


def _element_row(element: Any) -> dict[str, Any]:
    row = asdict(element)
    row["bounds"] = list(row["bounds"])
    row["index_path"] = list(row["index_path"])
    return row


def binary_auc(scores: Sequence[float] | torch.Tensor, labels: Sequence[bool] | torch.Tensor) -> float:
    r"""The area under the ROC curve of ``scores`` for ``labels`` (Mann-Whitney U / (n_pos n_neg), ties count 1/2).

    NaN when one class is absent (nothing to rank).
    """
    s = torch.as_tensor(scores, dtype=torch.float64).flatten()
    y = torch.as_tensor(labels, dtype=torch.bool).flatten()
    if s.numel() != y.numel():
        raise ValueError(f"{s.numel()} scores for {y.numel()} labels")
    pos, neg = s[y], s[~y]
    if not pos.numel() or not neg.numel():
        return math.nan
    diff = pos[:, None] - neg[None, :]
    wins = (diff > 0).double().sum() + 0.5 * (diff == 0).double().sum()
    return float(wins / (pos.numel() * neg.numel()))


def ranking_metrics(q: torch.Tensor, labels: torch.Tensor) -> dict[str, float]:
    """How well critic scores ``q`` (groups x K) rank the expert's actions (``labels``, same shape, bool).

    ``auc``: pooled over every scored action; ``auc_within``: mean AUC over groups that hold both an expert and a
    non-expert action (the comparison ACLOO makes); ``top1``: share of groups with an expert action whose highest-Q
    action is one; ``expert_share``: share of sampled actions that are the expert's; ``mixed_groups``: share of
    groups holding both kinds (the only groups where ranking matters); ``q_spread``: mean max - min of Q in a group;
    ``q_spread_mixed`` / ``q_spread_pure``: the same over mixed groups, and over groups of one kind whose Q still
    differ (all the expert's or all not: any preference there is the critic's noise, which ACLOO turns into advantages).
    """
    q = torch.as_tensor(q, dtype=torch.float64)
    y = torch.as_tensor(labels, dtype=torch.bool)
    if q.dim() != 2 or q.shape != y.shape:
        raise ValueError(f"q and labels must both be (groups, K); got {tuple(q.shape)} and {tuple(y.shape)}")
    has_pos = y.any(dim=1)
    mixed = has_pos & ~y.all(dim=1)
    within = [binary_auc(q[g], y[g]) for g in range(q.shape[0]) if bool(mixed[g])]
    top = y.gather(1, q.argmax(dim=1, keepdim=True)).squeeze(1)
    spread = q.max(dim=1).values - q.min(dim=1).values
    pure = ~mixed & (spread > 1e-8)
    return {
        "auc": binary_auc(q, y),
        "auc_within": sum(within) / len(within) if within else math.nan,
        "top1": float(top[has_pos].double().mean()) if bool(has_pos.any()) else math.nan,
        "expert_share": float(y.double().mean()),
        "mixed_groups": float(mixed.double().mean()),
        "q_spread": float(spread.mean()),
        "q_spread_mixed": float(spread[mixed].mean()) if bool(mixed.any()) else math.nan,
        "q_spread_pure": float(spread[pure].mean()) if bool(pure.any()) else math.nan,
    }


def fixed_normal(states: Sequence[str], replies: Sequence[str]) -> torch.Tensor:
    """One standard normal per ``(state, reply)`` pair, the same every time the pair comes back (a hash seeds it):
    the error of a consistent but imperfect critic (``coach_oracle_noise``)."""
    if len(states) != len(replies):
        raise ValueError(f"{len(states)} states for {len(replies)} replies")
    values = []
    for state, reply in zip(states, replies):
        digest = hashlib.blake2b(f"{state}\x00{reply}".encode(), digest_size=8).digest()
        generator = torch.Generator().manual_seed(int.from_bytes(digest, "little") & (2**63 - 1))
        values.append(float(torch.randn((), generator=generator, dtype=torch.float64)))
    return torch.tensor(values, dtype=torch.float64)


def advantage_agreement(advantages: Sequence[float] | torch.Tensor, labels: Sequence[float] | torch.Tensor,
                        *, eps: float = 1e-8) -> dict[str, float]:
    """Whether advantages point where the oracle does: ``labels`` 1 (expert's action), 0 (not), NaN (unknown).

    ``sign_agreement``: share of steps with a known label and ``|A| > eps`` whose sign matches (A > 0 for the
    expert's action, A < 0 otherwise); ``weighted_agreement``: the same share weighted by ``|A|`` (how much of the
    update's push points the oracle's way: a critic's small differences among K wrong actions count little);
    ``abs_mean``: mean ``|A|`` over all steps; ``expert_mean`` / ``other_mean``:
    mean A of expert and non-expert actions (their gap is what the actor climbs); ``zero_share``: share of steps
    with ``|A| <= eps`` (no signal at all).
    """
    a = torch.as_tensor(advantages, dtype=torch.float64).flatten()
    y = torch.as_tensor(labels, dtype=torch.float64).flatten()
    if a.numel() != y.numel():
        raise ValueError(f"{a.numel()} advantages for {y.numel()} labels")
    if not a.numel():
        return dict.fromkeys(("sign_agreement", "weighted_agreement", "abs_mean", "expert_mean", "other_mean",
                              "zero_share"), math.nan)
    known = ~torch.isnan(y)
    moving = a.abs() > eps
    judged = known & moving
    agree = ((a > 0) == (y > 0.5)) & judged
    pos, neg = known & (y > 0.5), known & (y <= 0.5)
    return {
        "sign_agreement": float(agree.sum() / judged.sum()) if bool(judged.any()) else math.nan,
        "weighted_agreement": (float(a.abs()[agree].sum() / a.abs()[judged].sum()) if bool(judged.any())
                               else math.nan),
        "abs_mean": float(a.abs().mean()),
        "expert_mean": float(a[pos].mean()) if bool(pos.any()) else math.nan,
        "other_mean": float(a[neg].mean()) if bool(neg.any()) else math.nan,
        "zero_share": float((~moving).double().mean()),
    }


def step_advantage_metrics(steps: Sequence[Any], advantages: Sequence[float] | torch.Tensor) -> dict[str, float]:
    """``diag/adv_*`` metrics of advantages given to stored steps (records with ``expert_match``), for every algorithm.

    Empty when no step has a known oracle label (off the sim, or the diagnostics switched off).
    """
    labels = [math.nan if getattr(s, "expert_match", None) is None else float(s.expert_match) for s in steps]
    if not labels or all(math.isnan(v) for v in labels):
        return {}
    return {f"diag/adv_{k}": v for k, v in advantage_agreement(advantages, labels).items() if math.isfinite(v)}


class PolicyDrift:
    r"""KL from the warm-up policy to the current one on fixed probe states: how far the actor has moved.

    At construction the (warm-up) policy replies greedily to each probe prompt, and its next-token log-probs along
    those replies are kept (the ``top_k`` most likely tokens of each position and the mass of the rest). Later,
    :meth:`kl` teacher-forces the same replies through the current model and returns the mean over positions of

    .. math:: \mathrm{KL}(\pi_{\text{warm-up}} \,\|\, \pi_\theta) \approx \sum_{v \in \text{top-}k} p_v \log\frac{p_v}{q_v}
              + p_{\text{rest}} \log\frac{p_{\text{rest}}}{q_{\text{rest}}}

    (exact when ``top_k`` covers the vocabulary, a lower bound otherwise). :meth:`save`/:meth:`load` keep it with
    the run, so a resumed run measures against the same reference.
    """

    def __init__(self, prompt_ids: list[list[int]], reply_ids: list[list[int]], top_values: list[torch.Tensor],
                 top_indices: list[torch.Tensor], rest_logp: list[torch.Tensor]) -> None:
        """Use :meth:`build` (or :meth:`load`); the arguments are the stored reference."""
        self.prompt_ids, self.reply_ids = prompt_ids, reply_ids
        self.top_values, self.top_indices, self.rest_logp = top_values, top_indices, rest_logp

    @classmethod
    def build(cls, model: Any, tokenizer: Any, prompts: Sequence[str], *, max_new_tokens: int = 32,
              top_k: int = 512) -> PolicyDrift:
        """Greedy replies of ``model`` to ``prompts`` (templated prompt strings) and its distributions along them."""
        if not prompts:
            raise ValueError("PolicyDrift needs at least one probe prompt")
        device = next(model.parameters()).device
        prompt_ids, reply_ids, values, indices, rests = [], [], [], [], []
        was_training = model.training
        model.eval()
        with torch.no_grad():
            for prompt in prompts:
                ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"].to(device)
                out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                                     do_sample=False, pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id)
                reply = out[0, ids.shape[1]:].tolist()
                if not reply:
                    continue
                logp = _reply_logprobs(model, ids[0].tolist(), reply, device)
                k = min(int(top_k), logp.shape[-1])
                top = logp.topk(k, dim=-1)
                prompt_ids.append(ids[0].tolist())
                reply_ids.append(reply)
                values.append(top.values.float().cpu())
                indices.append(top.indices.cpu())
                rest = (torch.full((len(reply),), -math.inf) if k == logp.shape[-1]
                        else _log1mexp(torch.logsumexp(top.values, dim=-1)).float().cpu())
                rests.append(rest)
        if was_training:
            model.train()
        if not reply_ids:
            raise ValueError("the policy gave an empty reply to every probe prompt")
        return cls(prompt_ids, reply_ids, values, indices, rests)

    def kl(self, model: Any) -> float:
        """Mean per-token KL(warm-up || current) along the warm-up's replies."""
        device = next(model.parameters()).device
        was_training = model.training
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for prompt, reply, p_top, idx, p_rest in zip(self.prompt_ids, self.reply_ids, self.top_values,
                                                         self.top_indices, self.rest_logp):
                q = _reply_logprobs(model, prompt, reply, device).cpu().double()
                q_top = q.gather(-1, idx)
                q_rest = _log1mexp(torch.logsumexp(q_top, dim=-1)).clamp(min=-60.0)
                p_top64, p_rest64 = p_top.double(), p_rest.double()
                kl = (p_top64.exp() * (p_top64 - q_top)).sum(-1)
                kl = kl + torch.where(p_rest64 > -30, p_rest64.exp() * (p_rest64 - q_rest), torch.zeros_like(kl))
                total += float(kl.clamp(min=0).sum())
                count += kl.numel()
        if was_training:
            model.train()
        return total / max(1, count)

    def save(self, path: str | Path) -> None:
        """Write the reference (``torch.save``)."""
        torch.save({"prompt_ids": self.prompt_ids, "reply_ids": self.reply_ids, "top_values": self.top_values,
                    "top_indices": self.top_indices, "rest_logp": self.rest_logp}, Path(path))

    @classmethod
    def load(cls, path: str | Path) -> PolicyDrift:
        """Read :meth:`save` back."""
        data = torch.load(Path(path), weights_only=True)
        return cls(data["prompt_ids"], data["reply_ids"], data["top_values"], data["top_indices"], data["rest_logp"])


def _reply_logprobs(model: Any, prompt: list[int], reply: list[int], device: Any) -> torch.Tensor:
    """Next-token log-probs (len(reply) x vocab) at the positions that predict each reply token."""
    ids = torch.tensor([prompt + reply], device=device)
    logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0].float()
    return torch.log_softmax(logits[len(prompt) - 1:len(prompt) - 1 + len(reply)], dim=-1)


def _log1mexp(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x <= 0`` (the log of the probability mass outside the top-k); -inf at 0."""
    x = x.clamp(max=0.0)
    return torch.where(x > -0.693, torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))
