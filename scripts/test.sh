#!/usr/bin/env bash
# The test suite: import contracts, lint, and every test (SQLite and PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/lint-imports
.venv/bin/ruff check src tests bench
.venv/bin/python -m pytest -p no:cacheprovider "$@"
