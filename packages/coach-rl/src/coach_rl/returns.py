"""Return targets: the Android Coach weighted Monte Carlo return, plain discounted returns, and GAE.

All three accept a Python list, a NumPy array or a torch tensor and hand back the same kind, so the
replay code (lists of floats) and the trainers (tensors) call the same functions:

- list in -> list of floats out (nested lists for multi-dimensional input), computed in float64;
- ``numpy.ndarray`` in -> float64 array out;
- ``torch.Tensor`` in -> tensor on the same device, in the input's floating dtype (integer and bool
  tensors come back in torch's default float dtype).

Time is always the last axis. Bad input (NaN, infinity, ``None``, strings, wrong shapes, a discount
outside [0, 1]) raises ``ValueError``/``TypeError`` naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Literal, TypeVar, Union

import numpy as np
import torch

__all__ = [
    "RewardsLike",
    "coach_returns",
    "discounted_returns",
    "fill_missing_process_rewards",
    "gae",
    "retrace_targets",
    "spa_rewards",
]

#: What the functions here accept as a reward (or value) sequence.
RewardsLike = Union[Sequence[float], np.ndarray, torch.Tensor]
_R = TypeVar("_R", list, np.ndarray, torch.Tensor)
_Kind = Literal["list", "ndarray", "tensor"]


def _to_tensor(x: object, name: str, *, allow_nan: bool = False) -> tuple[torch.Tensor, _Kind]:
    """Convert ``x`` to a floating tensor and remember its kind; reject non-numeric and non-finite input.

    ``allow_nan`` lets NaN through (a missing reward), never infinities."""
    if isinstance(x, torch.Tensor):
        kind: _Kind = "tensor"
        t = x if x.is_floating_point() else x.to(torch.get_default_dtype())
    elif isinstance(x, np.ndarray):
        kind = "ndarray"
        if not (np.issubdtype(x.dtype, np.number) or x.dtype == np.bool_):
            raise TypeError(f"{name} must hold numbers, got a NumPy array of dtype {x.dtype}")
        t = torch.as_tensor(x.astype(np.float64))
    elif isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise TypeError(
            f"{name} must be a list, NumPy array or torch tensor of numbers, got {type(x).__name__}"
        )
    else:
        kind = "list"
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be a rectangular (possibly nested) list of numbers: {err}") from err
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) and arr.size:
            raise TypeError(f"{name} must hold only numbers (no None, strings or ragged rows), got {x!r:.80}")
        t = torch.as_tensor(arr.astype(np.float64))
    bad_mask = torch.isinf(t) if allow_nan else ~torch.isfinite(t)
    if t.numel() and bool(bad_mask.any()):
        bad = int(bad_mask.sum())
        raise ValueError(f"{name} contains {bad} non-finite value(s) (NaN or infinity)")
    return t, kind


def _from_tensor(t: torch.Tensor, kind: _Kind) -> list | np.ndarray | torch.Tensor:
    """Hand ``t`` back in the kind the caller passed in."""
    if kind == "tensor":
        return t
    arr = t.detach().cpu().numpy().astype(np.float64)
    return arr.tolist() if kind == "list" else arr


def _check_unit_interval(value: float, name: str) -> float:
    """Return ``value`` as a float after checking it is a finite number in [0, 1]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, Real)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _check_finite_scalar(value: object, name: str) -> float:
    """Return ``value`` as a float after checking it is one finite number (Python, NumPy or 0-d/1-element tensor)."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(f"{name} must be a single number, got a tensor of shape {tuple(value.shape)}")
        value = value.item()
    elif isinstance(value, np.ndarray):
        if value.size != 1:
            raise ValueError(f"{name} must be a single number, got an array of shape {value.shape}")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


def coach_returns(
    process_rewards: _R,
    outcome_reward: float,
    w_p: float = 0.2,
    w_o: float = 1.0,
    gamma: float = 0.95,
) -> _R:
    r"""Per-step return targets of ONE trajectory, exactly as the Android Coach paper writes them (Section 3.2).

    .. math::  R_t = w_p \sum_{\tau=t}^{T} \gamma^{T-\tau} r_p^{\tau} + w_o r_o, \qquad t = 0..T,

    where ``r_p^tau`` are the PRM step rewards, ``r_o`` the outcome reward and ``T`` the index of the last
    step (``len(process_rewards) - 1``). Defaults are the paper's Table 5 values (w_p 0.2, w_o 1, gamma 0.95).

    How the exponent ``T - tau`` (not the usual ``tau - t``) weighs steps: the weight of a step is anchored to
    the END of the episode, not to ``t``. The last step's process reward gets weight 1, the one before it
    ``gamma``, the first ``gamma**T``, and a step keeps the same weight in every ``R_t`` that includes it. So
    ``R_t`` is ``w_o * r_o`` plus a suffix sum where later steps weigh more, and
    ``R_t - R_{t+1} = w_p * gamma**(T-t) * r_p^t``. (The usual discounting would weigh steps near ``t`` most.)

    Args:
        process_rewards: the 1-D sequence ``r_p^0..r_p^T`` (list, ndarray or tensor). NaN marks a step the
            process reward model could not score; see :func:`fill_missing_process_rewards` for the rule.
        outcome_reward: ``r_o``, one finite number (e.g. 0/1 from the outcome verifier).
        w_p: weight of the process rewards.
        w_o: weight of the outcome reward.
        gamma: discount in [0, 1].

    Returns:
        ``R_0..R_T`` in the kind of ``process_rewards`` (see the module docstring); empty in, empty out.
    """
    rewards, kind = _to_tensor(process_rewards, "process_rewards", allow_nan=True)
    if rewards.dim() != 1:
        raise ValueError(
            f"process_rewards must be 1-D (one trajectory, one reward per step), got shape {tuple(rewards.shape)}"
        )
    rewards = fill_missing_process_rewards(rewards)
    r_o = _check_finite_scalar(outcome_reward, "outcome_reward")
    w_p = _check_finite_scalar(w_p, "w_p")
    w_o = _check_finite_scalar(w_o, "w_o")
    gamma = _check_unit_interval(gamma, "gamma")

    n = rewards.shape[0]
    steps_before_end = torch.arange(n - 1, -1, -1, device=rewards.device, dtype=rewards.dtype)  # T - tau
    weighted = rewards * gamma**steps_before_end
    # suffix_sums[t] = sum over tau >= t of weighted[tau]
    suffix_sums = torch.flip(torch.cumsum(torch.flip(weighted, dims=[0]), dim=0), dims=[0])
    return _from_tensor(w_p * suffix_sums + w_o * r_o, kind)  # type: ignore[return-value]


def fill_missing_process_rewards(process_rewards: _R) -> _R:
    r"""The rule for process rewards the reward model could not give (NaN): the mean of the episode's scored steps.

    A missing ``r_p`` is neither a reward nor a penalty: it takes the mean of the steps of the same episode that
    were scored, so the return keeps the episode's average process signal. When no step of the episode was
    scored, every ``r_p`` counts as 0 and ``R_t = w_o * r_o``: the return rests on the outcome alone, as without
    a PRM. (The collector counts and reports missing rewards; they are never silently 0 next to scored ones.)
    """
    rewards, kind = _to_tensor(process_rewards, "process_rewards", allow_nan=True)
    missing = torch.isnan(rewards)
    if not bool(missing.any()):
        return _from_tensor(rewards, kind)  # type: ignore[return-value]
    scored = rewards[~missing]
    fill = scored.mean() if scored.numel() else torch.zeros((), dtype=rewards.dtype, device=rewards.device)
    return _from_tensor(torch.where(missing, fill, rewards), kind)  # type: ignore[return-value]


def discounted_returns(rewards: _R, gamma: float, bootstrap: float | RewardsLike = 0.0) -> _R:
    r"""Plain discounted reward-to-go along the last axis: ``G_t = sum_{k>=0} gamma^k r_{t+k} + gamma^{T+1-t} * bootstrap``.

    Computed backwards as ``G_t = r_t + gamma * G_{t+1}`` with ``G_{T+1} = bootstrap`` (the value of the state
    after the last step; 0 when the episode ended). Leading axes are independent sequences; ``bootstrap`` is
    a number or has the leading shape. Returns the kind of ``rewards``.
    """
    r, kind = _to_tensor(rewards, "rewards")
    if r.dim() == 0:
        raise ValueError("rewards must have at least one axis (time is the last axis), got a scalar")
    gamma = _check_unit_interval(gamma, "gamma")
    nxt = _bootstrap_tensor(bootstrap, r, "bootstrap")
    out = torch.empty_like(r)
    for t in range(r.shape[-1] - 1, -1, -1):
        nxt = r[..., t] + gamma * nxt
        out[..., t] = nxt
    return _from_tensor(out, kind)  # type: ignore[return-value]


def gae(
    rewards: _R,
    values: RewardsLike,
    gamma: float,
    lam: float,
    last_value: float | RewardsLike = 0.0,
    dones: RewardsLike | None = None,
) -> tuple[_R, _R]:
    r"""Generalised Advantage Estimation (Schulman et al. 2016) for the PPO baseline; time on the last axis.

    .. math::
        \delta_t = r_t + \gamma (1-d_t) V_{t+1} - V_t, \qquad
        A_t = \delta_t + \gamma \lambda (1-d_t) A_{t+1}, \qquad \text{returns}_t = A_t + V_t

    ``values[t]`` is ``V(s_t)``; ``V_{T+1}`` is ``last_value`` (the value of the state after the last step,
    0 when the episode ended there). ``dones[t]`` true means the episode ended after step ``t``: the next
    value and the advantage chain are cut there, so several episodes may be concatenated on one axis.
    ``lam = 1`` gives Monte Carlo returns minus V: ``A_t = discounted_returns(r, gamma, last_value)_t - V_t``
    (for a single episode); ``lam = 0`` gives the one-step TD error.

    Returns:
        ``(advantages, returns)``, both in the kind of ``rewards``.
    """
    r, kind = _to_tensor(rewards, "rewards")
    v, _ = _to_tensor(values, "values")
    if r.dim() == 0:
        raise ValueError("rewards must have at least one axis (time is the last axis), got a scalar")
    if v.shape != r.shape:
        raise ValueError(f"values must have the shape of rewards {tuple(r.shape)}, got {tuple(v.shape)}")
    v = v.to(device=r.device, dtype=r.dtype)
    gamma = _check_unit_interval(gamma, "gamma")
    lam = _check_unit_interval(lam, "lam")
    if dones is None:
        not_done = torch.ones_like(r)
    else:
        d, _ = _to_tensor(dones, "dones")
        if d.shape != r.shape:
            raise ValueError(f"dones must have the shape of rewards {tuple(r.shape)}, got {tuple(d.shape)}")
        if not bool(((d == 0) | (d == 1)).all()):
            raise ValueError("dones must hold only 0/1 or False/True")
        not_done = 1.0 - d.to(device=r.device, dtype=r.dtype)
    next_value = _bootstrap_tensor(last_value, r, "last_value")
    next_adv = torch.zeros_like(next_value)
    adv = torch.empty_like(r)
    for t in range(r.shape[-1] - 1, -1, -1):
        delta = r[..., t] + gamma * not_done[..., t] * next_value - v[..., t]
        next_adv = delta + gamma * lam * not_done[..., t] * next_adv
        adv[..., t] = next_adv
        next_value = v[..., t]
    return _from_tensor(adv, kind), _from_tensor(adv + v, kind)  # type: ignore[return-value]


def _bootstrap_tensor(value: float | RewardsLike, like: torch.Tensor, name: str) -> torch.Tensor:
    """The value after the last step, as a tensor of ``like``'s leading shape (a number broadcasts)."""
    lead = like.shape[:-1]
    if isinstance(value, (Real, np.generic)) and not isinstance(value, bool):
        v = torch.full(lead, _check_finite_scalar(value, name), dtype=like.dtype, device=like.device)
        return v
    t, _ = _to_tensor(value, name)
    t = t.to(device=like.device, dtype=like.dtype)
    if t.dim() == 0:
        return t.expand(lead).clone()
    if t.shape != lead:
        raise ValueError(
            f"{name} must be a number or have the leading shape {tuple(lead)}, got {tuple(t.shape)}"
        )
    return t.clone()


