"""AndroidLab's own offline evaluator scores the traces AndroidLab-v0 exports, for every task the sim re-creates.

The scripted expert plays each re-created AndroidLab task on the sim (our verifier scores it 1.0);
the env records AndroidLab trace folders; AndroidLab's own ``AppConfig``/``Evaluation_Task`` and
per-task judges (``../shared/vendor/android_lab``, run in a subprocess from that folder) score the same
traces. Its judges read the final screens' compressed XML for the real apps' exact texts, so this is
what shows that the simulated apps write what the real ones do. The passing set is asserted exactly
(:data:`JUDGE_PASSES`): a task that stops passing is a regression, one that starts passing must be added.
The rule-judged tasks that do not pass are named with the reason in ``android_gym.suites.androidlab.
JUDGE_GAPS``; query tasks are judged by an LLM over the network, which cannot run here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import android_gym
from android_gym import AndroidEnv
from android_gym.suites.androidlab import JUDGE_GAPS, load_androidlab_tasks

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1].parent / "shared"  # ../shared from the repository root

JUDGE_PASSES = frozenset({
    "bluecoins_6", "bluecoins_7", "bluecoins_8", "bluecoins_9", "bluecoins_10", "bluecoins_11", "bluecoins_12",
    "bluecoins_13", "bluecoins_14", "bluecoins_15",
    "calendar_1", "calendar_2", "calendar_3", "calendar_4", "calendar_5", "calendar_6", "calendar_8", "calendar_9",
    "calendar_11", "calendar_12", "calendar_13",
    "cantook_6", "cantook_7", "cantook_10", "cantook_11", "cantook_12",
    "clock_1", "clock_2", "clock_3", "clock_4", "clock_5", "clock_6", "clock_7", "clock_8", "clock_15",
    "clock_17", "clock_18", "clock_22", "clock_23", "clock_24", "clock_25", "clock_26", "clock_27",
    "contacts_1", "contacts_3", "contacts_4", "contacts_6", "contacts_8", "contacts_10", "contacts_11",
    "pimusic_7", "pimusic_8", "pimusic_9", "pimusic_10", "pimusic_11", "pimusic_12",
    "map_11", "map_12", "map_13", "map_14", "map_15",
    "setting_1", "setting_2", "setting_3", "setting_4", "setting_5", "setting_7", "setting_8", "setting_13",
    "setting_15", "setting_21",
    "zoom_1", "zoom_2", "zoom_3", "zoom_4", "zoom_5",
})
"""Re-created AndroidLab tasks whose own judge passes the expert's episode on the sim."""


@pytest.fixture(scope="module")
def android_lab() -> Path:
    folder = SHARED / "vendor" / "android_lab"
    if not (folder / "generate_result.py").is_file():
        pytest.skip(f"AndroidLab's code is not at {folder} (../shared/vendor/android_lab)")
    probe = subprocess.run([sys.executable, "-B", "-c", "import jsonlines, xmltodict, backoff, openai, zhipuai, "
                            "pyshine, colorama, tqdm, cv2"], capture_output=True, text=True)
    if probe.returncode:
        pytest.skip("AndroidLab's evaluator imports packages that are not installed (tools/setup_env.sh installs "
                    f"them when ../shared/vendor/android_lab exists): {probe.stderr.strip().splitlines()[-1]}")
    return folder


@pytest.mark.slow
def test_androidlabs_evaluator_scores_our_exported_traces(android_lab, tmp_path):
    names = android_gym.list_tasks("androidlab")
    traces = tmp_path / "logs" / "our-agent"
    env = AndroidEnv(suite="androidlab", tasks_path=android_lab / "evaluation" / "config", record_dir=traces,
                     screenshot=True)
    ours = {}
    for name in names:
        env.reset(seed=0, options={"task": name})
        for _ in range(60):
            _, _, terminated, truncated, info = env.step(env.expert_action())
            if terminated or truncated:
                break
        ours[name] = info["success"]
    env.close()
    assert all(score == 1.0 for score in ours.values()), ours

    run = subprocess.run([sys.executable, "-B", str(HERE / "androidlab_evaluator.py"), str(traces),
                          str(tmp_path / "results"), *names], cwd=android_lab, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    theirs = json.loads(run.stdout.strip().splitlines()[-1])["results"]
    evaluated = {name for name in names if name in theirs}
    assert len(evaluated) >= 20, f"AndroidLab's evaluator scored only {sorted(evaluated)}"

    specs = {spec.task_id: spec for spec in load_androidlab_tasks(android_lab / "evaluation" / "config")}
    queries = {n for n in names if specs[n].is_query}
    assert not queries & set(theirs), "query tasks are left to AndroidLab's LLM judge"
    unaccounted = set(names) - queries - JUDGE_PASSES - set(JUDGE_GAPS)
    assert not unaccounted, f"re-created rule-judged tasks neither in JUDGE_PASSES nor JUDGE_GAPS: {unaccounted}"
    assert not JUDGE_PASSES & set(JUDGE_GAPS), JUDGE_PASSES & set(JUDGE_GAPS)
    assert JUDGE_PASSES | set(JUDGE_GAPS) <= set(names), (JUDGE_PASSES | set(JUDGE_GAPS)) - set(names)

    agree = {n for n in names if theirs.get(n, {}).get("complete") is True}
    regressed = {n: theirs.get(n) for n in JUDGE_PASSES - agree}
    assert not regressed, f"AndroidLab's judge no longer passes these expert episodes: {regressed}"
    now_passing = sorted(agree - JUDGE_PASSES)
    assert not now_passing, f"these tasks now pass AndroidLab's judge; move them to JUDGE_PASSES: {now_passing}"
    for name in sorted(set(names) - agree):
        result = theirs.get(name)
        checks = "not run (LLM judge)" if result is None else ", ".join(f"{k}={v}" for k, v in result.items())
        print(f"{name}: AndroidLab's judge {checks}; ours 1.0. Why: {JUDGE_GAPS.get(name, 'a query task')}")
    rule_judged = len(names) - len(queries)
    print(f"{len(names)} AndroidLab tasks re-created, {rule_judged} with a rule judge; it passes {len(agree)}")
