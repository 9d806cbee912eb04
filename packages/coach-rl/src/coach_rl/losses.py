"""Every loss that trains a model here, each tested against hand-computed numbers (tests/coach_rl/test_losses.py and
the *_math tests):

- :func:`clipped_value_loss`: the critic's clipped value loss (Android Coach Eq. 2; also PPO's V and DistRL's critic);
- :func:`ppo_clip_loss`: the PPO clipped surrogate on tokens (Eq. 4: Coach, GRPO, PPO, Coach K = 1);
- :func:`dgrpo_loss`: MobileRL's trajectory-level clipped ratio with a KL term;
- :func:`kl_to_reference`: the k3 estimate of the KL to a frozen reference policy (DGRPO, Coach's ``beta``);
- :func:`distrl_actor_loss`: DistRL's A-RIDE actor loss (clipped importance weights, entropy, invalid-action penalty);
- :func:`rescale_to_batch_tokens`: a micro-batch's token-mean loss re-weighted so every token of the batch weighs the
  same (Coach's trainer, TRL's "dapo" normaliser).

The token losses reduce with a masked mean over elements (tokens): ``sum(loss * mask) / sum(mask)``. A mask that
selects nothing gives a loss of 0 that is still connected to the graph (``backward`` works and gives
zero gradients), so a padded micro-batch never crashes a step. Masked-out positions may hold anything,
NaN included: they are replaced before the sum, never multiplied by 0.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

__all__ = [
    "DGRPOLossOutput",
    "DistRLLossOutput",
    "PPOLossOutput",
    "clipped_value_loss",
    "dgrpo_loss",
    "distrl_actor_loss",
    "kl_to_reference",
    "ppo_clip_loss",
    "rescale_to_batch_tokens",
]


def _check_tensor(x: object, name: str) -> torch.Tensor:
    """Reject anything that is not a floating torch tensor (losses work on model outputs, never lists)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating tensor, got dtype {x.dtype}")
    return x


def _check_mask(mask: torch.Tensor | None, shape: torch.Size, name: str = "mask") -> torch.Tensor | None:
    """Return ``mask`` as a bool tensor of ``shape`` (or None); it must hold only 0/1 or False/True."""
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or None, got {type(mask).__name__}")
    if mask.shape != shape:
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(mask.shape)}")
    if mask.dtype != torch.bool:
        if not bool(((mask == 0) | (mask == 1)).all()):
            raise ValueError(f"{name} must hold only 0/1 or False/True")
        mask = mask != 0
    return mask


def _masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Mean of ``x`` over the positions where ``mask`` is true (all positions when None); 0 if none are."""
    if mask is None:
        return x.mean() if x.numel() else x.sum()
    kept = torch.where(mask, x, torch.zeros_like(x))
    return kept.sum() / mask.sum().clamp(min=1).to(x.dtype)


def clipped_value_loss(
    q: torch.Tensor,
    q_old: torch.Tensor,
    returns: torch.Tensor,
    clip_range: float = 0.5,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""Clipped value loss of the critic (Android Coach, Equation 2; the PPO value clipping).

    .. math::
        L = \tfrac12 \operatorname{mean}\Big[\max\big((Q - R)^2,\;
            (\operatorname{clip}(Q,\; Q_{old} - \epsilon_v,\; Q_{old} + \epsilon_v) - R)^2\big)\Big]

    ``q`` is the critic's current prediction (with grad), ``q_old`` its prediction before this update
    (detached here), ``returns`` the targets R_t (detached here), ``clip_range`` is ``epsilon_v`` (Table 5:
    0.5). Taking the max makes the update pessimistic: once Q has moved more than ``epsilon_v`` from Q_old
    in the direction that no longer lowers the clipped error, that element's gradient is zero.
    All three tensors share one shape; ``mask`` (same shape) selects the elements averaged over.
    """
    q = _check_tensor(q, "q")
    q_old = _check_tensor(q_old, "q_old").detach()
    returns = _check_tensor(returns, "returns").detach()
    if q_old.shape != q.shape or returns.shape != q.shape:
        raise ValueError(
            f"q, q_old and returns must share one shape, got {tuple(q.shape)}, {tuple(q_old.shape)}, "
            f"{tuple(returns.shape)}"
        )
    if not clip_range > 0:
        raise ValueError(f"clip_range must be > 0, got {clip_range!r}")
    mask = _check_mask(mask, q.shape)
    q_clipped = q_old + torch.clamp(q - q_old, -clip_range, clip_range)
    per_element = 0.5 * torch.maximum((q - returns) ** 2, (q_clipped - returns) ** 2)
    return _masked_mean(per_element, mask)


