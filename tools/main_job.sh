#!/usr/bin/env bash
# The main job: train an Android agent with Android Coach on the simulated phone, on this machine's CPU, with the
# paper's whole pipeline at tiny scale.
#
# 0. The process reward model (shared by all seeds): PRM data from the simulated phone's expert episodes
#    (candidates labelled by action match, balanced), a tiny PRM trained with coach-reward, its held-out
#    accuracy printed (`coach-reward demo --size ci`).
# 1. Warm-up (`coach-rl warmup`, shared by all seeds): build a tiny Qwen2 policy locally (tokenizer trained
#    on the sim's expert demonstrations), a short SFT on those demonstrations, pre-train the critic on the
#    PRM's labels of sampled actions (paper Appendix B), evaluate greedily on held-out task instances.
# 2. For each of 3 seeds, in parallel (one torch thread each): Android Coach from the warm-up checkpoint
#    (rollouts -> the PRM's step rewards (w_p = 0.2) and the task's rule check (w_o = 1) -> returns -> critic
#    update -> K actions per stored state scored by the critic, ACLOO, PPO clip), then the same evaluation.
# 3. `coach-rl summarize`: before/after success (mean and std over seeds) and whether the gain exceeds the
#    spread across seeds. Each run folder has report.md and plots/; re-running this script resumes
#    unfinished runs from their checkpoints (also after kill -9).
#
# Environment: SEEDS (default "0 1 2"), OUT (default runs/main_job), CONFIG (default main),
# EXTRA (more key=value overrides for every run), PRM (default: train one into $OUT/prm; "none": no PRM).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
export OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
SEEDS=${SEEDS:-"0 1 2"}
OUT=${OUT:-runs/main_job}
CONFIG=${CONFIG:-main}
EXTRA=${EXTRA:-}
PRM=${PRM:-$OUT/prm}
mkdir -p "$OUT"
start=$(date +%s)
# 0. the process reward model, shared by every run: PRM data from the simulated phone, a tiny PRM
REWARDS=""
if [ "$PRM" != "none" ]; then
  if [ ! -f "$PRM/prm_config.json" ]; then
    echo "PRM: data from the simulated phone, a tiny PRM trained with coach-reward (log: $OUT/prm.log)"
    # the run's own tasks stay in the PRM's training data (the paper trains its PRM on the benchmark's trajectories);
    # a quarter of the other tasks is held out to measure it
    tasks=$(.venv/bin/python -c "from coach_rl.configs import load_config; print(','.join(load_config('$CONFIG').coach.tasks or []))" 2>/dev/null)
    .venv/bin/coach-reward demo --size ci --seed 0 --output "$PRM" --train-tasks "$tasks" --quiet > "$OUT/prm.log" 2>&1 || {
      echo "training the PRM failed; the end of its log:" >&2; tail -n 30 "$OUT/prm.log" >&2; exit 1; }
  fi
  grep -m1 "held-out accuracy" "$OUT/prm.log" 2>/dev/null | sed 's/^/PRM: /' || true
  REWARDS="use_prm=true prm_model=$PRM prm_max_new_tokens=20 critic_pretrain_labels=prm"
fi
# 1. the warm-up, shared by every seed (one core): tiny policy, SFT, critic pre-training, evaluation before
labels=$([ -n "$REWARDS" ] && echo "the PRM's labels" || echo "action-match labels")
echo "warm-up: policy, SFT, critic pre-training on $labels, evaluation before (log: $OUT/warmup.log)"
# shellcheck disable=SC2086
.venv/bin/coach-rl warmup --config "$CONFIG" "seed=0" "output_dir=$OUT/warmup" $REWARDS $EXTRA > "$OUT/warmup.log" 2>&1 || {
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
.venv/bin/python - "$OUT/summary.json" "$((end - start))" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
wall = int(sys.argv[2])
print(f"\nAndroid Coach main job: {len(summary['runs'])} seeds, {wall // 60} min {wall % 60} s wall time")
print("| seed run | success before | success after | gain | env steps |")
print("|---|---|---|---|---|")
for r in summary["runs"]:
    b, a = r.get("before", {}), r.get("after", {})
    print(f"| {r['run']} | {100 * b.get('success_rate', float('nan')):.1f}% | {100 * a.get('success_rate', float('nan')):.1f}% "
          f"| {100 * r.get('gain', float('nan')):+.1f} | {r['env_steps']} |")
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
for key in ("before", "after", "gain"):
    s = summary[key]
    if s:
        print(f"{key:>6}: mean {100 * s['mean']:.1f}%  std {100 * s['std']:.1f}")
if "gain_exceeds_spread" in summary:
    verdict = "exceeds" if summary["gain_exceeds_spread"] else "does NOT exceed"
    print(f"mean gain {100 * summary['gain']['mean']:+.1f} points {verdict} the spread across seeds "
          f"({100 * summary['spread']:.1f} points)")
print(f"summary: {sys.argv[1]}; per-run reports: <run>/report.md")
PY
