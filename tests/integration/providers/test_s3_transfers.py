"""The amazon provider's transfers between local files, SFTP and S3, in an Airflow DAG file,
against the real SFTP (OpenSSH) and S3 (moto) servers."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from servers import S3Server, SshServer, run_airflow_dag

from statewright.providers.amazon.aws.hooks.s3 import S3Hook

DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.amazon.aws.transfers.local_to_s3 import LocalFilesystemToS3Operator
from airflow.providers.amazon.aws.transfers.s3_to_sftp import S3ToSFTPOperator
from airflow.providers.amazon.aws.transfers.sftp_to_s3 import SFTPToS3Operator

with DAG("transfers", schedule=None, start_date=datetime(2026, 1, 1)) as dag:
    up = LocalFilesystemToS3Operator(task_id="up", filename="LOCAL", dest_bucket="BUCKET",
                                     dest_key="in/{{ run_id }}.csv")
    out = S3ToSFTPOperator(task_id="out", sftp_conn_id="sftp_default", s3_bucket="BUCKET",
                           s3_key="in/{{ run_id }}.csv", sftp_path="REMOTE/r.csv")
    back = SFTPToS3Operator(task_id="back", sftp_conn_id="sftp_default", s3_bucket="BUCKET",
                            s3_key="s3://BUCKET/back/r.csv", sftp_path="REMOTE/r.csv")
    none = SFTPToS3Operator(task_id="none", sftp_conn_id="sftp_default", s3_bucket="BUCKET",
                            s3_key="back/none.csv", sftp_path="REMOTE/none.csv",
                            fail_on_file_not_exist=False)
    missing = SFTPToS3Operator(task_id="missing", sftp_conn_id="sftp_default",
                               s3_bucket="BUCKET", s3_key="back/m.csv",
                               sftp_path="REMOTE/none.csv")
    up >> out >> back
'''


def test_local_to_s3_to_sftp_and_back_in_an_airflow_dag_file(
        sshd: SshServer, s3_server: S3Server, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_CONN_AWS_DEFAULT", s3_server.conn_json())
    monkeypatch.setenv("STATEWRIGHT_CONN_SFTP_DEFAULT",
                       sshd.uri("sftp", key_file=str(sshd.key_file)))
    bucket = f"t-{uuid.uuid4().hex[:10]}"
    S3Hook().create_bucket(bucket)
    local = tmp_path / "data.csv"
    local.write_text("id\n1\n")
    remote = sshd.root / "transfers"
    remote.mkdir()
    source = (DAG_FILE.replace("LOCAL", str(local)).replace("BUCKET", bucket)
              .replace("REMOTE", str(remote)))
    result = run_airflow_dag(tmp_path, monkeypatch, source, "transfers", run_id="r1")
    assert result.states == {"up": "success", "out": "success", "back": "success",
                             "none": "success", "missing": "failed"}
    assert (remote / "r.csv").read_text() == "id\n1\n"
    hook = S3Hook()
    assert hook.read_key("back/r.csv", bucket) == "id\n1\n"
    assert sorted(hook.list_keys(bucket)) == ["back/r.csv", "in/r1.csv"]
    assert "not found on the SFTP server" in (result.ti("missing").state_message or "")
