"""Every option a user can set is read by the code it configures: no field that is validated and then ignored."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from trl import GRPOConfig

import coach_rl
from coach_rl.algorithms.dgrpo import DGRPOArguments
from coach_rl.algorithms.distrl import DistRLArguments
from coach_rl.config import CoachConfig, CriticArguments, OnlineRLArguments
from coach_rl.configs import LoopArguments
from coach_rl.distributed.arguments import DistributedArguments

PACKAGE = Path(coach_rl.__file__).parent
# Where the fields are declared and validated: a mention there is not a use.
DECLARING = {PACKAGE / "config.py", PACKAGE / "arguments.py", PACKAGE / "configs" / "__init__.py"}


def _our_fields() -> dict[str, str]:
    """Field name -> declaring class, for the fields coach-rl adds (TRL reads GRPOConfig's own fields)."""
    trl = {f.name for f in dataclasses.fields(GRPOConfig)}
    out = {}
    for cls in (OnlineRLArguments, CriticArguments, DGRPOArguments, DistRLArguments, DistributedArguments, LoopArguments):
        for f in dataclasses.fields(cls):
            out[f.name] = cls.__name__
    for f in dataclasses.fields(CoachConfig):
        if f.name not in trl and f.name not in out:
            out[f.name] = "CoachConfig"
    return out


def _source() -> str:
    files = [p for p in PACKAGE.rglob("*.py") if p not in DECLARING]
    return "\n".join(p.read_text() for p in files)


def test_there_are_fields_to_check():
    fields = _our_fields()
    assert {"use_prm", "prm_model", "outcome_verifier", "max_pixels", "algorithm", "reward_retries"} <= set(fields)


@pytest.mark.parametrize("name", sorted(_our_fields()))
def test_every_config_field_is_read_outside_its_declaration(name):
    source = _source()
    # read through a config object (args.x, self.args.x, config.coach.x, loop.x, self.loop.x) or by name (getattr)
    used = re.search(rf"\b(args|loop|coach|config|cfg)\.{re.escape(name)}\b|getattr\([^)]*[\"']{re.escape(name)}[\"']",
                     source)
    assert used, (f"config field {name!r} ({_our_fields()[name]}) is declared and validated but no code of coach_rl "
                  "reads it: wire it where it belongs or remove it")