class PPOLossOutput(NamedTuple):
    """What :func:`ppo_clip_loss` returns: the loss to minimise and two detached diagnostics."""

    loss: torch.Tensor
    """Scalar ``-mean(min(rho A, clip(rho) A))`` over the masked tokens (with grad)."""
    clip_fraction: torch.Tensor
    """Share of masked tokens whose gradient the clip removed (see :func:`ppo_clip_loss`)."""
    approx_kl: torch.Tensor
    """Mean of ``(rho - 1) - log rho`` over the masked tokens: an estimate of KL(pi_old || pi_theta)."""


def ppo_clip_loss(
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float = 0.2,
    mask: torch.Tensor | None = None,
) -> PPOLossOutput:
    r"""PPO clipped surrogate loss (Android Coach, Equation 4), token-level mean under a mask.

    .. math::
        \rho = \exp(\log\pi_\theta - \log\pi_{old}), \qquad
        L = -\operatorname{mean}_{\text{tokens}} \min\big(\rho A,\; \operatorname{clip}(\rho, 1-\epsilon, 1+\epsilon) A\big)

    Shapes: ``logp`` and ``logp_old`` are per-token log-probabilities ``(B, T)`` (any shape works, e.g.
    ``(B,)`` for sequence-level); ``advantages`` has the shape of ``logp`` or ``logp.shape[:-1]`` (one
    advantage per sequence, broadcast over its tokens); ``mask`` has the shape of ``logp`` and marks real
    completion tokens. The mean is over all masked tokens of the batch (each token weighs the same).
    ``logp_old`` and ``advantages`` are detached here.

    Diagnostics (detached, means over masked tokens):

    - ``clip_fraction``: tokens where the clipped branch is the active minimum, i.e. ``A > 0`` and
      ``rho > 1 + eps``, or ``A < 0`` and ``rho < 1 - eps``. Exactly these tokens get zero gradient.
    - ``approx_kl``: ``(rho - 1) - log rho``, the non-negative, unbiased "k3" estimator of
      KL(pi_old || pi_theta) from samples of pi_old (Schulman, "Approximating KL Divergence", 2020).
    """
    logp = _check_tensor(logp, "logp")
    logp_old = _check_tensor(logp_old, "logp_old").detach()
    advantages = _check_tensor(advantages, "advantages").detach()
    if logp_old.shape != logp.shape:
        raise ValueError(
            f"logp_old must have the shape of logp {tuple(logp.shape)}, got {tuple(logp_old.shape)}"
        )
    if advantages.shape != logp.shape:
        if logp.dim() >= 1 and advantages.shape == logp.shape[:-1]:
            advantages = advantages.unsqueeze(-1)
        else:
            raise ValueError(
                f"advantages must have the shape of logp {tuple(logp.shape)} or one per sequence "
                f"{tuple(logp.shape[:-1])}, got {tuple(advantages.shape)}"
            )
    if not clip_eps > 0:
        raise ValueError(f"clip_eps must be > 0, got {clip_eps!r}")
    mask = _check_mask(mask, logp.shape)

    log_ratio = logp - logp_old
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * advantages
    per_token = -torch.minimum(unclipped, clipped)
    loss = _masked_mean(per_token, mask)

    with torch.no_grad():
        was_clipped = ((advantages > 0) & (ratio > 1.0 + clip_eps)) | (
            (advantages < 0) & (ratio < 1.0 - clip_eps)
        )
        clip_fraction = _masked_mean(was_clipped.to(logp.dtype), mask)
        approx_kl = _masked_mean((ratio - 1.0) - log_ratio, mask)
    return PPOLossOutput(loss=loss, clip_fraction=clip_fraction, approx_kl=approx_kl)


# -- MobileRL (DGRPO) --


class DGRPOLossOutput(NamedTuple):
    """What :func:`dgrpo_loss` returns: the loss to minimise, its two parts and detached diagnostics."""

    loss: torch.Tensor
    """``policy_loss + beta * kl`` (with grad)."""
    policy_loss: torch.Tensor
    """``-mean_tau min(r(tau) A, clip(r(tau)) A)`` over the trajectories (with grad)."""
    kl: torch.Tensor
    """The KL term as given (0 without one)."""
    clip_fraction: torch.Tensor
    """Share of trajectories whose gradient the clip removed."""
    ratio: torch.Tensor
    """The trajectory ratios ``r(tau)`` (detached)."""


