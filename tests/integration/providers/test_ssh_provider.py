"""SSHHook and SSHOperator against a real OpenSSH server (servers.sshd)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
from servers import SshServer, run_airflow_dag

from statewright.core.errors import StatewrightError
from statewright.providers.ssh.hooks.ssh import SSHHook


@pytest.fixture
def ssh_conn(sshd: SshServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STATEWRIGHT_CONN_SSH_TEST", sshd.uri(key_file=str(sshd.key_file)))
    return "ssh_test"


def test_hook_runs_a_command_and_returns_status_and_both_streams(ssh_conn: str) -> None:
    hook = SSHHook(ssh_conn_id=ssh_conn)
    with hook.get_conn() as client:
        status, out, err = hook.exec_ssh_client_command(
            client, "echo hello; echo $GREETING-env; echo oops >&2; exit 3",
            get_pty=False, environment=None)
    assert (status, out, err) == (3, b"hello\n-env\n", b"oops\n")


def test_private_key_in_the_extra_and_a_wrong_key_refused(
        sshd: SshServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    extra = json.dumps({"private_key": sshd.private_key, "look_for_keys": False})
    monkeypatch.setenv("STATEWRIGHT_CONN_SSH_PK", json.dumps({
        "conn_type": "ssh", "host": "127.0.0.1", "port": sshd.port, "login": sshd.user,
        "extra": extra}))
    hook = SSHHook(ssh_conn_id="ssh_pk")
    with hook.get_conn() as client:
        assert hook.exec_ssh_client_command(client, "echo ok", False, None)[1] == b"ok\n"
    import subprocess

    import paramiko

    wrong = tmp_path / "wrong_key"  # a key the server does not know: authentication fails
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(wrong)], check=True)
    monkeypatch.setenv("STATEWRIGHT_CONN_SSH_WRONG",
                       sshd.uri(key_file=str(wrong), look_for_keys="false"))
    with pytest.raises(paramiko.AuthenticationException):
        SSHHook(ssh_conn_id="ssh_wrong", conn_timeout=5).get_conn()


def test_a_command_past_cmd_timeout_fails(ssh_conn: str) -> None:
    hook = SSHHook(ssh_conn_id=ssh_conn, cmd_timeout=0.5)
    started = time.monotonic()
    with hook.get_conn() as client, pytest.raises(StatewrightError, match="timed out"):
        hook.exec_ssh_client_command(client, "sleep 60", False, None)
    # Cut short: a command that ran to its end would have taken a minute.
    assert time.monotonic() - started < 30


DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.ssh.hooks.ssh import SSHHook
from airflow.providers.ssh.operators.ssh import SSHOperator

with DAG("ssh_dag", schedule=None, start_date=datetime(2026, 1, 1)) as dag:
    ok = SSHOperator(task_id="ok", ssh_conn_id="ssh_test",
                     command="echo run={{ run_id }} v=$COLOUR", environment={"COLOUR": "red"})
    fails = SSHOperator(task_id="fails", ssh_conn_id="ssh_test", command="exit 4")
    skips = SSHOperator(task_id="skips", ssh_hook=SSHHook(ssh_conn_id="ssh_test"),
                        command="exit 99", skip_on_exit_code=99)
'''


def test_ssh_operator_in_an_airflow_dag_file(
        ssh_conn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_airflow_dag(tmp_path, monkeypatch, DAG_FILE, "ssh_dag", run_id="r1")
    assert result.states == {"ok": "success", "fails": "failed", "skips": "skipped"}
    # The output is pushed base64-encoded, as Airflow does.
    out = base64.b64decode(result.ti("ok").return_value).decode()
    assert out.startswith("run=r1 v=")  # sshd passes no environment it does not accept
    assert "exit status = 4" in (result.ti("fails").state_message or "")
