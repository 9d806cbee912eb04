#!/usr/bin/env bash
# The main job: train an Android agent with Android Coach on the simulated phone, on this machine's CPU, with the
# paper's whole pipeline at tiny scale.
#
# 0. The process reward model (shared by all seeds): PRM data from the simulated phone's expert episodes on the
#    run's own tasks (candidates labelled by action match, balanced), a tiny PRM trained with coach-reward, its
#    accuracy and AUC on held-out instances of those tasks printed (`coach-reward demo --held-out instances`).
# 1. Warm-up (`coach-rl warmup`, shared by all seeds): build a tiny Qwen2 policy locally (tokenizer trained
#    on the sim's expert demonstrations), a short SFT on those demonstrations, pre-train the critic on sampled
#    actions labelled by the demonstrations' action match (the paper uses its PRM's labels, Appendix B; the
#    learned PRM passes 407 of 965 such actions where the match passes 188, and a critic trained on its labels ranks
#    the K actions at chance: packages/coach-rl/README.md; EXTRA="critic_pretrain_labels=prm" gives the paper's),
#    evaluate on held-out task instances (greedy, and sampled at the training temperature, 8 episodes per instance).
# 2. For each of 3 seeds, in parallel (one torch thread each): Android Coach from the warm-up checkpoint
#    (rollouts -> the PRM's step rewards (w_p = 0.2) and the task's rule check (w_o = 1) -> returns -> critic
#    update -> K actions per stored state scored by the critic, ACLOO, PPO clip), then the same evaluations.
# 3. `coach-rl summarize`: before/after success (mean and std over seeds), whether the sampled gain exceeds twice
#    the spread across seeds and is positive on every seed, and the tasks the warm-up solved that a run lost.
#    Each run folder has report.md and plots/ (with the oracle diagnostics: critic AUC, advantage signs, KL);
#    re-running this script resumes unfinished runs from their checkpoints (also after kill -9).
#
# Environment: SEEDS (default "0 1 2"), OUT (default runs/main_job), CONFIG (default main),
# EXTRA (more key=value overrides for every run), PRM (default: train one into $OUT/prm; "none": no PRM;
# "sim-oracle": the simulated phone's expert as a perfect PRM), COMPARE (e.g. "grpo": also run that algorithm
# from the same warm-up, per seed, on exactly the env steps the Coach run of that seed used, at its own tuned
# settings: the shipped config $CONFIG-$COMPARE that `coach-rl sweep` chose on validation instances).
# Diagnostic: EXTRA="learning_rate=0.0001 coach_q_source=sim-oracle" scores Coach's K actions with the sim's expert
# match instead of the critic (a perfect critic, the upper bound; packages/coach-rl/README.md, the diagnosis).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
export OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
SEEDS=${SEEDS:-"0 1 2"}
OUT=${OUT:-runs/main_job}
CONFIG=${CONFIG:-main}
EXTRA=${EXTRA:-}
PRM=${PRM:-$OUT/prm}
COMPARE=${COMPARE:-}
mkdir -p "$OUT"
# the PRM and the warm-up run alone: they get up to 4 threads; the seeds' runs below share the cores, one thread each
WARM_THREADS=$(nproc); [ "$WARM_THREADS" -le 4 ] || WARM_THREADS=4
start=$(date +%s)
# 0. the process reward model, shared by every run: PRM data from the simulated phone, a tiny PRM
REWARDS=""
if [ "$PRM" = "sim-oracle" ]; then
  echo "PRM: the simulated phone's expert (sim-oracle); the critic is pre-trained on action-match labels"
  REWARDS="use_prm=true prm_model=sim-oracle critic_pretrain_labels=match"
elif [ "$PRM" != "none" ]; then
  if [ ! -f "$PRM/prm_config.json" ]; then
    echo "PRM: data from the simulated phone, a tiny PRM trained with coach-reward (log: $OUT/prm.log)"
    # the paper trains its PRM on the benchmark's own trajectories: the run's tasks, measured on held-out instances
    tasks=$(.venv/bin/python -c "from coach_rl.configs import load_config; print(','.join(load_config('$CONFIG').coach.tasks or []))" 2>/dev/null)
    OMP_NUM_THREADS=$WARM_THREADS .venv/bin/coach-reward demo --size ci --seed 0 --output "$PRM" --tasks "$tasks" --held-out instances \
      --instances 8 --json "$OUT/prm.json" --quiet > "$OUT/prm.log" 2>&1 || {
      echo "training the PRM failed; the end of its log:" >&2; tail -n 30 "$OUT/prm.log" >&2; exit 1; }
  fi
  grep -m1 "held-out accuracy" "$OUT/prm.log" 2>/dev/null | sed 's/^/PRM: /' || true
  REWARDS="use_prm=true prm_model=$PRM prm_max_new_tokens=20"
