#!/usr/bin/env bash
# The main job: train an Android agent with Android Coach on the simulated phone, on this machine's CPU.
#
# For each of 3 seeds (in parallel, one torch thread each): build a tiny Qwen2 policy locally (tokenizer
# trained on the sim's expert demonstrations), a short SFT warm-up on those demonstrations, a greedy
# evaluation on held-out task instances (unseen seeds), Android Coach training (rollouts -> returns ->
# critic -> K actions per stored state scored by the critic, ACLOO, PPO clip), and the same evaluation
# again. Then `coach-rl summarize` prints before/after success (mean and std over seeds) and whether the
# gain exceeds the spread across seeds. Each run folder has report.md and plots/; re-running this script
# resumes unfinished runs from their checkpoints (also after kill -9).
#
# Environment: SEEDS (default "0 1 2"), OUT (default runs/main_job), CONFIG (default main),
# EXTRA (more key=value overrides for every run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
export OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
SEEDS=${SEEDS:-"0 1 2"}
OUT=${OUT:-runs/main_job}
CONFIG=${CONFIG:-main}
EXTRA=${EXTRA:-}
mkdir -p "$OUT"
start=$(date +%s)
pids=()
runs=()
for seed in $SEEDS; do
  run="$OUT/seed$seed"
  runs+=("$run")
  # shellcheck disable=SC2086
  .venv/bin/coach-rl train --config "$CONFIG" "seed=$seed" "output_dir=$run" $EXTRA --no-progress \
    > "$OUT/seed$seed.log" 2>&1 &
  pids+=($!)
  echo "seed $seed: training in $run (log: $OUT/seed$seed.log)"
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
