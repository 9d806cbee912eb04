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
want=$(cat packages/*/pyproject.toml tools/requirements-dev.txt tools/constraints.txt tools/setup_env.sh packages/android-gym/hatch_build.py \
  packages/android-gym/src/android_gym/xml/_speedups.c | sha256sum | cut -c1-16)
# pip, quiet; android_world's own pins (numpy 1.26, protobuf 5, ...) are not followed on purpose (see below).
pip_quiet() {
  .venv/bin/python -m pip install -q "$@" 2>&1 | grep -v -e "^WARNING: Location" -e "^android-world .* requires" \
    -e "^ERROR: pip's dependency resolver" -e "BuildBackendWarning" -e "requires protobuf" -e "^    return\|^    corresp" || true
}
# Every version comes from tools/constraints.txt (what the main job and the tests were measured with): a fresh
# machine resolves exactly the same set, and tests/test_pinned_versions.py fails when the workspace drifts from it.
PIN=(-c tools/constraints.txt)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  pip_quiet --upgrade pip
  pip_quiet "${PIN[@]}" "torch==2.13.0"
  pip_quiet "${PIN[@]}" -r tools/requirements-dev.txt \
    -e "packages/android-gym[adb,androidlab,video,parquet]" -e packages/coach-reward -e "packages/coach-rl[tensorboard]"
  .venv/bin/python -c "import android_gym, coach_reward, coach_rl, torch; assert torch.__version__.startswith('2.13')"
  echo "$want" > "$stamp"
fi

# AndroidLab's offline evaluator (../shared/vendor/android_lab) is run by a test on the traces AndroidLab-v0
# exports; these are the packages its evaluator modules import (their LLM clients are imported, never called).
lab_src=../shared/vendor/android_lab
lab_stamp=.venv/.android-lab-evaluator
if [ -d "$lab_src" ] && [ "$(cat "$lab_stamp" 2>/dev/null)" != "$want" ]; then
  pip_quiet "${PIN[@]}" jsonlines xmltodict backoff openai zhipuai pyshine colorama tqdm opencv-python-headless pyyaml
  echo "$want" > "$lab_stamp"
fi

# AndroidWorld's own package (not on PyPI) from the vendored copy next to the checkout, with the recipe of its
# VENDORED.md: the tests run its task code on the simulated phone. It is built from a temporary copy because
# its setup.py writes generated protobuf modules into the source folder, which is read-only input.
aw_src=../shared/vendor/android_world
if [ ! -d "$aw_src" ]; then
  echo "setup_env: $aw_src not found; android_world is not installed (its tests will be skipped)"
  exit 0
fi
aw_stamp=.venv/.android-world-setup
aw_want=$(cat "$aw_src/VENDORED.md" "$aw_src/setup.py" "$aw_src/pyproject.toml" "$stamp" | sha256sum | cut -c1-16)
if [ -f "$aw_stamp" ] && [ "$(cat "$aw_stamp")" = "$aw_want" ]; then
  exit 0
fi
echo "setup_env: installing android_world from $aw_src"
aw_build=$(mktemp -d)
trap 'rm -rf "$aw_build"' EXIT
cp -r "$aw_src/setup.py" "$aw_src/pyproject.toml" "$aw_src/android_world" "$aw_build/"
# Its build needs grpcio-tools 1.71, which holds protobuf below 6 (tensorboard needs 6+): put protobuf back after.
protobuf=$(.venv/bin/python -c "from importlib.metadata import version; print(version('protobuf'))" 2>/dev/null || true)
pip_quiet "setuptools<81" "grpcio-tools==1.71.0" wheel
# --no-deps: its pyproject pins numpy 1.26, pandas 2.1 and protobuf 5 (which tensorboard refuses); the packages
# its tasks import come from the recipe's list, unpinned, so the rest of the workspace keeps its versions.
pip_quiet --no-build-isolation --no-deps "$aw_build"
pip_quiet "${PIN[@]}" "android_env==1.2.3" dm_env absl-py fuzzywuzzy immutabledict jsonschema pandas pydub tenacity termcolor \
  requests opencv-python-headless python-Levenshtein pillow matplotlib
.venv/bin/python -m pip uninstall -q -y grpcio-tools 2>&1 | grep -v "^WARNING" || true
if [ -n "$protobuf" ]; then pip_quiet "protobuf==$protobuf"; fi
.venv/bin/python -W ignore -c "from android_world import registry; r = registry.TaskRegistry()
n = len(r.get_registry(r.ANDROID_WORLD_FAMILY)); assert n == 116, n"
echo "$aw_want" > "$aw_stamp"
