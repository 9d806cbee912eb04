"""Process-reward-model training data: expert states, K candidate steps per state, labels by action match.

The Android Coach recipe (Section 3.2, Appendix B, Figure 7) in four stages:

1. **Expert states.** Successful demonstrations give states ``(instruction, screen, history)`` with the
   action the demonstrator took there (``ExpertStep``). Sources: the simulated phone's scripted
   experts (:func:`sim_expert_steps`), AndroidControl-style episode files (:func:`read_androidcontrol`),
   or recorded ``android_gym`` trajectories (:func:`trajectory_expert_steps`).
2. **Candidates.** A policy (any :class:`Sampler`) proposes K ``(thought, action)`` pairs per state:
   :class:`BackendSampler` asks a model behind a coach_reward ``Backend``; :class:`PerturbationSampler`
   mixes the expert action with plausible mistakes (for tests and demos).
3. **Labels.** A candidate is positive when its action matches the expert's (:func:`match_actions`):
   same type; points within 14% of the screen width (Euclidean, GUIOdyssey's rule); typed text equal
   after normalising case, whitespace and trailing punctuation; scroll direction equal; ``open_app`` to
   the same package. Positives and negatives are then balanced 1:1 (seeded).
4. **Rationales** (optional): a judge backend explains, given the label, why the step is right or wrong;
   the explanation becomes the ``<think>`` part of the PRM's training target.

The result is a ``datasets.Dataset`` (columns in :func:`prm_features`; screenshots as an ``Image``
feature) saved with :func:`save_prm_dataset` as ``save_to_disk`` plus a parquet export.

Modules, one per stage: :mod:`.sources` (expert states), :mod:`.samplers` (candidates), :mod:`.matching`
(labels), :mod:`.dataset` (building, balancing, rationales, storage and views of rows); the records they
share (``ExpertStep``, ``Candidate``, ``Sampler``) are in :mod:`.types`. Everything public is importable
from ``coach_reward.prm_data``.
"""

from __future__ import annotations

from coach_reward.prm_data.dataset import (
    DEFAULT_K,
    RATIONALE_SYSTEM_PROMPT,
    build_prm_dataset,
    build_rationale_messages,
    build_stats,
    critic_state_text,
    load_prm_dataset,
    prm_features,
    save_prm_dataset,
    split_by_episode,
    split_by_task,
    step_input_from_row,
    to_critic_pretrain_examples,
)
from coach_reward.prm_data.matching import (
    DEFAULT_TOLERANCE,
    ActionMatch,
    action_text,
    match_actions,
    normalize_text,
)
from coach_reward.prm_data.samplers import (
    AGENT_SYSTEM_PROMPT,
    BackendSampler,
    PerturbationSampler,
    build_agent_messages,
    split_thought_action,
)
from coach_reward.prm_data.sources import (
    accessibility_tree_xml,
    androidcontrol_action,
    read_androidcontrol,
    sim_expert_steps,
    trajectory_expert_steps,
)
from coach_reward.prm_data.types import Candidate, ExpertStep, Sampler

__all__ = [
    "AGENT_SYSTEM_PROMPT",
    "DEFAULT_K",
    "DEFAULT_TOLERANCE",
    "RATIONALE_SYSTEM_PROMPT",
    "ActionMatch",
    "BackendSampler",
    "Candidate",
    "ExpertStep",
    "PerturbationSampler",
    "Sampler",
    "accessibility_tree_xml",
    "action_text",
    "androidcontrol_action",
    "build_agent_messages",
    "build_prm_dataset",
    "build_rationale_messages",
    "build_stats",
    "critic_state_text",
    "load_prm_dataset",
    "match_actions",
    "normalize_text",
    "prm_features",
    "read_androidcontrol",
    "save_prm_dataset",
    "sim_expert_steps",
    "split_by_episode",
    "split_by_task",
    "split_thought_action",
    "step_input_from_row",
    "to_critic_pretrain_examples",
    "trajectory_expert_steps",
]


