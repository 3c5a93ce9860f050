#!/usr/bin/env bash
# The main job: scheduler, executor and DAG processor on SQLite, with the example DAGs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh server
exec .venv/bin/statewright standalone --examples "$@"
