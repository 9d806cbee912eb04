"""Evaluating reward models against labels: PRMs on labelled steps, outcome verifiers on labelled episodes.

``evaluate_prm`` scores every row of a PRM dataset (see ``coach_reward.prm_data``) with a
``ProcessRewardModel`` and compares ``p_correct`` with the row's label: accuracy, precision, recall
and F1 at a threshold, calibration (expected calibration error over equal-width bins, Brier score),
the same per app and per action type, and the majority-class baseline a reward model has to beat.
``evaluate_verifier`` does the same for outcome verifiers (``verify(trajectory, ...) -> Verdict``) on
trajectories labelled success/failure.

Unreadable judgments (a PRM's neutral 0.5, a verifier's abstention) are kept in the numbers (0.5 is
below the default threshold, so they count as "incorrect"/"failed") and counted separately.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "BinaryMetrics",
    "CalibrationBin",
    "PRMReport",
    "VerifierReport",
    "binary_metrics",
    "calibration_bins",
    "evaluate_prm",
    "evaluate_verifier",
    "roc_auc",
]


@dataclass(frozen=True)
class CalibrationBin:
    """One bin of a reliability diagram: scores in [lo, hi), how many, their mean, and the share labelled positive."""

    lo: float
    hi: float
    count: int
    mean_score: float
    positive_rate: float


@dataclass(frozen=True)
class BinaryMetrics:
    """Classification and calibration numbers of scores in [0, 1] against boolean labels.

    ``baseline_accuracy`` is the accuracy of always predicting ``baseline_label`` (the majority class
    unless the caller fixed it, e.g. from the training set).
    """

    n: int
    positives: int
    accuracy: float
    precision: float
    recall: float
    f1: float
    ece: float
    brier: float
    baseline_label: bool
    baseline_accuracy: float
    threshold: float
    auc: float = float("nan")
    """Area under the ROC curve of the scores (ties count one half; NaN when one class is absent): how well the
    scores rank correct steps above wrong ones, whatever the threshold."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return asdict(self)


def _check(labels: Sequence[Any], scores: Sequence[float]) -> tuple[list[bool], list[float]]:
    if len(labels) != len(scores):
        raise ValueError(f"{len(labels)} labels but {len(scores)} scores")
    ys, ps = [], []
    for i, (y, p) in enumerate(zip(labels, scores)):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0.0 <= p <= 1.0:
            raise ValueError(f"score {i} must be a number in [0, 1], got {p!r}")
        if not isinstance(y, (bool, int)) or y not in (0, 1):
            raise ValueError(f"label {i} must be True/False (or 1/0), got {y!r}")
        ys.append(bool(y))
        ps.append(float(p))
    return ys, ps


