"""Real servers for the provider tests, started by the tests on 127.0.0.1 ephemeral ports.

- ``sshd``: Debian's OpenSSH server (``/usr/sbin/sshd -D``) with its own config, a temporary host
  key and an authorized key for the user running the tests (SSH and SFTP);
- ``smtpd``: an ``aiosmtpd`` server keeping every message it receives (plain, with AUTH LOGIN/PLAIN
  accepted for one user without TLS);
- ``s3_server``: ``moto`` in server mode (``ThreadedMotoServer``), an S3-compatible endpoint.

A server that cannot start skips its tests, except under ``CI=true`` where it fails them.
The fixtures are session-scoped: the test modules share one server of each kind.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

SSHD = "/usr/sbin/sshd"
SMTP_USER = "mailer"
SMTP_PASSWORD = "s3cret-smtp-pw"
AWS_KEY_ID = "testing-key-id"
AWS_SECRET = "testing-secret-key"


def unavailable(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (a server is required under CI=true)")
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes] | None = None,
                  timeout: float = 120.0) -> bool:
    """Whether a server listens on ``port``; ``timeout`` only ends a wait for one that never
    does (a loaded machine may take many seconds to start one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)  # polling a server's start: no event to wait on
    return False


# -- sshd ---------------------------------------------------------------------------------------


@dataclass
class SshServer:
    port: int
    user: str
    key_file: Path
    private_key: str
    root: Path

    def uri(self, conn_type: str = "ssh", **extra: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in extra.items())
        return f"{conn_type}://{self.user}@127.0.0.1:{self.port}" + (f"?{query}" if query else "")


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True, capture_output=True)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    if not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None:
        unavailable(f"{SSHD} is not installed (apt-get install -y openssh-server)")
    base = tmp_path_factory.mktemp("sshd")
    _keygen(base / "host_key")
    _keygen(base / "client_key")
    (base / "authorized_keys").write_text((base / "client_key.pub").read_text())
    os.chmod(base / "authorized_keys", 0o600)
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege separation directory
    port = free_port()
    config = base / "sshd_config"
    config.write_text("\n".join([
        "ListenAddress 127.0.0.1", f"HostKey {base / 'host_key'}", f"PidFile {base / 'sshd.pid'}",
        f"AuthorizedKeysFile {base / 'authorized_keys'}", "StrictModes no", "UsePAM no",
        "PermitRootLogin prohibit-password", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "Subsystem sftp internal-sftp", "LogLevel ERROR", ""]))
    log = base / "sshd.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config), "-p", str(port)],
                                stdout=subprocess.DEVNULL, stderr=sink)
    try:
        if not wait_for_port(port, proc):
            unavailable(f"sshd did not start on port {port}: {log.read_text().strip()}")
        root = base / "files"
        root.mkdir()
        yield SshServer(port=port, user=getpass.getuser(), key_file=base / "client_key",
                        private_key=(base / "client_key").read_text(), root=root)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# -- SMTP ---------------------------------------------------------------------------------------


@dataclass
class SmtpServer:
    port: int
    messages: list[tuple[str, list[str], Message]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)

    def clear(self) -> None:
        self.messages.clear()
        self.logins.clear()

    def uri(self, *, login: bool = False, **extra: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in
                         {"disable_ssl": "true", "disable_tls": "true", **extra}.items())
        auth = f"{SMTP_USER}:{SMTP_PASSWORD}@" if login else ""
        return f"smtp://{auth}127.0.0.1:{self.port}?{query}"


class _Keeper:
    def __init__(self, server: SmtpServer) -> None:
        self.server = server

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = message_from_bytes(envelope.original_content or envelope.content)
        self.server.messages.append((envelope.mail_from, list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"


@pytest.fixture(scope="session")
def smtpd() -> Iterator[SmtpServer]:
    try:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult
    except ImportError as exc:
        unavailable(f"aiosmtpd is not installed: {exc}")
    server = SmtpServer(port=free_port())

    def authenticate(smtp: Any, session: Any, envelope: Any, mechanism: str,
                     auth_data: Any) -> Any:
        ok = (getattr(auth_data, "login", None) == SMTP_USER.encode()
              and getattr(auth_data, "password", None) == SMTP_PASSWORD.encode())
        if ok:
            server.logins.append(SMTP_USER)
        return AuthResult(success=ok, handled=False)

    controller = Controller(_Keeper(server), hostname="127.0.0.1", port=server.port,
                            authenticator=authenticate, auth_require_tls=False)
    try:
        controller.start()
    except Exception as exc:
        unavailable(f"the SMTP server did not start: {exc}")
    try:
        yield server
    finally:
        controller.stop()


# -- S3 (moto) ----------------------------------------------------------------------------------


@dataclass
class S3Server:
    endpoint_url: str

    def conn_json(self, **extra: Any) -> str:
        import json

        return json.dumps({"conn_type": "aws", "login": AWS_KEY_ID, "password": AWS_SECRET,
                           "extra": {"endpoint_url": self.endpoint_url,
                                     "region_name": "us-east-1", **extra}})

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name="us-east-1",
                            aws_access_key_id=AWS_KEY_ID, aws_secret_access_key=AWS_SECRET)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    try:
        from moto.server import ThreadedMotoServer
    except ImportError as exc:
        unavailable(f"moto[server] is not installed: {exc}")
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    try:
        server.start()
    except Exception as exc:
        unavailable(f"the moto S3 server did not start: {exc}")
    if not wait_for_port(port):
        unavailable(f"the moto S3 server did not listen on port {port}")
    try:
        yield S3Server(endpoint_url=f"http://127.0.0.1:{port}")
    finally:
        server.stop()


# -- Airflow-style DAG files --------------------------------------------------------------------


def run_airflow_dag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str,
                    dag_id: str, **test_kwargs: Any) -> Any:
    """Write ``source`` (an Airflow DAG file importing ``airflow.*``) to a file, load it under
    the compat layer and run ``dag.test()``; returns its result."""
    from statewright.sdk.loader import load_dag_file

    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    path = tmp_path / f"{dag_id}.py"
    path.write_text(source)
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    return loaded.dags[dag_id].test(**test_kwargs)


# -- Cloud Storage (gcp-storage-emulator) -------------------------------------------------------

GCS_PROJECT = "test-project"


@dataclass
class GcsServer:
    """``gcp-storage-emulator`` in memory; the google tests point ``STORAGE_EMULATOR_HOST`` at
    ``endpoint_url`` (as the client library reads it)."""

    endpoint_url: str
    server: Any

    def conn_json(self, **extra: Any) -> str:
        import json

        return json.dumps({"conn_type": "google_cloud_platform",
                           "extra": {"project": GCS_PROJECT, **extra}})

    def client(self) -> Any:
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        return storage.Client(project=GCS_PROJECT, credentials=AnonymousCredentials(),
                              client_options={"api_endpoint": self.endpoint_url})


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[GcsServer]:
    try:
        from gcp_storage_emulator.server import create_server
    except ImportError as exc:
        unavailable(f"gcp-storage-emulator is not installed: {exc}")
    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    try:
        server.start()
    except Exception as exc:
        unavailable(f"the Cloud Storage emulator did not start: {exc}")
    if not wait_for_port(port):
        unavailable(f"the Cloud Storage emulator did not listen on port {port}")
    try:
        yield GcsServer(endpoint_url=f"http://127.0.0.1:{port}", server=server)
    finally:
        server.stop()
