"""Configuration of the trainers, as users import it: the shared parts (:mod:`coach_rl.arguments`) and Android Coach's
:class:`CoachConfig` (:mod:`coach_rl.algorithms.coach`). Every algorithm's own config class lives in its module of
:mod:`coach_rl.algorithms` (``coach_rl.algorithms.config_class(name)`` gives it).
"""

from __future__ import annotations

from coach_rl.algorithms.coach import CoachArguments, CoachConfig
from coach_rl.arguments import (
    OUTCOME_VERIFIERS,
    PRM_BACKENDS,
    CriticArguments,
    OnlineRLArguments,
    QCriticArguments,
    ReplayActorArguments,
    TrainerConfig,
)

__all__ = ["OUTCOME_VERIFIERS", "PRM_BACKENDS", "CoachArguments", "CoachConfig", "CriticArguments", "OnlineRLArguments",
           "QCriticArguments", "ReplayActorArguments", "TrainerConfig"]