def calibration_bins(labels: Sequence[Any], scores: Sequence[float], n_bins: int = 10) -> list[CalibrationBin]:
    """Equal-width bins over [0, 1] (the last bin includes 1.0); empty bins are listed with count 0."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    ys, ps = _check(labels, scores)
    sums = [[0, 0.0, 0] for _ in range(n_bins)]
    for y, p in zip(ys, ps):
        b = min(int(p * n_bins), n_bins - 1)
        sums[b][0] += 1
        sums[b][1] += p
        sums[b][2] += int(y)
    return [CalibrationBin(lo=i / n_bins, hi=(i + 1) / n_bins, count=c,
                           mean_score=(s / c) if c else float("nan"), positive_rate=(k / c) if c else float("nan"))
            for i, (c, s, k) in enumerate(sums)]


def binary_metrics(
    labels: Sequence[Any],
    scores: Sequence[float],
    *,
    threshold: float = 0.5,
    n_bins: int = 10,
    baseline_label: bool | None = None,
) -> BinaryMetrics:
    """Accuracy, precision, recall, F1 (predicted positive: score >= ``threshold``), ECE, Brier, baseline.

    Precision/recall/F1 are 0.0 when undefined (no predicted or no actual positives). ECE is the
    count-weighted mean |mean score - positive rate| over ``n_bins`` equal-width bins.
    """
    ys, ps = _check(labels, scores)
    n = len(ys)
    if n == 0:
        raise ValueError("no labelled examples to evaluate")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    preds = [p >= threshold for p in ps]
    tp = sum(1 for y, q in zip(ys, preds) if y and q)
    fp = sum(1 for y, q in zip(ys, preds) if not y and q)
    fn = sum(1 for y, q in zip(ys, preds) if y and not q)
    correct = sum(1 for y, q in zip(ys, preds) if y == q)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    bins = calibration_bins(ys, ps, n_bins)
    ece = sum(b.count * abs(b.mean_score - b.positive_rate) for b in bins if b.count) / n
    brier = sum((p - float(y)) ** 2 for y, p in zip(ys, ps)) / n
    positives = sum(ys)
    if baseline_label is None:
        baseline_label = positives * 2 >= n
    baseline = (positives if baseline_label else n - positives) / n
    return BinaryMetrics(n=n, positives=positives, accuracy=correct / n, precision=precision, recall=recall, f1=f1,
                         ece=ece, brier=brier, baseline_label=bool(baseline_label), baseline_accuracy=baseline,
                         threshold=threshold, auc=roc_auc(ys, ps))


def roc_auc(labels: Sequence[Any], scores: Sequence[float]) -> float:
    """ROC AUC by ranks: the chance that a random positive scores above a random negative (ties one half)."""
    ys, ps = _check(labels, scores)
    pos = [p for y, p in zip(ys, ps) if y]
    neg = sorted(p for y, p in zip(ys, ps) if not y)
    if not pos or not neg:
        return float("nan")
    import bisect

    wins = 0.0
    for p in pos:
        below = bisect.bisect_left(neg, p)
        ties = bisect.bisect_right(neg, p) - below
        wins += below + 0.5 * ties
    return wins / (len(pos) * len(neg))


def _table(title: str, groups: Mapping[str, BinaryMetrics]) -> list[str]:
    lines = [f"{title:<28} {'n':>5} {'acc':>6} {'base':>6} {'prec':>6} {'rec':>6} {'f1':>6}"]
    for name, m in sorted(groups.items(), key=lambda kv: (-kv[1].n, kv[0])):
        lines.append(f"{name[:28]:<28} {m.n:>5} {m.accuracy:>6.3f} {m.baseline_accuracy:>6.3f} {m.precision:>6.3f} "
                     f"{m.recall:>6.3f} {m.f1:>6.3f}")
    return lines


class _Shortcuts:
    """``report.accuracy``, ``report.f1``, ... read the overall ``metrics``."""

    metrics: BinaryMetrics

    @property
    def n(self) -> int:
        """Number of evaluated examples."""
        return self.metrics.n

    @property
    def accuracy(self) -> float:
        """Overall accuracy."""
        return self.metrics.accuracy

    @property
    def precision(self) -> float:
        """Overall precision."""
        return self.metrics.precision

    @property
    def recall(self) -> float:
        """Overall recall."""
        return self.metrics.recall

    @property
    def f1(self) -> float:
        """Overall F1."""
        return self.metrics.f1

    @property
    def ece(self) -> float:
        """Expected calibration error."""
        return self.metrics.ece

    @property
    def brier(self) -> float:
        """Brier score."""
        return self.metrics.brier

    @property
    def baseline_accuracy(self) -> float:
        """Accuracy of the majority-class (constant) baseline."""
        return self.metrics.baseline_accuracy


@dataclass
class PRMReport(_Shortcuts):
    """A PRM's agreement with step labels: overall ``metrics``, per app and per action type, calibration bins.

    ``neutral`` counts rows the PRM could not judge (scored 0.5); ``sources`` counts where scores came
    from ("logprobs", "text", "neutral"). ``scores`` are the per-row p_correct in dataset order.
    """

    metrics: BinaryMetrics
    per_app: dict[str, BinaryMetrics]
    per_action_type: dict[str, BinaryMetrics]
    bins: list[CalibrationBin]
    neutral: int
    sources: dict[str, int]
    scores: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (per-row scores included)."""
        return {
            "metrics": self.metrics.to_dict(),
            "per_app": {k: v.to_dict() for k, v in self.per_app.items()},
            "per_action_type": {k: v.to_dict() for k, v in self.per_action_type.items()},
            "bins": [asdict(b) for b in self.bins],
            "neutral": self.neutral,
            "sources": dict(self.sources),
            "scores": list(self.scores),
        }

    def summary(self) -> str:
        """A readable multi-line report."""
        m = self.metrics
        lines = [
            f"PRM on {m.n} steps ({m.positives} labelled correct): accuracy {m.accuracy:.3f} vs majority-class "
            f"baseline {m.baseline_accuracy:.3f} (always {m.baseline_label}), AUC {m.auc:.3f}",
            f"precision {m.precision:.3f}, recall {m.recall:.3f}, F1 {m.f1:.3f} at threshold {m.threshold:g}; "
            f"ECE {m.ece:.3f} ({len(self.bins)} bins), Brier {m.brier:.3f}",
            f"unreadable judgments scored 0.5: {self.neutral}; score sources: "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.sources.items())),
            "",
        ]
        lines += _table("per app", self.per_app) + [""] + _table("per action type", self.per_action_type)
        return "\n".join(lines)