fi
# 1. the warm-up, shared by every seed: tiny policy, SFT, critic pre-training, evaluation before
labels=$(case "$REWARDS $EXTRA" in *critic_pretrain_labels=prm*) echo "the PRM's labels";; *) echo "action-match labels";; esac)
echo "warm-up: policy, SFT, critic pre-training on $labels, evaluation before (log: $OUT/warmup.log)"
# shellcheck disable=SC2086
OMP_NUM_THREADS=$WARM_THREADS .venv/bin/coach-rl warmup --config "$CONFIG" "seed=0" "output_dir=$OUT/warmup" $REWARDS $EXTRA > "$OUT/warmup.log" 2>&1 || {
  echo "the warm-up failed; the end of its log:" >&2; tail -n 30 "$OUT/warmup.log" >&2; exit 1; }
init="$OUT/warmup/checkpoints/iter-000000"
# 2. Android Coach from the warm-up, one run per seed, in parallel
pids=()
runs=()
for seed in $SEEDS; do
  run="$OUT/seed$seed"
  runs+=("$run")
  # shellcheck disable=SC2086
  .venv/bin/coach-rl train --config "$CONFIG" "seed=$seed" "init_from=$init" "output_dir=$run" $REWARDS $EXTRA \
    --no-progress > "$run.log" 2>&1 &
  pids+=($!)
  echo "seed $seed: Android Coach in $run (log: $run.log)"
done
status=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "run ${runs[$i]} failed; the end of its log:" >&2
    tail -n 30 "${runs[$i]}.log" >&2 || true
    status=1
  fi
done
[ "$status" -eq 0 ] || exit "$status"
end=$(date +%s)
.venv/bin/coach-rl summarize "${runs[@]}" --out "$OUT/summary.json" > /dev/null
# COMPARE: another algorithm from the same warm-up, per seed, on the env steps that seed's Coach run used
if [ -n "$COMPARE" ]; then
  # the other algorithm at its OWN tuned settings: the config `coach-rl sweep` wrote for it (<config>-<algorithm>),
  # chosen on validation instances; without one it runs at this config's settings, which were tuned for Coach
  tuned=$(.venv/bin/python - "${CONFIG%.yaml}-$COMPARE" <<'PY'
import sys
from pathlib import Path
from coach_rl.configs import list_configs
name = sys.argv[1]
if Path(name + ".yaml").is_file():
    print(name + ".yaml")
elif name in list_configs():
    print(name)
PY
)
  if [ -n "$tuned" ]; then
    cconfig="$tuned"; calgo=""
    echo "$COMPARE: at its own tuned settings, config $cconfig ($(.venv/bin/python -c "import sys, yaml
from importlib import resources
from pathlib import Path
name = sys.argv[1]
path = Path(name) if name.endswith('.yaml') else resources.files('coach_rl.configs') / (name + '.yaml')
raw = yaml.safe_load(path.read_text())
print(' '.join(f'{k}={v}' for k, v in raw.items() if k not in ('extends', 'algorithm')))" "$cconfig"))"
  else
    cconfig="$CONFIG"; calgo="algorithm=$COMPARE"
    echo "warning: no tuned config ${CONFIG%.yaml}-$COMPARE (coach-rl sweep writes one): $COMPARE runs at $CONFIG's settings, tuned for Coach" >&2
  fi
  # EXTRA's keys that $COMPARE's config does not own (e.g. Coach's coach_q_source) stay with the Coach runs
  cextra=$(.venv/bin/python -c "import sys
from coach_rl.configs import overrides_for
kept, left_out = overrides_for(sys.argv[1], sys.argv[2:])
if left_out:
    print('EXTRA settings', sys.argv[1], 'does not have, not passed to it:', *left_out, file=sys.stderr)
print(' '.join(kept))" "$COMPARE" $EXTRA)
  cruns=()
  pids=()
  for seed in $SEEDS; do
    run="$OUT/$COMPARE-seed$seed"
    cruns+=("$run")
    budget=$(.venv/bin/python -c "import json, sys; r = [x for x in json.load(open('$OUT/summary.json'))['runs'] if x['run'].endswith('seed$seed')][0]; print(r['env_steps'])")
    # shellcheck disable=SC2086
    .venv/bin/coach-rl train --config "$cconfig" $calgo "seed=$seed" "init_from=$init" "output_dir=$run" \
      "max_env_steps=$budget" total_iterations=1000 $cextra --no-progress > "$run.log" 2>&1 &
    pids+=($!)
    echo "seed $seed: $COMPARE in $run on $budget env steps (log: $run.log)"
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "run ${cruns[$i]} failed; the end of its log:" >&2; tail -n 30 "${cruns[$i]}.log" >&2; exit 1; }
  done
  .venv/bin/coach-rl summarize "${cruns[@]}" --out "$OUT/summary_$COMPARE.json" > /dev/null
