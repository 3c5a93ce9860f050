"""``statewright api-server`` serves the API and the UI; a port in use is a clear error."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from statewright.cli.main import cli


def _env(tmp_path: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}
    env.update(STATEWRIGHT_HOME=str(tmp_path / "home"),
               STATEWRIGHT_DAGS_FOLDER=str(tmp_path / "dags"), STATEWRIGHT_API_PORT=str(port))
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_api_server_command_serves_the_api_and_the_ui(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "statewright.cli.main", "api-server", "--port", str(port)],
        env=_env(tmp_path, 1), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        health = None
        while time.monotonic() < deadline:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert health is not None and health.status_code == 200, "the server did not answer"
        assert health.json()["metadatabase"]["status"] == "healthy"
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert page.status_code == 200 and "statewright" in page.text
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}/" in out


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        res = CliRunner().invoke(cli, ["api-server", "--port", str(port)],
                                 env=_env(tmp_path, port))
    assert res.exit_code == 1
    assert f"Cannot serve the API on 127.0.0.1:{port}" in res.output
    assert "STATEWRIGHT_API_PORT" in res.output