# -- MobileRL (DGRPO) --


def spa_rewards(lengths: Sequence[int], outcomes: Sequence[float], alpha: float = 1.0) -> list[float]:
    r"""Shortest-Path Reward Adjustment (MobileRL Eq. 1) of the G trajectories of one task instance.

    .. math::  R_i = r_i \left(1 - \alpha \frac{T_i - T_{\min}}{T_i}\right) \text{ if } r_i > 0, \quad 0 \text{ otherwise}

    ``lengths[i]`` is ``T_i`` (steps), ``outcomes[i]`` the terminal reward ``r_i`` (binary in the paper; a
    graded score in [0, 1] scales the adjusted reward), ``T_min`` the shortest successful (``r > 0``) length
    of the group, ``alpha`` in (0, 1] (Table 4: 1.0). Each step of trajectory i is rewarded ``R_i``, so a
    longer success is no longer favoured for contributing more gradient terms. One float per trajectory.
    """
    if isinstance(lengths, (str, bytes)) or isinstance(outcomes, (str, bytes)):
        raise TypeError("lengths and outcomes must be sequences of numbers")
    lengths = list(lengths)
    outcomes = list(outcomes)
    if len(lengths) != len(outcomes):
        raise ValueError(f"lengths ({len(lengths)}) and outcomes ({len(outcomes)}) must have one entry per trajectory")
    for i, t in enumerate(lengths):
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1:
            raise ValueError(f"lengths[{i}] must be a positive integer (steps of the trajectory), got {t!r}")
    for i, r in enumerate(outcomes):
        if isinstance(r, bool) or not isinstance(r, (Real, np.generic)) or not math.isfinite(float(r)) or r < 0:
            raise ValueError(f"outcomes[{i}] must be a finite number >= 0, got {r!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (Real, np.generic)) or not 0 < float(alpha) <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    succeeded = [int(t) for t, r in zip(lengths, outcomes) if r > 0]
    if not succeeded:
        return [0.0] * len(lengths)
    t_min = min(succeeded)
    return [float(r) * (1.0 - float(alpha) * (int(t) - t_min) / int(t)) if r > 0 else 0.0
            for t, r in zip(lengths, outcomes)]

# -- DistRL --


def retrace_targets(
    rewards: _R,
    values: RewardsLike,
    gamma: float,
    lam: float,
    rhos: RewardsLike | None = None,
    last_value: float | RewardsLike = 0.0,
) -> _R:
    r"""Retrace(lambda) targets for a state-value function (DistRL, Section 5.2); time on the last axis.

    .. math::
        \delta_t = \sum_{k=t}^{H} \gamma^{k-t} \Big(\prod_{i=t+1}^{k} c_i\Big) \big[r_k + \gamma V(s_{k+1}) - V(s_k)\big],
        \qquad c_i = \lambda \min(1, \rho_i), \qquad \text{target}_t = V(s_t) + \delta_t

    computed backwards as ``target_t = V_t + td_t + gamma * c_{t+1} * (target_{t+1} - V_{t+1})``. ``values[t]`` is
    ``V(s_t)``, ``V(s_{H+1})`` is ``last_value`` (0 when the episode ended), ``rhos[t]`` the importance ratio
    ``pi(a_t|s_t) / mu(a_t|s_t)`` of step ``t`` (``None``: all ratios 1, i.e. uncorrected TD(lambda), the
    ablation without Retrace). ``lam = 0`` gives one-step TD targets; ``lam = 1`` with on-policy ratios the
    Monte Carlo return. Returns the targets in the kind of ``rewards``.
    """
    r, kind = _to_tensor(rewards, "rewards")
    v, _ = _to_tensor(values, "values")
    if r.dim() == 0:
        raise ValueError("rewards must have at least one axis (time is the last axis), got a scalar")
    if v.shape != r.shape:
        raise ValueError(f"values must have the shape of rewards {tuple(r.shape)}, got {tuple(v.shape)}")
    v = v.to(device=r.device, dtype=r.dtype)
    gamma = _check_unit_interval(gamma, "gamma")
    lam = _check_unit_interval(lam, "lam")
    if rhos is None:
        c = torch.full_like(r, lam)
    else:
        rho, _ = _to_tensor(rhos, "rhos")
        if rho.shape != r.shape:
            raise ValueError(f"rhos must have the shape of rewards {tuple(r.shape)}, got {tuple(rho.shape)}")
        if bool((rho < 0).any()):
            raise ValueError("rhos must be >= 0 (they are probability ratios)")
        c = lam * rho.to(device=r.device, dtype=r.dtype).clamp(max=1.0)
    next_value = _bootstrap_tensor(last_value, r, "last_value")
    next_correction = torch.zeros_like(next_value)  # target_{t+1} - V_{t+1}; 0 after the last step
    next_c = torch.zeros_like(next_value)
    out = torch.empty_like(r)
    for t in range(r.shape[-1] - 1, -1, -1):
        td = r[..., t] + gamma * next_value - v[..., t]
        correction = td + gamma * next_c * next_correction
        out[..., t] = v[..., t] + correction
        next_correction, next_value, next_c = correction, v[..., t], c[..., t]
    return _from_tensor(out, kind)  # type: ignore[return-value]
