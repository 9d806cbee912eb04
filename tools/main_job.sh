#!/usr/bin/env bash
# The main job: set up the workspace, then play tasks on the embedded simulated phone with the
# scripted expert and a random agent, and record one episode as an animated GIF under out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
mkdir -p out
.venv/bin/android-gym tasks --suite sim | tail -n 5
.venv/bin/android-gym play --agent expert --episodes 5 --seed 0
.venv/bin/android-gym play --agent random --episodes 5 --seed 0
.venv/bin/android-gym play SystemWifiTurnOff --agent expert --record out/expert_wifi.gif
