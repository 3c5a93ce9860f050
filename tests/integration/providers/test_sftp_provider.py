"""SFTPHook, SFTPOperator and SFTPSensor against a real OpenSSH server's SFTP (servers.sshd)."""

from __future__ import annotations

import datetime
import io
from pathlib import Path
from typing import Any

import pytest
from servers import SshServer, run_airflow_dag

from statewright.providers.sftp.hooks.sftp import SFTPHook
from statewright.providers.sftp.sensors.sftp import SFTPSensor


@pytest.fixture
def sftp_conn(sshd: SshServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STATEWRIGHT_CONN_SFTP_DEFAULT",
                       sshd.uri("sftp", key_file=str(sshd.key_file)))
    return "sftp_default"


def test_hook_stores_lists_describes_retrieves_and_deletes(
        sftp_conn: str, sshd: SshServer, tmp_path: Path) -> None:
    base = str(sshd.root / "hook")
    local = tmp_path / "in.txt"
    local.write_text("payload")
    with SFTPHook() as hook:
        hook.create_directory(f"{base}/a/b")
        assert hook.isdir(f"{base}/a/b") and not hook.isfile(f"{base}/a/b")
        hook.create_directory(f"{base}/a/b")  # exists: nothing to do
        hook.store_file(f"{base}/a/one.csv", str(local))
        hook.store_file(f"{base}/a/two.txt", io.BytesIO(b"from a buffer"))
        assert hook.list_directory(f"{base}/a") == ["b", "one.csv", "two.txt"]
        described = hook.describe_directory(f"{base}/a")
        assert described["one.csv"]["size"] == 7 and described["one.csv"]["type"] == "file"
        assert described["b"]["type"] == "dir"
        assert len(described["one.csv"]["modify"]) == 14
        assert hook.path_exists(f"{base}/a/one.csv")
        assert not hook.path_exists(f"{base}/a/none.csv")
        assert hook.get_files_by_pattern(f"{base}/a", "*.csv") == ["one.csv"]
        out = tmp_path / "out.txt"
        hook.retrieve_file(f"{base}/a/two.txt", str(out))
        assert out.read_bytes() == b"from a buffer"
        hook.delete_file(f"{base}/a/two.txt")
        assert not hook.path_exists(f"{base}/a/two.txt")
        hook.delete_directory(f"{base}/a", include_files=True)
        assert hook.list_directory(base) == []
    assert hook.conn is None  # the with block closed the connection


def test_sensor_pattern_and_newer_than(sftp_conn: str, sshd: SshServer) -> None:
    folder = sshd.root / "sensed"
    folder.mkdir()
    context: dict[str, Any] = {}
    pattern = SFTPSensor(task_id="p", path=str(folder), file_pattern="*.done")
    assert pattern.poke(context) is False
    (folder / "x.tmp").write_text("")
    assert pattern.poke(context) is False
    (folder / "x.done").write_text("")
    assert pattern.poke(context) is True
    future = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
    newer = SFTPSensor(task_id="n", path=str(folder / "x.done"), newer_than=future)
    assert newer.poke(context) is False
    past = (future - datetime.timedelta(hours=3)).isoformat()
    assert SFTPSensor(task_id="n2", path=str(folder / "x.done"), newer_than=past).poke(context)
    called = SFTPSensor(task_id="c", path=str(folder), file_pattern="*.done",
                        python_callable=lambda n: n * 2, op_args=[21]).poke(context)
    assert called.xcom_value == {"files_found": [f"{folder}/x.done"],  # type: ignore[union-attr]
                                 "decorator_return_value": 42}


DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.sftp.operators.sftp import SFTPOperator
from airflow.providers.sftp.sensors.sftp import SFTPSensor

with DAG("sftp_dag", schedule=None, start_date=datetime(2026, 1, 1)) as dag:
    put = SFTPOperator(task_id="put", ssh_conn_id="sftp_default", operation="put",
                       local_filepath="LOCAL/report.csv",
                       remote_filepath="REMOTE/{{ run_id }}/deep/report.csv",
                       create_intermediate_dirs=True)
    wait = SFTPSensor(task_id="wait", path="REMOTE/{{ run_id }}/deep", file_pattern="*.csv",
                      poke_interval=1, timeout=30)
    get = SFTPOperator(task_id="get", ssh_conn_id="sftp_default", operation="get",
                       local_filepath=["LOCAL/back/a.csv"],
                       remote_filepath=["REMOTE/{{ run_id }}/deep/report.csv"],
                       create_intermediate_dirs=True)
    missing = SFTPOperator(task_id="missing", ssh_conn_id="sftp_default", operation="get",
                           local_filepath="LOCAL/none.csv", remote_filepath="REMOTE/none.csv")
    put >> wait >> get
'''


def test_sftp_operator_and_sensor_in_an_airflow_dag_file(
        sftp_conn: str, sshd: SshServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "local"
    local.mkdir()
    (local / "report.csv").write_text("a,b\n1,2\n")
    remote = sshd.root / "dagrun"
    source = DAG_FILE.replace("LOCAL", str(local)).replace("REMOTE", str(remote))
    result = run_airflow_dag(tmp_path, monkeypatch, source, "sftp_dag", run_id="r1")
    assert result.states == {"put": "success", "wait": "success", "get": "success",
                             "missing": "failed"}
    assert (remote / "r1" / "deep" / "report.csv").read_text() == "a,b\n1,2\n"
    assert (local / "back" / "a.csv").read_text() == "a,b\n1,2\n"
    assert result.ti("put").return_value == f"{local}/report.csv"
    assert "Error while processing GET operation" in (result.ti("missing").state_message or "")
