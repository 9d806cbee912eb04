#!/usr/bin/env bash
# Create (or update) the workspace virtualenv in .venv with the three packages installed editable.
# Idempotent: a second run only checks what is there. torch is pinned to the CPU build on local disk
# (asking for any other torch downloads gigabytes of CUDA wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.android-coach-setup
# The C reader is compiled next to its source by the editable install: a change to it means a new install.
want=$(cat packages/*/pyproject.toml tools/requirements-dev.txt tools/setup_env.sh packages/android-gym/hatch_build.py \
  packages/android-gym/src/android_gym/xml/_speedups.c | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q -r tools/requirements-dev.txt \
  -e "packages/android-gym[adb,androidlab]" -e packages/coach-reward -e "packages/coach-rl[tensorboard]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import android_gym, coach_reward, coach_rl, torch; assert torch.__version__.startswith('2.13')"
echo "$want" > "$stamp"
