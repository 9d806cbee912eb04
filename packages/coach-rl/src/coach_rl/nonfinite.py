r"""Nothing non-finite kills a run: NaN/inf caught where it is made, the step skipped and counted, a clear error after N.

A model can produce NaN or infinite values: random weights at real size, a bf16 overflow, an update that went bad.
Left alone they surface far from their cause (sampling with NaN logits ends in a CUDA device-side assert,
"probability tensor contains either inf, nan or element < 0", naming neither state nor step). Each producer checks
its own output instead:

- **sampling** (:class:`NonFiniteLogits`, a ``generate`` logits processor; :func:`guarded_generate` adds it to a
  model's ``generate`` that someone else calls, TRL's): a row whose next-token logits hold NaN,
  +inf or nothing but -inf gets logits that end the reply (EOS) and is flagged; the policy marks that sample failed
  (``action=None``, ``error`` says why; the actor update gives it no advantage) and counts it;
- **critic scores**, **PRM scores**, **advantages**: a non-finite value marks its sample (the group of K, the step)
  unusable; it is left out and counted;
- **losses and gradients** (actor and critic updates): a non-finite loss or gradient norm skips that optimiser step
  (gradients dropped, nothing applied), counted with its reason;
- **checkpoints**: weights are checked before saving; a model with a non-finite parameter is never written, so
  the last good checkpoint stays the latest.

Every event counts in ``nonfinite/<phase>`` metrics. A :class:`NonFiniteMonitor` keeps, per phase, how many events
came in a row; at ``patience`` (``CoachConfig.nonfinite_patience``) it raises :class:`NonFiniteError` naming the
phase, the iteration and the state (task instruction or prompt) where it happened.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

__all__ = [
    "NonFiniteError",
    "NonFiniteLogits",
    "NonFiniteMonitor",
    "all_finite",
    "attach_loop",
    "check_weights",
    "first_nonfinite_parameter",
    "guarded_generate",
    "monitor_of",
    "skip_nonfinite_step",
]


class NonFiniteError(RuntimeError):
    """``patience`` non-finite events in a row in one phase (or non-finite weights about to be saved)."""

    def __init__(self, phase: str, iteration: int | None, where: str, count: int, reason: str) -> None:
        self.phase, self.iteration, self.where, self.count, self.reason = phase, iteration, where, count, reason
        at = f"iteration {iteration}" if iteration is not None else "outside the training loop"
        super().__init__(
            f"non-finite values in phase {phase!r} {count} time(s) in a row ({at}; last at {where}): {reason}. "
            "Steps with NaN/inf are skipped and counted (nonfinite/* metrics), but this many in a row means the "
            "model itself is broken (a bad update, bf16 overflow, random weights); the last good checkpoint is "
            "intact. Resume from it with a lower learning rate or fp32/bf16 changes, or raise nonfinite_patience.")


def _snippet(text: Any, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


class NonFiniteMonitor:
    """Per-phase counts of non-finite events, and the streak that ends a run (``patience`` in a row; 0: never).

    ``iteration`` is a number or a callable giving the iteration being run (the loop's counter), for the error.
    """

    def __init__(self, patience: int = 3, iteration: int | Callable[[], int | None] | None = None) -> None:
        """See the class docstring."""
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ValueError(f"patience must be an integer >= 0 (0: never stop), got {patience!r}")
        self.patience = patience
        self.iteration = iteration
        self.counts: dict[str, int] = {}
        self.streaks: dict[str, int] = {}
        self._warned: set[str] = set()

    def current_iteration(self) -> int | None:
        """The iteration the loop is in (None outside a loop)."""
        value = self.iteration() if callable(self.iteration) else self.iteration
        return None if value is None else int(value)

    def ok(self, phase: str) -> None:
        """A finite event in ``phase``: its streak starts over."""
        self.streaks[phase] = 0

    def bad(self, phase: str, where: Any, reason: str, *, count: int = 1, streak: bool = True) -> None:
        """Count ``count`` non-finite events of ``phase`` at ``where`` (a state, a task); raise at ``patience`` in a row.

        ``streak=False`` counts without lengthening the streak (a batch where only some samples failed).
        """
        self.counts[phase] = self.counts.get(phase, 0) + int(count)
        if streak:
            self.streaks[phase] = self.streaks.get(phase, 0) + 1
        n = self.streaks.get(phase, 0)
        if phase not in self._warned:
            self._warned.add(phase)
            warnings.warn(f"non-finite values in {phase} at {_snippet(where)}: {reason}; skipped and counted in "
                          f"nonfinite/{phase}", RuntimeWarning, stacklevel=3)
        if self.patience and n >= self.patience:
            raise NonFiniteError(phase, self.current_iteration(), _snippet(where, 300), n, reason)

    def metrics(self, since: dict[str, int] | None = None) -> dict[str, float]:
        """``nonfinite/<phase>`` counts (minus ``since``, an earlier :meth:`snapshot`)."""
        before = since or {}
        return {f"nonfinite/{k}": float(v - before.get(k, 0)) for k, v in sorted(self.counts.items())
                if v - before.get(k, 0)}

    def snapshot(self) -> dict[str, int]:
        """The counts now (for :meth:`metrics` of what comes after)."""
        return dict(self.counts)


def monitor_of(owner: Any, patience: int = 3) -> NonFiniteMonitor:
    """``owner.nonfinite`` (created with ``patience`` when missing): one monitor per component unless shared."""
    monitor = getattr(owner, "nonfinite", None)
    if not isinstance(monitor, NonFiniteMonitor):
        monitor = NonFiniteMonitor(patience)
        owner.nonfinite = monitor
    return monitor


def all_finite(*values: Any) -> bool:
    """Whether every tensor or number given is finite (None is skipped)."""
    for value in values:
        if value is None:
            continue
        if isinstance(value, torch.Tensor):
            if not bool(torch.isfinite(value.detach()).all()):
                return False
        elif not math.isfinite(float(value)):
            return False
    return True


def first_nonfinite_parameter(modules: Iterable[Any]) -> str | None:
    """The name of the first parameter or buffer (floating point) holding NaN/inf in ``modules``, else None."""
    for module in modules:
        if module is None:
            continue
        for name, tensor in list(module.named_parameters()) + list(module.named_buffers()):
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor.detach()).all()):
                return f"{type(module).__name__}.{name}"
    return None


class NonFiniteLogits:
    """A ``generate`` logits processor: rows whose logits hold NaN, +inf or only -inf end with EOS and are flagged.

    Such a row would make sampling's multinomial fail (on CUDA a device-side assert that kills the process). The
    check runs on the device without a host sync per token: ``flagged`` (a bool tensor, one entry per batch row)
    is read after ``generate``. Other rows are untouched. Add it last (``generate`` appends custom processors
    after its own warpers, so it sees what sampling would).
    """

    def __init__(self, eos_token_id: int | Iterable[int] | None) -> None:
        """``eos_token_id``: the token(s) a flagged row is ended with (the first; None: token 0)."""
        if isinstance(eos_token_id, Iterable) and not isinstance(eos_token_id, (str, bytes)):
            ids = list(eos_token_id)
            eos_token_id = ids[0] if ids else None
        self.eos = int(eos_token_id) if eos_token_id is not None else 0
        self.flagged: torch.Tensor | None = None

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """Scores with the bad rows replaced by "EOS only" (finite everywhere: nothing downstream can break them)."""
        bad = torch.isnan(scores).any(-1) | torch.isposinf(scores).any(-1) | torch.isneginf(scores).all(-1)
        self.flagged = bad.clone() if self.flagged is None or self.flagged.shape != bad.shape else self.flagged | bad
        safe = torch.full_like(scores, -1e4)
        safe[:, self.eos] = 0.0
        return torch.where(bad[:, None], safe, scores)

    def rows(self) -> list[int]:
        """The flagged rows (one host sync)."""
        return [] if self.flagged is None else torch.nonzero(self.flagged).flatten().tolist()


def skip_nonfinite_step(updater: Any, loss: Any, grad_norm: Any, where: Any, phase: str = "actor_update") -> bool:
    """Before ``updater.optimizer.step()``: True (gradients dropped, counted in ``updater.nonfinite``) when the loss
    or the gradient norm is NaN/inf, so the caller skips the step; False (the streak reset) when both are finite."""
    monitor = monitor_of(updater)
    if all_finite(loss, grad_norm):
        monitor.ok(phase)
        return False
    updater.optimizer.zero_grad(set_to_none=True)
    monitor.bad(phase, where, f"optimiser step skipped: loss {float(loss):g}, gradient norm {float(grad_norm):g}")
    return True


def _holders(root: Any) -> list[Any]:
    """``root`` and the objects it holds (one level down) that keep a ``nonfinite`` monitor."""
    found = [root] if hasattr(root, "nonfinite") else []
    for value in list(vars(root).values()) if hasattr(root, "__dict__") else []:
        if hasattr(value, "nonfinite") and not isinstance(value, type):
            found.append(value)
    return found


def attach_loop(loop: Any) -> NonFiniteMonitor:
    """One monitor for a :class:`coach_rl.loop.TrainingLoop`'s policy, rewards and algorithm parts (actor, critic).

    Its patience is the config's ``nonfinite_patience`` and its errors name the iteration being run; the loop adds
    each iteration's ``nonfinite/<phase>`` counts (``metrics(since=...)``) to its metrics record.
    """
    monitor = NonFiniteMonitor(int(getattr(loop.args, "nonfinite_patience", 3)),
                               iteration=lambda: int(loop.state.iteration) + 1)
    for root in (loop.policy, loop.rewards, loop.algorithm):
        if root is None:
            continue
        for holder in _holders(root):
            holder.nonfinite = monitor
    return monitor


def check_weights(modules: Iterable[Any], iteration: int | None) -> None:
    """Raise :class:`NonFiniteError` (phase ``checkpoint``) when a module holds a NaN/inf weight: never save it."""
    name = first_nonfinite_parameter(modules)
    if name is not None:
        raise NonFiniteError("checkpoint", iteration, name, 1, f"the weight {name} holds NaN/inf, so this checkpoint "
                             "was not written (the last one saved is the last good model)")


@contextmanager
def guarded_generate(model: Any, guard: NonFiniteLogits) -> Iterator[None]:
    """``model.generate`` with ``guard`` appended to its logits processors, for the duration of the block."""
    from transformers import LogitsProcessorList

    had_own = "generate" in vars(model)
    original = model.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        processors = list(kwargs.pop("logits_processor", None) or [])
        return original(*args, logits_processor=LogitsProcessorList([*processors, guard]), **kwargs)

    model.generate = generate
    try:
        yield
    finally:
        if had_own:
            model.generate = original
        else:
            del model.generate