def dgrpo_loss(
    log_ratio: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float = 0.2,
    beta: float = 0.001,
    kl: torch.Tensor | None = None,
) -> DGRPOLossOutput:
    r"""The DGRPO objective (MobileRL §4.3.2): a clipped TRAJECTORY-level ratio and a KL penalty to the reference.

    .. math::
        r(\tau) = \prod_t \frac{\pi_\theta(a_t|s_t)}{\pi_{old}(a_t|s_t)}, \quad
        L = -\operatorname{mean}_\tau \min\big(r A,\; \operatorname{clip}(r, 1-\epsilon, 1+\epsilon) A\big)
            + \beta\, D_{KL}[\pi_\theta \| \pi_{ref}]

    ``log_ratio`` is ``log r(tau)`` per trajectory, ``(N,)``: the sum over every token of every step of
    ``log pi_theta - log pi_old`` (with grad). ``advantages`` is ``A_traj`` per trajectory (detached here).
    ``kl`` is a scalar estimate of the KL to the reference policy (:func:`kl_to_reference`), weighted by
    ``beta`` (Table 4: 0.001); without one the KL term is 0. The log-ratio is clamped to [-20, 20] before
    ``exp`` so a long trajectory cannot overflow (the clip makes such a ratio's gradient zero anyway).
    """
    log_ratio = _check_tensor(log_ratio, "log_ratio")
    advantages = _check_tensor(advantages, "advantages").detach()
    if log_ratio.dim() != 1 or advantages.shape != log_ratio.shape:
        raise ValueError(f"log_ratio and advantages must both be (N,) per-trajectory tensors, got "
                         f"{tuple(log_ratio.shape)} and {tuple(advantages.shape)}")
    if not clip_eps > 0:
        raise ValueError(f"clip_eps must be > 0, got {clip_eps!r}")
    if not beta >= 0:
        raise ValueError(f"beta must be >= 0, got {beta!r}")
    ratio = torch.exp(log_ratio.clamp(-20.0, 20.0))
    per_trajectory = -torch.minimum(ratio * advantages, torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * advantages)
    policy_loss = _masked_mean(per_trajectory, None)
    if kl is None:
        kl = torch.zeros((), dtype=log_ratio.dtype, device=log_ratio.device)
    else:
        kl = _check_tensor(kl, "kl")
        if kl.dim() != 0:
            raise ValueError(f"kl must be a scalar tensor, got shape {tuple(kl.shape)}")
    with torch.no_grad():
        clipped = ((advantages > 0) & (ratio > 1.0 + clip_eps)) | ((advantages < 0) & (ratio < 1.0 - clip_eps))
        clip_fraction = _masked_mean(clipped.to(log_ratio.dtype), None)
    return DGRPOLossOutput(loss=policy_loss + beta * kl, policy_loss=policy_loss, kl=kl.detach(),
                           clip_fraction=clip_fraction, ratio=ratio.detach())


