"""AndroidLab's own offline evaluator scores the traces AndroidLab-v0 exports, for every task the sim re-creates.

The scripted expert plays each re-created AndroidLab task on the sim (our verifier scores it 1.0);
the env records AndroidLab trace folders; AndroidLab's own ``AppConfig``/``Evaluation_Task`` and
per-task judges (``../shared/vendor/android_lab``, run in a subprocess from that folder) score the same
traces. Where the two disagree the test names the task and why (:data:`DISAGREEMENTS`): AndroidLab's
judges read the final screens' compressed XML and look for the real apps' exact texts, which the
simulated apps do not all reproduce yet, and its query tasks are judged by an LLM over the network.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import android_gym
from android_gym import AndroidEnv

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1].parent / "shared"  # ../shared from the repository root
_LLM = "a query task: AndroidLab's judge asks an LLM (glm4 or gpt-4o over the network), which cannot run offline"
_CLOCK_TIME = ("the judge reads the alarm's time as the real Clock writes it ('3:00\\u200aPM', a hair space before "
               "AM/PM, in the alarm list's own layout); the sim's alarm list does not match its extract_alarms")
_CALENDAR = ("AndroidLab's calendar app is not Simple Calendar Pro: the judge looks for its event screen texts "
             "({texts}), which the sim's calendar does not show")
DISAGREEMENTS: dict[str, str] = {
    "calendar_1": _CALENDAR.format(texts="'Today', '5:00 PM'"),
    "calendar_5": _CALENDAR.format(texts="'Today' next to the edited '7:00 PM' end time"),
    "calendar_8": _CALENDAR.format(texts="'Today', '5:00 PM' with the note"),
    "calendar_9": _CALENDAR.format(texts="'Today', '5:00 PM', '30 minutes before' with the recurrence"),
    "calendar_10": _CALENDAR.format(texts="an event titled 'this_day' on its page check"),
    "calendar_14": _CALENDAR.format(texts="the all-day label of its event view"),
    "clock_1": _CLOCK_TIME,
    "clock_9": _CLOCK_TIME,
    "clock_26": _CLOCK_TIME,
    "clock_27": _CLOCK_TIME,
    "contacts_1": "the judge wants the number as the real Contacts formats it, '1 (234) 567-8'; the sim shows the "
                  "digits as typed",
    "contacts_4": "the judge looks for the real Contacts' 'Contact photo' header next to the company; the sim's "
                  "contact page has no such node",
    "contacts_11": "the judge's page check wants the remaining contact 'ABC ABC' on screen after the deletion; the "
                   "sim's list after deleting shows the contacts under letter headers without that text",
    "setting_7": "the judge wants the real Display page's RecyclerView with a 'Use Dark theme' switch; the sim's "
                 "Display page lays the switch out differently",
    "clock_10": _LLM, "clock_13": _LLM, "contacts_12": _LLM, "setting_0": _LLM, "setting_9": _LLM,
    "setting_10": _LLM, "setting_14": _LLM, "setting_16": _LLM, "setting_17": _LLM,
}
"""Re-created AndroidLab tasks the expert solves (our verifier: 1.0) that AndroidLab's evaluator does not pass."""


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

    agree = sorted(n for n in names if theirs.get(n, {}).get("complete") is True)
    disagree = {n: theirs.get(n) for n in names if n not in agree}
    unexplained = {n: r for n, r in disagree.items() if n not in DISAGREEMENTS}
    assert not unexplained, f"AndroidLab's judge fails these expert-solved tasks for reasons not yet named: {unexplained}"
    now_passing = sorted(n for n in DISAGREEMENTS if n in agree)
    assert not now_passing, f"these tasks now pass AndroidLab's judge; drop them from DISAGREEMENTS: {now_passing}"
    for name, result in disagree.items():
        checks = "not run" if result is None else ", ".join(f"{k}={v}" for k, v in result.items())
        print(f"{name}: AndroidLab's judge {checks}; ours 1.0. Why: {DISAGREEMENTS[name]}")
    assert len(agree) >= 10, agree
