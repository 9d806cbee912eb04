"""Run each main-job task's expert on seeds 0-5 and 1000000-1000005 via AndroidSim-v0 (the main job's format,
configs/main.yaml: xml policy mode, index actions, 8 steps) and write every step's observation (the prompt's UI
text, the raw XML's hash) and answer as JSON lines, to compare two commits' sims:

    PYTHONPATH=packages/android-gym/src:packages/coach-reward/src:packages/coach-rl/src \
        python tools/main_job_observations.py OUT.jsonl [--compare OTHER.jsonl]
"""

import hashlib
import json
import sys

import gymnasium as gym

from android_gym.tasks.expert import ExpertStuck
from coach_rl.demos import _compressed
from coach_rl.policy import PolicyFormat, PolicyRequest

TASKS = ["SystemWifiTurnOff", "SystemWifiTurnOn", "SystemBluetoothTurnOff", "SystemBluetoothTurnOn", "SimDarkTheme",
         "SimAirplaneMode", "OpenAppTaskEval"]
SEEDS = list(range(6)) + list(range(1000000, 1000006))
fmt = PolicyFormat(mode="xml", action_format="index", max_history=1, max_label_chars=30, action_space=())
env = gym.make("android_gym:AndroidSim-v0", suite="sim", screenshot=False, max_steps=8)
out = open(sys.argv[1], "w")
for task in TASKS:
    for seed in SEEDS:
        base = env.unwrapped
        size = tuple(base.device.screen_size)
        obs, info = env.reset(seed=seed, options={"task": task})
        gen = base.task.expert(_compressed(info, base, size))
        steps = []
        end = None
        try:
            expert = next(gen)
            while True:
                req = PolicyRequest.from_observation(obs, [], size)
                answer = fmt.answer_for(expert, req, type_presses_enter=True)
                _, action = fmt.parse(answer, req)
                steps.append({"ui": req.ui, "xml_sha": hashlib.sha1(info["xml"].encode()).hexdigest()[:12],
                              "expert": expert.to_dict(), "answer": answer})
                obs, r, term, trunc, info = env.step(action)
                if term or trunc:
                    end = {"success": float(info.get("success", 0.0)), "truncated": bool(trunc and not term)}
                    break
                expert = gen.send(_compressed(info, base, size))
        except ExpertStuck as e:
            end = {"stuck": str(e)}
        except StopIteration:
            end = {"stopped": True}
        out.write(json.dumps({"task": task, "seed": seed, "steps": steps, "end": end}) + "\n")
env.close()
out.close()


def compare(a_path: str, b_path: str) -> None:
    """Print which (task, seed) episodes' steps differ between two dumps."""
    a = [json.loads(line) for line in open(a_path)]
    b = [json.loads(line) for line in open(b_path)]
    for x, y in zip(a, b):
        steps = [i for i, (s, t) in enumerate(zip(x["steps"], y["steps"]))
                 if s["ui"] != t["ui"] or s["answer"] != t["answer"] or s["xml_sha"] != t["xml_sha"]]
        if steps or len(x["steps"]) != len(y["steps"]) or x["end"] != y["end"]:
            print(x["task"], x["seed"], "steps", steps, "lengths", len(x["steps"]), len(y["steps"]), "end", y["end"])


if "--compare" in sys.argv:
    compare(sys.argv[sys.argv.index("--compare") + 1], sys.argv[1])