fi
total_end=$(date +%s)
.venv/bin/python - "$OUT/summary.json" "$((end - start))" "$COMPARE" "$OUT/summary_$COMPARE.json" "$((total_end - end))" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
wall = int(sys.argv[2])
nan = float("nan")


def pct(row, key):
    return f"{100 * row.get(key, {}).get('success_rate', nan):.1f}%"


def table(summary, name):
    print(f"| {name} run | greedy before | greedy after | sampled before | sampled after | sampled gain | env steps |")
    print("|---|---|---|---|---|---|---|")
    for r in summary["runs"]:
        print(f"| {r['run']} | {pct(r, 'before')} | {pct(r, 'after')} | {pct(r, 'before_sampled')} | "
              f"{pct(r, 'after_sampled')} | {100 * r.get('sampled_gain', nan):+.1f} | {r['env_steps']} |")


print(f"\nAndroid Coach main job: {len(summary['runs'])} seeds, {wall // 60} min {wall % 60} s wall time")
table(summary, "Coach")
per_task = {}
for r in summary["runs"]:
    for label in ("before", "after"):
        try:
            report = json.load(open(f"{r['run']}/eval_{label}.json"))
        except (OSError, ValueError):
            continue
        for task, m in report.get("per_task", {}).items():
            per_task.setdefault(task, {}).setdefault(label, []).append(m["success_rate"])
if per_task:
    print("\n| task | before | after (per seed) |")
    print("|---|---|---|")
    for task, m in sorted(per_task.items()):
        before = m.get("before", [float("nan")])[0]
        after = " / ".join(f"{100 * v:.0f}%" for v in m.get("after", []))
        print(f"| {task} | {100 * before:.0f}% | {after} |")
for key in ("before", "after", "gain", "sampled_before", "sampled_after", "sampled_gain"):
    s = summary.get(key)
    if s:
        print(f"{key:>14}: mean {100 * s['mean']:.1f}%  std {100 * s['std']:.1f}")
if "sampled_gain_exceeds_twice_spread" in summary:
    verdict = "exceeds" if summary["sampled_gain_exceeds_twice_spread"] else "does NOT exceed"
    every = "positive on every seed" if summary["sampled_gain_positive_every_run"] else "NOT positive on every seed"
    print(f"sampled: mean gain {100 * summary['sampled_gain']['mean']:+.1f} points {verdict} twice the spread across "
          f"seeds (2 x {100 * summary['sampled_spread']:.1f} points), {every}")
if "gain_exceeds_spread" in summary:
    verdict = "exceeds" if summary["gain_exceeds_spread"] else "does NOT exceed"
    print(f"greedy: mean gain {100 * summary['gain']['mean']:+.1f} points {verdict} the spread across seeds "
          f"({100 * summary['spread']:.1f} points)")
lost = summary.get("tasks_lost")
if lost is not None:
    print("tasks the warm-up solved (greedy, every instance) and a run lost: " + (", ".join(lost) or "none"))
if sys.argv[3]:
    other = json.load(open(sys.argv[4]))
    print(f"\n{sys.argv[3]} from the same warm-up on the same env steps ({int(sys.argv[5]) // 60} min "
          f"{int(sys.argv[5]) % 60} s):")
    table(other, sys.argv[3])
    for key in ("sampled_gain", "gain"):
        a, b = summary.get(key), other.get(key)
        if a and b:
            print(f"{key:>14}: Coach {100 * a['mean']:+.1f} +- {100 * a['std']:.1f}, {sys.argv[3]} "
                  f"{100 * b['mean']:+.1f} +- {100 * b['std']:.1f} points")
print(f"summary: {sys.argv[1]}; per-run reports: <run>/report.md")
PY
