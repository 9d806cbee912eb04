#!/usr/bin/env bash
# Set up the workspace and run the whole test suite (lint first). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
.venv/bin/ruff check packages tools tests
# Our runs must exercise android-gym's optional C reader, not silently fall back to Python without it.
export ANDROID_GYM_REQUIRE_SPEEDUPS=1
.venv/bin/python -m pytest -q -p no:cacheprovider --timeout=900 --durations=25 "$@"