def _grouped(keys: Sequence[str], labels: Sequence[bool], scores: Sequence[float], threshold: float, n_bins: int,
             baseline_label: bool | None) -> dict[str, BinaryMetrics]:
    groups: dict[str, tuple[list[bool], list[float]]] = {}
    for key, y, p in zip(keys, labels, scores):
        ys, ps = groups.setdefault(key or "(none)", ([], []))
        ys.append(y)
        ps.append(p)
    return {k: binary_metrics(ys, ps, threshold=threshold, n_bins=n_bins, baseline_label=baseline_label)
            for k, (ys, ps) in groups.items()}


def evaluate_prm(
    prm: Any,
    dataset: Any,
    *,
    batch_size: int = 16,
    threshold: float = 0.5,
    n_bins: int = 10,
    screenshots: bool | None = None,
    baseline_label: bool | None = None,
    limit: int | None = None,
    progress: bool = False,
) -> PRMReport:
    """Score each row of a PRM dataset with ``prm`` (a ``ProcessRewardModel``) and compare with its label.

    ``screenshots``: send the row's screenshot (default: when the PRM's backend can take images, i.e.
    a local processor or a remote backend, and the row has one). ``baseline_label`` fixes the
    baseline's constant prediction (e.g. the training set's majority label); by default it is the
    majority label of the evaluated rows. ``limit`` evaluates the first rows only.
    """
    from coach_reward.prm_data import step_input_from_row

    if not hasattr(prm, "score_batch"):
        raise TypeError(f"prm must be a ProcessRewardModel (with score_batch), got {type(prm).__name__}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    missing = {"instruction", "action_text", "label"} - set(getattr(dataset, "column_names", None) or [])
    if missing:
        raise ValueError(f"dataset is not a PRM dataset (see coach_reward.prm_data): missing column(s) {sorted(missing)}")
    n = len(dataset) if limit is None else min(limit, len(dataset))
    if n == 0:
        raise ValueError("the dataset is empty: nothing to evaluate")
    if screenshots is None:
        backend = getattr(prm, "backend", None)
        screenshots = getattr(backend, "processor", None) is not None or not hasattr(backend, "tokenizer")
    rows = dataset.select(range(n)) if n < len(dataset) else dataset
    labels = [bool(v) for v in rows["label"]]
    apps = [str(v) for v in rows["app"]] if "app" in rows.column_names else [""] * n
    types = [str(v) for v in rows["action_type"]] if "action_type" in rows.column_names else [""] * n
    scores: list[float] = []
    sources: dict[str, int] = {}
    starts = range(0, n, batch_size)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="PRM eval", total=len(starts))
    for start in starts:
        chunk = rows.select(range(start, min(start + batch_size, n)))
        steps = [step_input_from_row(row, screenshot=bool(screenshots)) for row in chunk]
        for result in prm.score_batch(steps):
            scores.append(float(result.p_correct))
            sources[result.source] = sources.get(result.source, 0) + 1
    overall = binary_metrics(labels, scores, threshold=threshold, n_bins=n_bins, baseline_label=baseline_label)
    return PRMReport(
        metrics=overall,
        per_app=_grouped(apps, labels, scores, threshold, n_bins, overall.baseline_label),
        per_action_type=_grouped(types, labels, scores, threshold, n_bins, overall.baseline_label),
        bins=calibration_bins(labels, scores, n_bins),
        neutral=sources.get("neutral", 0),
        sources=sources,
        scores=scores,
    )


