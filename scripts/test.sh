#!/usr/bin/env bash
# The test suite: import contracts, lint, and every test (SQLite and PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# The Airflow client's and airflowctl's scratch virtualenvs (.venv-clients/) install from PyPI
# while the rest is set up and linted; the tests that use them wait for it (a file lock).
.venv/bin/python tests/integration/api/airflow_client_harness.py >/dev/null &
# The browser tests drive Debian's Chromium (never a browser downloaded by Playwright).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null
fi
# The ssh and sftp provider tests start Debian's OpenSSH server.
if [ ! -x /usr/sbin/sshd ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq openssh-server >/dev/null
fi
# The docker provider tests start Podman's Docker-API service (runc: crun refuses hybrid cgroups)
# with an image made from Debian's static busybox.
if [ ! -x /usr/bin/podman ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq podman runc busybox-static >/dev/null
fi
.venv/bin/lint-imports
.venv/bin/ruff check src tests bench
.venv/bin/mypy --strict src/statewright/core src/statewright/db
# Two test processes (STATEWRIGHT_TEST_WORKERS): most tests wait on the processes, servers
# and databases they start, so two share two cores well; each has its own databases.
# The slowest tests are listed at the end, so that a slower suite shows where its time went.
.venv/bin/python -m pytest -p no:cacheprovider -n "${STATEWRIGHT_TEST_WORKERS:-2}" \
  --durations=25 "$@"
