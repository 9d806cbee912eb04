#!/usr/bin/env bash
# Set up the workspace and run the whole test suite (lint first). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
.venv/bin/ruff check packages tools tests
# Our runs must exercise android-gym's optional C reader, not silently fall back to Python without it.
export ANDROID_GYM_REQUIRE_SPEEDUPS=1
# One pytest-xdist worker per core (at most 4): every test runs one torch thread (tests/conftest.py), so on the
# 2-core machine two workers take about half the time of one. TEST_WORKERS=0 runs in this process (a debugger, -x).
workers=${TEST_WORKERS:-$(nproc)}; [ "$workers" -le 4 ] || workers=4
.venv/bin/python -m pytest -q -p no:cacheprovider --timeout=900 --durations=25 -n "$workers" --dist loadgroup "$@"