def kl_to_reference(
    logp: torch.Tensor,
    logp_ref: torch.Tensor,
    mask: torch.Tensor | None = None,
    logp_old: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""Token-mean "k3" estimate of ``KL[pi_theta || pi_ref]`` from tokens sampled by (about) ``pi_theta``.

    .. math::  \operatorname{mean}_{\text{tokens}} \big[w \, (e^{\log\pi_{ref} - \log\pi_\theta} - (\log\pi_{ref} - \log\pi_\theta) - 1)\big]

    Non-negative, zero iff the two agree on the sampled tokens (GRPO's KL term, Shao et al. 2024). ``w = 1``, or
    with ``logp_old`` (the policy that sampled the tokens) ``w = pi_theta / pi_old`` WITH gradient: the importance
    weight that makes the gradient the unbiased reverse-KL gradient (DeepSeek-V3.2, TRL's
    ``use_bias_correction_kl``); it changes the gradient even where its value is 1.
    ``logp`` carries the grad; ``logp_ref`` and ``logp_old`` are detached here; ``mask`` selects the completion tokens.
    """
    logp = _check_tensor(logp, "logp")
    logp_ref = _check_tensor(logp_ref, "logp_ref").detach()
    if logp_ref.shape != logp.shape:
        raise ValueError(f"logp_ref must have the shape of logp {tuple(logp.shape)}, got {tuple(logp_ref.shape)}")
    mask = _check_mask(mask, logp.shape)
    diff = logp_ref - logp
    if mask is not None:
        diff = torch.where(mask, diff, torch.zeros_like(diff))
    k3 = torch.exp(diff) - diff - 1.0
    if logp_old is not None:
        logp_old = _check_tensor(logp_old, "logp_old").detach()
        if logp_old.shape != logp.shape:
            raise ValueError(f"logp_old must have the shape of logp {tuple(logp.shape)}, got {tuple(logp_old.shape)}")
        log_w = logp - logp_old
        if mask is not None:
            log_w = torch.where(mask, log_w, torch.zeros_like(log_w))
        k3 = k3 * torch.exp(log_w)
    return _masked_mean(k3, mask)


# -- DistRL --


class DistRLLossOutput(NamedTuple):
    """The DistRL actor loss and its parts (the parts are detached, for logging)."""

    loss: torch.Tensor
    """The scalar to minimise."""
    rho: torch.Tensor
    """Per-sequence importance ratios ``pi/mu`` used (after truncation), shape ``(B,)``."""
    policy_term: torch.Tensor
    """``-mean(rho * A * log pi)``."""
    entropy: torch.Tensor
    """Mean sampled entropy estimate ``-log pi(a|s)``."""
    penalty: torch.Tensor
    """Share of invalid actions in the batch (``mean P_invalid``)."""


def distrl_actor_loss(
    logps: torch.Tensor,
    behaviour_logps: torch.Tensor,
    advantages: torch.Tensor,
    invalid: torch.Tensor,
    mask: torch.Tensor | None = None,
    beta: float = 0.01,
    penalty_coef: float = 1.0,
    rho_max: float | None = None,
) -> DistRLLossOutput:
    r"""The DistRL (A-RIDE) actor loss, Eq. (1) of the paper, over sequences of tokens.

    .. math::
        L = \operatorname{mean}_b\Big[-\rho_b A_b \log\pi(a_b|s_b) \;-\; \beta\, \mathbb{H}_b
            \;+\; \lambda\, \mathcal{P}_b \log\pi(a_b|s_b)\Big], \qquad \mathbb{H}_b = -\log\pi(a_b|s_b)

    ``logps``/``behaviour_logps`` are ``(B, T)`` token log-probs of each reply under the current policy (with
    gradient) and under the behaviour policy that acted (``mu``, from the record); ``log pi(a|s)`` is their
    masked sum over tokens. ``rho_b = exp(log pi - log mu)`` is detached (the paper's gradient, Eq. 4, treats it
    as a weight) and truncated at ``rho_max`` when given. The entropy is the paper's sampled estimate
    ``-log pi(a_t|s_t)`` (Section 5.3). The invalid-action indicator ``P_b`` (0/1, ``(B,)``) has no gradient of
    its own, so it enters as the score-function surrogate ``P_b log pi``: minimising it lowers the probability of
    invalid replies, which is the penalty's effect on the policy; its logged value is ``mean P``.
    """
    logps = _check_tensor(logps, "logps")
    behaviour_logps = _check_tensor(behaviour_logps, "behaviour_logps")
    if logps.dim() != 2 or behaviour_logps.shape != logps.shape:
        raise ValueError(f"logps and behaviour_logps must both be (B, T), got {tuple(logps.shape)} and "
                         f"{tuple(behaviour_logps.shape)}")
    advantages = _check_tensor(advantages, "advantages")
    if advantages.shape != logps.shape[:1]:
        raise ValueError(f"advantages must have shape ({logps.shape[0]},), got {tuple(advantages.shape)}")
    invalid = torch.as_tensor(invalid, device=logps.device)
    if invalid.shape != logps.shape[:1]:
        raise ValueError(f"invalid must have shape ({logps.shape[0]},), got {tuple(invalid.shape)}")
    if not bool(((invalid == 0) | (invalid == 1)).all()):
        raise ValueError("invalid must hold only 0/1 or False/True")
    if rho_max is not None and not rho_max > 0:
        raise ValueError(f"rho_max must be > 0 or None, got {rho_max!r}")
    mask = _check_mask(mask, logps.shape)
    keep = torch.ones_like(logps, dtype=torch.bool) if mask is None else mask
    seq_logp = torch.where(keep, logps, torch.zeros_like(logps)).sum(dim=-1)
    seq_mu = torch.where(keep, behaviour_logps, torch.zeros_like(behaviour_logps)).sum(dim=-1)
    rho = torch.exp(seq_logp.detach() - seq_mu.detach())
    if rho_max is not None:
        rho = rho.clamp(max=float(rho_max))
    p_invalid = invalid.to(logps.dtype)
    per_sample = -rho * advantages.to(logps.dtype) * seq_logp + beta * seq_logp + penalty_coef * p_invalid * seq_logp
    loss = per_sample.mean() if per_sample.numel() else per_sample.sum()
    with torch.no_grad():
        policy_term = (-rho * advantages * seq_logp).mean() if per_sample.numel() else seq_logp.sum()
        entropy = (-seq_logp).mean() if per_sample.numel() else seq_logp.sum()
        penalty = p_invalid.mean() if per_sample.numel() else seq_logp.sum()
    return DistRLLossOutput(loss, rho, policy_term.detach(), entropy.detach(), penalty.detach())


def rescale_to_batch_tokens(loss: torch.Tensor, tokens: torch.Tensor, batch_tokens: torch.Tensor) -> torch.Tensor:
    """A micro-batch's token-mean ``loss`` over its ``tokens`` re-weighted to ``loss * tokens / batch_tokens``: summed
    over the micro-batches of a batch of ``batch_tokens`` tokens it is the batch's token mean, every token weighing
    the same however the batch was split (TRL's "dapo" normaliser)."""
    return loss * tokens / batch_tokens