@dataclass
class VerifierReport(_Shortcuts):
    """An outcome verifier's agreement with episode labels; ``abstained`` counts unreadable verdicts."""

    metrics: BinaryMetrics
    abstained: int
    per_task: dict[str, BinaryMetrics]
    scores: list[float] = field(default_factory=list)
    predictions: list[bool] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {"metrics": self.metrics.to_dict(), "abstained": self.abstained,
                "per_task": {k: v.to_dict() for k, v in self.per_task.items()},
                "scores": list(self.scores), "predictions": list(self.predictions)}

    def summary(self) -> str:
        """A readable multi-line report."""
        m = self.metrics
        lines = [f"verifier on {m.n} episodes ({m.positives} successful): accuracy {m.accuracy:.3f} vs majority-class "
                 f"baseline {m.baseline_accuracy:.3f}; precision {m.precision:.3f}, recall {m.recall:.3f}, "
                 f"F1 {m.f1:.3f}; Brier {m.brier:.3f}; abstained {self.abstained}", ""]
        return "\n".join(lines + _table("per task", self.per_task))


def _episode_label(item: Any, index: int) -> tuple[Any, bool]:
    if isinstance(item, tuple) and len(item) == 2:
        traj, label = item
    else:
        traj = item
        info = getattr(traj, "info", None) or (traj.get("info") if isinstance(traj, Mapping) else None) or {}
        if "label" in info:
            label = info["label"]
        else:
            success = getattr(traj, "success", None)
            if success is None and isinstance(traj, Mapping):
                success = traj.get("success")
            if success is None:
                raise ValueError(f"trajectory {index} has no label: pass (trajectory, label) pairs or set success")
            label = float(success) >= 1.0
    if not isinstance(label, (bool, int)) or label not in (0, 1):
        raise ValueError(f"trajectory {index}: the label must be True/False, got {label!r}")
    return traj, bool(label)


def evaluate_verifier(
    verifier: Any,
    trajectories: Iterable[Any],
    *,
    devices: Sequence[Any] | None = None,
    tasks: Sequence[Any] | None = None,
    threshold: float | None = None,
    n_bins: int = 10,
) -> VerifierReport:
    """Run an outcome verifier over labelled trajectories and compare its decisions with the labels.

    ``trajectories`` are ``(trajectory, label)`` pairs, or trajectories labelled by ``info["label"]`` or
    by ``success >= 1``. A verdict counts as "success" by its ``success`` flag, or by ``score >= threshold``
    when a threshold is given. ``devices``/``tasks`` (aligned) go to verifiers that need them.
    """
    from coach_reward.verifiers import as_trajectory

    pairs = [_episode_label(item, i) for i, item in enumerate(trajectories)]
    if not pairs:
        raise ValueError("no trajectories to evaluate")
    trajs = [as_trajectory(t) for t, _ in pairs]
    labels = [y for _, y in pairs]
    if hasattr(verifier, "verify_batch"):
        verdicts = verifier.verify_batch(trajs, devices=devices, tasks=tasks)
    elif hasattr(verifier, "verify"):
        devs = list(devices) if devices is not None else [None] * len(trajs)
        tks = list(tasks) if tasks is not None else [None] * len(trajs)
        verdicts = [verifier.verify(t, device=d, task=k) for t, d, k in zip(trajs, devs, tks)]
    else:
        raise TypeError(f"verifier must have verify() or verify_batch(), got {type(verifier).__name__}")
    if len(verdicts) != len(trajs):
        raise ValueError(f"the verifier returned {len(verdicts)} verdicts for {len(trajs)} trajectories")
    scores = [float(v.score) for v in verdicts]
    preds = [bool(v.success) if threshold is None else v.score >= threshold for v in verdicts]
    # Accuracy/precision/recall follow the decisions; calibration (ECE, Brier) follows the scores.
    decision = binary_metrics(labels, [1.0 if p else 0.0 for p in preds], threshold=0.5, n_bins=n_bins)
    calib = binary_metrics(labels, scores, threshold=0.5, n_bins=n_bins)
    overall = BinaryMetrics(**{**decision.to_dict(), "ece": calib.ece, "brier": calib.brier,
                               "threshold": threshold if threshold is not None else 0.5})
    names = [t.task or "(none)" for t in trajs]
    per_task: dict[str, tuple[list[bool], list[float]]] = {}
    for name, y, p in zip(names, labels, preds):
        ys, ps = per_task.setdefault(name, ([], []))
        ys.append(y)
        ps.append(1.0 if p else 0.0)
    return VerifierReport(
        metrics=overall,
        abstained=sum(1 for v in verdicts if getattr(v, "abstained", False)),
        per_task={k: binary_metrics(ys, ps, n_bins=n_bins, baseline_label=overall.baseline_label)
                  for k, (ys, ps) in per_task.items()},
        scores=scores,
        predictions=preds,
    )
