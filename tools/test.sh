#!/usr/bin/env bash
# Set up the workspace and run the whole test suite (lint first). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh
.venv/bin/ruff check packages tools tests
.venv/bin/python -m pytest -q -p no:cacheprovider --timeout=900 "$@"
