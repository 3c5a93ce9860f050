#!/usr/bin/env bash
# Creates .venv (if missing) and installs statewright into it: with its development tools
# (the test command) or, given `server`, only what the server needs (the main command).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
target='.[dev]'
[ "${1:-}" = server ] && target='.'
if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv with $("$PYTHON" --version) ..."
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi
if [ "${1:-}" = server ]; then
  # Each package is named as it is fetched, so a first install shows it is moving.
  echo "Installing statewright into .venv (the first time takes a minute or two) ..."
  .venv/bin/python -m pip install --progress-bar on -e "$target" \
    | { grep --line-buffered -E '^(Collecting|Successfully installed)' || true; }
else
  .venv/bin/python -m pip install --quiet -e "$target"
fi
# Compiled once here: every process (servers, CLI commands, task processes) then reads the
# bytecode rather than compiling statewright's modules again, also where the environment sets
# PYTHONDONTWRITEBYTECODE (a stale file is ignored by Python and compiled in memory as before).
.venv/bin/python -m compileall -q -j 0 src/statewright >/dev/null || true
