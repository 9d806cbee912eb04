"""Group-wise advantage estimators: ACLOO (Android Coach), RLOO and GRPO group normalisation.

Every function takes a tensor whose LAST axis holds the K values of one group (the K actions sampled
for one state, or the G completions of one prompt) and returns advantages of the same shape; any
leading axes are independent groups. Lists and NumPy arrays are accepted and converted with
``torch.as_tensor``; the result is always a tensor. Autograd flows through (the trainers call these
under ``torch.no_grad`` anyway).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = [
    "acloo",
    "aride_advantages",
    "batch_mean_advantages",
    "dgrpo_advantages",
    "grpo_advantages",
    "rloo",
    "trajectory_scores",
    "whiten",
]


def _group_tensor(x: object, name: str, *, min_group: int) -> torch.Tensor:
    """Check ``x`` is a finite floating tensor with at least ``min_group`` entries on its last axis."""
    t = torch.as_tensor(x)
    if not t.is_floating_point():
        t = t.to(torch.get_default_dtype())
    if t.dim() == 0:
        raise ValueError(f"{name} must have a last axis holding the group (K values per state), got a scalar")
    k = t.shape[-1]
    if k < min_group:
        raise ValueError(
            f"{name} has K={k} values per group on its last axis (shape {tuple(t.shape)}); "
            f"this estimator needs K >= {min_group}"
        )
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


def _leave_one_out(values: torch.Tensor) -> torch.Tensor:
    r"""``x_i - mean_{j != i} x_j`` over the last axis, computed as ``(K x_i - sum_j x_j) / (K - 1)``."""
    k = values.shape[-1]
    return (k * values - values.sum(dim=-1, keepdim=True)) / (k - 1)


def acloo(q: torch.Tensor, min_spread: float = 0.0) -> torch.Tensor:
    r"""Actor-Critic Leave-One-Out advantages (Android Coach, Equation 3).

    .. math::  A_i = Q_i - \frac{1}{K-1} \sum_{j \ne i} Q_j  \;=\; \frac{K}{K-1} \left(Q_i - \bar Q\right)

    ``q[..., i]`` is the critic's ``Q(s, a_i)`` for the i-th of K actions sampled at the same state. The
    baseline excludes the action itself, so it is independent of ``a_i`` and the estimator stays unbiased
    (paper, Appendix D). Advantages of one group sum to zero. Leave-one-out needs ``K >= 2``.

    Beyond the paper, ``min_spread`` > 0 zeroes every group whose Q spread (max - min) is below it: a learned
    critic's small differences among actions that are equally good (or equally wrong) are its noise, and ACLOO
    would turn them into updates in random directions. ``0`` (the default) is the paper's estimator.
    """
    if min_spread < 0 or min_spread != min_spread:
        raise ValueError(f"min_spread must be a number >= 0, got {min_spread!r}")
    q = _group_tensor(q, "q", min_group=2)
    advantages = _leave_one_out(q)
    if min_spread > 0:
        spread = q.max(dim=-1, keepdim=True).values - q.min(dim=-1, keepdim=True).values
        advantages = torch.where(spread < min_spread, torch.zeros_like(advantages), advantages)
    return advantages


def rloo(rewards: torch.Tensor) -> torch.Tensor:
    r"""REINFORCE Leave-One-Out advantages (Kool et al. 2019; Ahmadian et al. 2024): ACLOO's formula on rewards.

    .. math::  A_i = r_i - \frac{1}{G-1} \sum_{j \ne i} r_j

    ``rewards[..., i]`` is the reward of the i-th of G completions of one prompt; ``G >= 2``.
    """
    return _leave_one_out(_group_tensor(rewards, "rewards", min_group=2))


def grpo_advantages(rewards: torch.Tensor, eps: float = 1e-4, scale: bool = True) -> torch.Tensor:
    r"""GRPO group-normalised advantages over the last axis (Shao et al. 2024), as TRL 1.16 computes them.

    .. math::  A_i = \frac{r_i - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}

    ``std`` is the unbiased (Bessel-corrected, ``G - 1``) sample standard deviation, as in TRL; with
    ``scale=False`` only the mean is subtracted (Dr. GRPO) and ``eps`` is unused. A group of ties gives zeros.
    Needs ``G >= 2``.
    """
    if scale and not eps > 0:
        raise ValueError(f"eps must be > 0 when scale=True (a group of ties has std 0), got {eps!r}")
    r = _group_tensor(rewards, "rewards", min_group=2)
    centred = r - r.mean(dim=-1, keepdim=True)
    if not scale:
        return centred
    return centred / (r.std(dim=-1, keepdim=True, correction=1) + eps)


# -- MobileRL (DGRPO) --


def trajectory_scores(step_rewards: list[list[float]]) -> torch.Tensor:
    r"""MobileRL Eq. 2: ``S_i = sum_{t=1..T_i} (r_t(tau_i) - (1/G) sum_j r_t(tau_j))`` for the G trajectories of a group.

    ``step_rewards[i]`` holds the per-step rewards of trajectory i (SPA rewards, one per step; lengths may
    differ). The step-wise group mean at step t averages over all G trajectories, a trajectory that already
    ended counting 0 there (it earns no reward after its end); each trajectory sums deviations over its own
    steps only. Returns a float64 tensor of G scores.
    """
    if isinstance(step_rewards, (str, bytes)) or not isinstance(step_rewards, Sequence):
        raise TypeError(f"step_rewards must be a list of per-trajectory reward lists, got {type(step_rewards).__name__}")
    rows = [torch.as_tensor(list(r), dtype=torch.float64) for r in step_rewards]
    if len(rows) < 2:
        raise ValueError(f"a group needs G >= 2 trajectories for a baseline, got {len(rows)}")
    for i, row in enumerate(rows):
        if row.dim() != 1 or row.numel() == 0:
            raise ValueError(f"step_rewards[{i}] must be a non-empty list of numbers (one per step)")
        if not bool(torch.isfinite(row).all()):
            raise ValueError(f"step_rewards[{i}] contains NaN or infinite values")
    width = max(row.numel() for row in rows)
    padded = torch.zeros((len(rows), width), dtype=torch.float64)
    for i, row in enumerate(rows):
        padded[i, : row.numel()] = row
    baseline = padded.mean(dim=0)
    return torch.stack([(row - baseline[: row.numel()]).sum() for row in rows])


def dgrpo_advantages(step_rewards: list[list[float]], eps: float = 1e-4) -> torch.Tensor:
    r"""MobileRL Eq. 3: trajectory-level advantages ``A_i = (S_i - mean S) / (std S + eps)`` within one group.

    ``S`` comes from :func:`trajectory_scores`; ``std`` is the unbiased sample standard deviation, as
    :func:`grpo_advantages` (and TRL) use, and ``eps`` keeps a group of ties at zero advantage.
    """
    if not eps > 0:
        raise ValueError(f"eps must be > 0 (a group of ties has std 0), got {eps!r}")
    s = trajectory_scores(step_rewards)
    return (s - s.mean()) / (s.std(correction=1) + eps)

# -- DistRL --


def aride_advantages(
    rewards: torch.Tensor,
    values: torch.Tensor,
    gamma: float,
    last_value: float = 0.0,
) -> torch.Tensor:
    r"""A-RIDE one-step advantages of ONE trajectory (DistRL, Appendix A.4): time on the last axis, not a group.

    .. math::  A(s_t, a_t) = r_t + \gamma V(s_{t+1}) - V(s_t)

    ``values[t]`` is the value network's ``V(s_t)``; ``V(s_{H+1})`` is ``last_value`` (0 when the episode ended).
    The importance ratio ``rho_t`` multiplies the advantage in the loss
    (:func:`coach_rl.losses.distrl_actor_loss`), not here.
    """
    if not 0 <= gamma <= 1:
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    r = _group_tensor(rewards, "rewards", min_group=1)
    v = _group_tensor(values, "values", min_group=1).to(r.dtype)
    if v.shape != r.shape:
        raise ValueError(f"values must have the shape of rewards {tuple(r.shape)}, got {tuple(v.shape)}")
    nxt = torch.cat([v[..., 1:], torch.full_like(v[..., :1], float(last_value))], dim=-1)
    return r + gamma * nxt - v


def whiten(x: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``(x - mean) / (std + eps)`` over all entries (population std), as verl whitens PPO's GAE advantages across
    the batch; fewer than two entries are returned as they are (nothing to normalise against)."""
    t = torch.as_tensor(x)
    if t.numel() < 2:
        return t
    return (t - t.mean()) / (t.std(correction=0) + eps)


def batch_mean_advantages(q: torch.Tensor) -> torch.Tensor:
    """``A = Q(s, a) - mean Q`` over the batch: Coach K = 1's advantage of the one stored action per state (ACLOO needs
    K >= 2 actions of the same state, so the batch's mean critic value is the baseline)."""
    return q - q.mean()
