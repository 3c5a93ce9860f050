"""The official Airflow client in a scratch virtualenv (``.venv-clients/``, reused between runs;
installed from PyPI by the first test that needs it) and Airflow's OpenAPI document it ships.

``python tests/integration/api/airflow_client_harness.py`` installs both scratch virtualenvs
(the client's and airflowctl's): the test script starts it in the background while the linters
run, and the tests that need a virtualenv wait for it on the same file lock."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from statewright.api.server import make_server
from statewright.config import Settings

ROOT = Path(__file__).resolve().parents[3]
CLIENT_REQUIREMENT = "apache-airflow-client==3.3.*"
CLIENT_VENV = ROOT / ".venv-clients" / "airflow-client-3.3"
CTL_REQUIREMENT = "apache-airflow-ctl==0.1.*"
CTL_VENV = ROOT / ".venv-clients" / "airflowctl-0.1"
INSTALLED = "statewright-installed"
"""A file in the virtualenv naming the requirement once pip has installed it: reading it
replaces importing the client (1-2 s of CPU) in every test module that needs it."""
CALLS = Path(__file__).with_name("airflow_client_calls.py")


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _works(venv: Path, requirement: str, module: str) -> bool:
    """Is ``requirement`` installed in ``venv``? Its marker says so; a virtualenv made before
    the marker existed is probed once by importing ``module``."""
    python, marker = _python(venv), venv / INSTALLED
    if not python.exists():
        return False
    if marker.exists():
        return marker.read_text() == requirement
    probe = subprocess.run([str(python), "-c", f"import {module}"],
                           capture_output=True, timeout=120)
    if probe.returncode == 0:
        marker.write_text(requirement)
    return probe.returncode == 0


def client_python() -> Path:
    """The client venv's interpreter, installing it when missing. A failed install skips,
    except under ``CI=true`` where it fails."""
    return scratch_python(CLIENT_VENV, CLIENT_REQUIREMENT, "airflow_client.client")


def scratch_python(venv: Path, requirement: str, module: str) -> Path:
    """The interpreter of ``venv`` under ``.venv-clients/`` with ``requirement`` installed from
    PyPI (once; ``module`` importable tells it is there). A failed install skips, except
    under ``CI=true`` where it fails."""
    venv.parent.mkdir(exist_ok=True)
    with open(venv.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # test processes running at once install it once
        return _install(venv, requirement, module)


def _install(venv: Path, requirement: str, module: str) -> Path:
    python = _python(venv)
    if _works(venv, requirement, module):
        return python
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True,
                       capture_output=True, timeout=120)
        subprocess.run([str(python), "-m", "pip", "install", "-q", requirement],
                       check=True, capture_output=True, timeout=600)
    except (subprocess.SubprocessError, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        message = f"cannot install {requirement}: {exc} {detail.decode()[-2000:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    (venv / INSTALLED).write_text(requirement)
    return python


def airflow_openapi(python: Path) -> dict[str, Any]:
    """Airflow's ``/api/v2`` OpenAPI document as the installed client ships it (v2.yaml)."""
    where = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    import yaml

    return yaml.safe_load((Path(where) / "v2.yaml").read_text())  # type: ignore[no-any-return]


def run_calls(python: Path, url: str, username: str, password: str, *args: str
              ) -> dict[str, Any]:
    done = subprocess.run([str(python), str(CALLS), url, username, password, *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@contextmanager
def serving(engine: Engine, settings: Settings) -> Iterator[str]:
    """A real API server on a free 127.0.0.1 port until the block ends; yields its URL."""
    server = make_server(engine, settings, host="127.0.0.1", port=0)
    thread = server.start_thread()
    url = server.url.rstrip("/")
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/api/v2/monitor/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the API server did not start"
        time.sleep(0.05)
    try:
        yield url
    finally:
        server.stop()
        thread.join(10)


if __name__ == "__main__":
    for venv, requirement, module in ((CLIENT_VENV, CLIENT_REQUIREMENT, "airflow_client.client"),
                                      (CTL_VENV, CTL_REQUIREMENT, "airflowctl")):
        try:
            scratch_python(venv, requirement, module)
        except BaseException as exc:  # the tests try again and report it (pytest's skip too)
            print(f"{requirement}: {exc}", file=sys.stderr)
