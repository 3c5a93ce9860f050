"""GCSHook, the Cloud Storage operators, transfers and sensors against a GCS-compatible server
(gcp-storage-emulator: servers.gcs_server), reached through STORAGE_EMULATOR_HOST and a
google_cloud_platform connection naming the project."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from servers import GCS_PROJECT, GcsServer, run_airflow_dag

from statewright.providers.google.cloud.hooks.gcs import GCSHook, _parse_gcs_url
from statewright.providers.google.cloud.operators.gcs import (
    GCSCreateBucketOperator,
    GCSDeleteBucketOperator,
    GCSDeleteObjectsOperator,
    GCSFileTransformOperator,
    GCSListObjectsOperator,
)
from statewright.providers.google.cloud.sensors.gcs import (
    GCSObjectExistenceSensor,
    GCSObjectsWithPrefixExistenceSensor,
    GCSObjectUpdateSensor,
)
from statewright.providers.google.cloud.transfers.gcs_to_gcs import GCSToGCSOperator
from statewright.providers.google.cloud.transfers.gcs_to_local import (
    GCSToLocalFilesystemOperator,
)
from statewright.providers.google.cloud.transfers.local_to_gcs import (
    LocalFilesystemToGCSOperator,
)


@pytest.fixture
def gcs(gcs_server: GcsServer, monkeypatch: pytest.MonkeyPatch) -> GcsServer:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_server.endpoint_url)
    monkeypatch.setenv("STATEWRIGHT_CONN_GOOGLE_CLOUD_DEFAULT", gcs_server.conn_json())
    return gcs_server


def _bucket(hook: GCSHook | None = None) -> str:
    name = f"b-{uuid.uuid4().hex[:12]}"
    if hook is not None:
        hook.create_bucket(bucket_name=name)
    return name


class _Ti:
    def __init__(self) -> None:
        self.pushed: dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value


def test_hook_uploads_downloads_lists_and_reads_object_facts(gcs: GcsServer,
                                                             tmp_path: Path) -> None:
    hook = GCSHook()
    assert hook.project_id == GCS_PROJECT
    bucket = _bucket()
    assert hook.create_bucket(bucket_name=bucket, labels={"team": "data"}) == bucket
    assert gcs.client().lookup_bucket(bucket) is not None  # (the emulator keeps no labels)
    hook.upload(bucket, "in/a.txt", data="héllo")
    hook.upload(bucket, "in/b.bin", data=b"\x00\x01", mime_type="application/x-bin")
    local = tmp_path / "c.csv"
    local.write_text("x,y\n")
    hook.upload(bucket, "in/sub/c.csv", filename=str(local))
    hook.upload(bucket, "in/sub/c.csv.gz", filename=str(local), gzip=True)
    hook.upload(bucket, "in/d.txt.gz", data="zipped", gzip=True)
    assert not (tmp_path / "c.csv.gz").exists()  # the compressed copy is removed
    with pytest.raises(ValueError, match="single parameter"):
        hook.upload(bucket, "x", filename=str(local), data="both")
    with pytest.raises(ValueError, match="missing"):
        hook.upload(bucket, "x")

    assert hook.download(bucket, "in/a.txt") == "héllo".encode()
    assert gzip.decompress(hook.download(bucket, "in/sub/c.csv.gz")) == b"x,y\n"
    assert gzip.decompress(hook.download(bucket, "in/d.txt.gz")) == b"zipped"
    target = tmp_path / "out.csv"
    assert hook.download(bucket, "in/sub/c.csv", filename=str(target)) == str(target)
    assert target.read_text() == "x,y\n"
    blob = gcs.client().bucket(bucket).get_blob("in/b.bin")
    assert blob.content_type == "application/x-bin"
    assert gcs.client().bucket(bucket).get_blob("in/a.txt").content_type.startswith(
        "text/plain")

    assert hook.exists(bucket, "in/a.txt") and not hook.exists(bucket, "in/none")
    assert hook.get_size(bucket, "in/sub/c.csv") == 4
    md5 = base64.b64encode(hashlib.md5(b"x,y\n").digest()).decode()
    assert hook.get_md5hash(bucket, "in/sub/c.csv") == md5
    assert hook.get_crc32c(bucket, "in/sub/c.csv") == blob.bucket.get_blob("in/sub/c.csv").crc32c
    with pytest.raises(ValueError, match="not found"):
        hook.get_size(bucket, "in/none")

    assert hook.list(bucket) == ["in/a.txt", "in/b.bin", "in/d.txt.gz", "in/sub/c.csv",
                                 "in/sub/c.csv.gz"]
    assert hook.list(bucket, prefix=["in/sub/", "in/a"]) == [
        "in/sub/c.csv", "in/sub/c.csv.gz", "in/a.txt"]
    assert hook.list(bucket, match_glob="**/*.csv") == ["in/sub/c.csv"]
    assert hook.list(bucket, prefix="in/", delimiter="/") == ["in/sub/"]
    with pytest.raises(ValueError, match="match_glob"):
        hook.list(bucket, match_glob="*", delimiter=".csv")


def test_hook_times_copies_rewrites_composes_and_deletes(gcs: GcsServer) -> None:
    hook = GCSHook()
    bucket, other = _bucket(hook), _bucket(hook)
    before = datetime.now(UTC) - timedelta(minutes=1)
    hook.upload(bucket, "a.txt", data="A")
    hook.upload(bucket, "b.txt", data="B")
    updated = hook.get_blob_update_time(bucket, "a.txt")
    assert updated is not None and updated > before
    assert hook.is_updated_after(bucket, "a.txt", before.replace(tzinfo=None))
    assert not hook.is_updated_after(bucket, "a.txt", updated + timedelta(seconds=1))
    assert hook.is_updated_between(bucket, "a.txt", before, updated + timedelta(seconds=1))
    assert hook.is_updated_before(bucket, "a.txt", updated + timedelta(seconds=1))
    assert not hook.is_older_than(bucket, "a.txt", 3600)
    assert hook.list_by_timespan(bucket, before, updated + timedelta(seconds=5)) == [
        "a.txt", "b.txt"]
    assert hook.list_by_timespan(bucket, before - timedelta(hours=1), before) == []

    hook.copy(bucket, "a.txt", other)
    hook.copy(bucket, "a.txt", destination_object="a-copy.txt")
    with pytest.raises(ValueError, match="must be different"):
        hook.copy(bucket, "a.txt")
    hook.rewrite(bucket, "b.txt", other, "moved/b.txt")
    assert hook.download(other, "a.txt") == b"A"
    assert hook.download(bucket, "a-copy.txt") == b"A"
    assert hook.download(other, "moved/b.txt") == b"B"
    hook.compose(bucket, ["a.txt", "b.txt"], "ab.txt")
    assert hook.download(bucket, "ab.txt") == b"AB"

    hook.delete(bucket, "a.txt")
    assert not hook.exists(bucket, "a.txt")
    hook.delete(bucket, "a.txt", ignore_error=True)
    from google.cloud.exceptions import NotFound

    with pytest.raises(NotFound):
        hook.delete(bucket, "a.txt")
    with hook.provide_file_and_upload(object_url=f"gs://{bucket}/via/file.txt") as handle:
        handle.write(b"written")
    with hook.provide_file(bucket_name=bucket, object_name="via/file.txt") as handle:
        assert handle.read() == b"written"
    hook.delete_bucket(other, force=True)
    assert gcs.client().lookup_bucket(other) is None
    hook.delete_bucket(other)  # a missing bucket is logged, not raised


def test_connection_extras_anonymous_prefixed_and_a_missing_connection(
        gcs: GcsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from google.auth.credentials import AnonymousCredentials

    monkeypatch.setenv("STATEWRIGHT_CONN_GCS_OLD", json.dumps({
        "conn_type": "google_cloud_platform",
        "extra": {"extra__google_cloud_platform__project": "old-style",
                  "extra__google_cloud_platform__is_anonymous": "true",
                  "scope": "https://a/x, https://a/y"}}))
    old = GCSHook(gcp_conn_id="gcs_old")
    assert old.project_id == "old-style"
    assert isinstance(old.get_credentials(), AnonymousCredentials)
    assert list(old.scopes) == ["https://a/x", "https://a/y"]
    bucket = _bucket(GCSHook())
    old.upload(bucket, "anon.txt", data="x")  # works against the emulator without a key
    assert old.exists(bucket, "anon.txt")
    missing = GCSHook(gcp_conn_id="no_such_conn")  # application default -> emulator: anonymous
    assert isinstance(missing.get_credentials(), AnonymousCredentials)
    assert missing.exists(bucket, "anon.txt")
    monkeypatch.setenv("STATEWRIGHT_CONN_GCS_BAD", json.dumps({
        "conn_type": "google_cloud_platform", "extra": {"keyfile_dict": "{not json"}}))
    with pytest.raises(ValueError, match="Invalid key JSON"):
        GCSHook(gcp_conn_id="gcs_bad").get_conn()
    monkeypatch.setenv("STATEWRIGHT_CONN_GCS_P12", json.dumps({
        "conn_type": "google_cloud_platform", "extra": {"key_path": "/k/key.p12"}}))
    assert GCSHook(gcp_conn_id="gcs_p12").test_connection()[0] is False
    assert _parse_gcs_url("gs://bk/a/b.csv") == ("bk", "a/b.csv")
    with pytest.raises(ValueError, match="Schema"):
        _parse_gcs_url("s3://bk/a")


def test_a_service_account_key_in_keyfile_dict(gcs: GcsServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from google.oauth2 import service_account

    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    key = {"type": "service_account", "project_id": "key-project", "private_key_id": "k1",
           "private_key": pem, "client_email": "sa@key-project.iam.gserviceaccount.com",
           "client_id": "1", "token_uri": f"{gcs.endpoint_url}/no-token-here"}
    monkeypatch.setenv("STATEWRIGHT_CONN_GCS_KEY", json.dumps({
        "conn_type": "google_cloud_platform", "extra": {"keyfile_dict": json.dumps(key)}}))
    hook = GCSHook(gcp_conn_id="gcs_key")
    credentials, project = hook.get_credentials_and_project_id()
    assert isinstance(credentials, service_account.Credentials)
    assert project == "key-project"
    assert credentials.service_account_email == key["client_email"]
    ok, message = hook.test_connection()  # the token request fails: reported, not raised
    assert not ok and "RefreshError" in message


def test_bucket_and_object_operators(gcs: GcsServer, tmp_path: Path) -> None:
    hook = GCSHook()
    bucket = _bucket()
    create = GCSCreateBucketOperator(task_id="c", bucket_name=bucket, storage_class="STANDARD")
    create.execute({})
    create.execute({})  # an existing bucket is a warning
    for name in ("d/1.csv", "d/2.json", "e/3.csv"):
        hook.upload(bucket, name, data=name)
    listing = GCSListObjectsOperator(task_id="l", bucket=bucket, match_glob="**/*.csv")
    assert listing.execute({}) == ["d/1.csv", "e/3.csv"]
    assert GCSListObjectsOperator(task_id="l2", bucket=bucket, prefix="d/").execute({}) == [
        "d/1.csv", "d/2.json"]
    GCSDeleteObjectsOperator(task_id="p", bucket_name=bucket, prefix="d/").execute({})
    assert hook.list(bucket) == ["e/3.csv"]
    GCSDeleteObjectsOperator(task_id="o", bucket_name=bucket, objects=["e/3.csv"]).execute({})
    assert hook.list(bucket) == []
    with pytest.raises(ValueError, match="Both are None"):
        GCSDeleteObjectsOperator(task_id="n", bucket_name=bucket)
    with pytest.raises(ValueError, match="Both provided"):
        GCSDeleteObjectsOperator(task_id="n", bucket_name=bucket, objects=["a"], prefix="a")

    hook.upload(bucket, "t/in.txt", data="lower case\n")
    script = tmp_path / "upper.py"
    script.write_text("import sys\nsrc, dst = sys.argv[1:]\nprint('transforming')\n"
                      "open(dst, 'w').write(open(src).read().upper())\n")
    GCSFileTransformOperator(task_id="t", source_bucket=bucket, source_object="t/in.txt",
                             destination_object="t/out.txt",
                             transform_script=[sys.executable, str(script)]).execute({})
    assert hook.download(bucket, "t/out.txt") == b"LOWER CASE\n"
    failing = GCSFileTransformOperator(task_id="f", source_bucket=bucket,
                                       source_object="t/in.txt",
                                       transform_script=[sys.executable, "-c", "exit(3)"])
    with pytest.raises(Exception, match="Transform script failed: 3"):
        failing.execute({})

    GCSDeleteBucketOperator(task_id="x", bucket_name=bucket).execute({})  # force by default
    assert gcs.client().lookup_bucket(bucket) is None


def test_local_and_gcs_transfers(gcs: GcsServer, tmp_path: Path) -> None:
    hook = GCSHook()
    bucket, backup = _bucket(hook), _bucket(hook)
    for name in ("a.csv", "b.csv", "c.txt"):
        (tmp_path / name).write_text(name)
    up = LocalFilesystemToGCSOperator(task_id="u", src=str(tmp_path / "*.csv"), dst="data/",
                                      bucket=bucket)
    assert up.execute({}) == [f"gs://{bucket}/data/a.csv", f"gs://{bucket}/data/b.csv"]
    one = LocalFilesystemToGCSOperator(task_id="o", src=str(tmp_path / "c.txt"),
                                       dst="data/sub/c.txt", bucket=bucket, gzip=True)
    assert one.execute({}) == [f"gs://{bucket}/data/sub/c.txt"]
    assert gzip.decompress(hook.download(bucket, "data/sub/c.txt")) == b"c.txt"
    with pytest.raises(ValueError, match="directory"):
        LocalFilesystemToGCSOperator(task_id="m", src=str(tmp_path / "*.csv"), dst="data/x",
                                     bucket=bucket).execute({})
    with pytest.raises(FileNotFoundError):
        LocalFilesystemToGCSOperator(task_id="n", src=str(tmp_path / "*.none"), dst="d/",
                                     bucket=bucket).execute({})

    target = tmp_path / "down" / "a.csv"
    target.parent.mkdir()
    GCSToLocalFilesystemOperator(task_id="d", bucket=bucket, object_name="data/a.csv",
                                 filename=str(target)).execute({})
    assert target.read_text() == "a.csv"
    ti = _Ti()
    GCSToLocalFilesystemOperator(task_id="x", bucket=bucket, object_name="data/b.csv",
                                 store_to_xcom_key="body").execute({"ti": ti})
    assert ti.pushed == {"body": "b.csv"}
    with pytest.raises(ValueError, match="Either filename or store_to_xcom_key"):
        GCSToLocalFilesystemOperator(task_id="y", bucket=bucket, object_name="o",
                                     filename="f", store_to_xcom_key="k")

    copy_dir = GCSToGCSOperator(task_id="g1", source_bucket=bucket, source_object="data/",
                                destination_bucket=backup, destination_object="copy/")
    assert copy_dir.execute({}) == [f"gs://{backup}/copy/a.csv", f"gs://{backup}/copy/b.csv",
                                    f"gs://{backup}/copy/sub/c.txt"]
    wildcard = GCSToGCSOperator(task_id="g2", source_bucket=bucket, source_object="data/*.csv",
                                destination_bucket=backup, destination_object="csv/")
    assert wildcard.execute({}) == [f"gs://{backup}/csv/a.csv", f"gs://{backup}/csv/b.csv"]
    hook.upload(bucket, "data/a.csv", data="changed")
    keep = GCSToGCSOperator(task_id="g3", source_bucket=bucket, source_object="data/",
                            destination_bucket=backup, destination_object="copy/",
                            replace=False)
    assert keep.execute({}) == []
    assert hook.download(backup, "copy/a.csv") == b"a.csv"
    single = GCSToGCSOperator(task_id="g4", source_bucket=bucket, source_object="data/a.csv",
                              destination_object="moved/a.csv", move_object=True,
                              exact_match=True)
    assert single.execute({}) == [f"gs://{bucket}/moved/a.csv"]
    assert not hook.exists(bucket, "data/a.csv")
    late = GCSToGCSOperator(task_id="g5", source_bucket=bucket, source_object="data/b.csv",
                            destination_bucket=backup,
                            last_modified_time=datetime.now(UTC) + timedelta(hours=1))
    assert late.execute({}) == []
    required = GCSToGCSOperator(task_id="g6", source_bucket=bucket, source_object="none/x",
                                destination_bucket=backup, source_object_required=True)
    with pytest.raises(Exception, match="does not exist"):
        required.execute({})
    with pytest.raises(Exception, match="not both"):
        GCSToGCSOperator(task_id="g7", source_bucket=bucket, source_object="a",
                         source_objects=["b"]).execute({})


def test_sensors_existence_glob_prefix_and_update(gcs: GcsServer) -> None:
    hook = GCSHook()
    bucket = _bucket(hook)
    exact = GCSObjectExistenceSensor(task_id="e", bucket=bucket, object="in/1.csv")
    glob = GCSObjectExistenceSensor(task_id="g", bucket=bucket, object="in/*.csv",
                                    use_glob=True)
    prefix = GCSObjectsWithPrefixExistenceSensor(task_id="p", bucket=bucket, prefix="in/")
    start = datetime.now(UTC) - timedelta(seconds=5)
    update = GCSObjectUpdateSensor(task_id="u", bucket=bucket, object="in/1.csv",
                                   ts_func=lambda context: context["since"])
    assert [exact.poke({}), glob.poke({}), prefix.poke({})] == [False] * 3
    hook.upload(bucket, "in/2.csv", data="2")
    assert [exact.poke({}), glob.poke({}), prefix.poke({})] == [False, True, True]
    hook.upload(bucket, "in/1.csv", data="1")
    assert [exact.poke({}), glob.poke({}), prefix.poke({})] == [True] * 3
    assert prefix.execute({"ti": _Ti()}) == ["in/1.csv", "in/2.csv"]
    assert exact.execute({"ti": _Ti()}) is True
    assert update.poke({"since": start})
    assert not update.poke({"since": datetime.now(UTC) + timedelta(minutes=1)})
    default = GCSObjectUpdateSensor(task_id="d", bucket=bucket, object="in/1.csv")
    assert default.poke({"data_interval_end": start})


DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.google.cloud.operators.gcs import (
    GCSCreateBucketOperator, GCSDeleteBucketOperator, GCSDeleteObjectsOperator,
    GCSListObjectsOperator)
from airflow.providers.google.cloud.sensors.gcs import (
    GCSObjectExistenceSensor, GCSObjectsWithPrefixExistenceSensor)
from airflow.providers.google.cloud.transfers.gcs_to_gcs import GCSToGCSOperator
from airflow.providers.google.cloud.transfers.local_to_gcs import LocalFilesystemToGCSOperator
from airflow.providers.google.cloud.transfers.gcs_to_local import GCSToLocalFilesystemOperator

BUCKET = "BUCKETNAME"

with DAG("gcs_dag", schedule=None, start_date=datetime(2026, 1, 1)) as dag:
    create = GCSCreateBucketOperator(task_id="create", bucket_name=BUCKET)
    upload = LocalFilesystemToGCSOperator(task_id="upload", src="LOCALFILE",
                                          dst="raw/{{ run_id }}.csv", bucket=BUCKET)
    wait = GCSObjectExistenceSensor(task_id="wait", bucket=BUCKET, object="raw/*.csv",
                                    use_glob=True, poke_interval=1, timeout=30)
    found = GCSObjectsWithPrefixExistenceSensor(task_id="found", bucket=BUCKET, prefix="raw/",
                                                poke_interval=1, timeout=30)
    copy = GCSToGCSOperator(task_id="copy", source_bucket=BUCKET, source_object="raw/",
                            destination_object="done/")
    listing = GCSListObjectsOperator(task_id="listing", bucket=BUCKET, prefix="done/")
    download = GCSToLocalFilesystemOperator(task_id="download", bucket=BUCKET,
                                            object_name="done/{{ run_id }}.csv",
                                            store_to_xcom_key="body")
    delete = GCSDeleteObjectsOperator(task_id="delete", bucket_name=BUCKET, prefix="raw/")
    drop = GCSDeleteBucketOperator(task_id="drop", bucket_name=BUCKET + "-none")
    create >> upload >> [wait, found] >> copy >> listing >> download >> delete >> drop
'''


def test_gcs_operators_and_sensors_in_an_airflow_dag_file(
        gcs: GcsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bucket = _bucket()
    local = tmp_path / "rows.csv"
    local.write_text("id\n1\n")
    source = DAG_FILE.replace("BUCKETNAME", bucket).replace("LOCALFILE", str(local))
    result = run_airflow_dag(tmp_path, monkeypatch, source, "gcs_dag", run_id="r1")
    assert set(result.states.values()) == {"success"}, result.states
    assert result.ti("found").return_value == ["raw/r1.csv"]
    assert result.ti("copy").return_value == [f"gs://{bucket}/done/r1.csv"]
    assert result.ti("listing").return_value == ["done/r1.csv"]
    hook = GCSHook()
    assert hook.list(bucket) == ["done/r1.csv"]
    assert hook.download(bucket, "done/r1.csv") == b"id\n1\n"


def test_testing_a_google_cloud_connection(gcs_server: GcsServer) -> None:
    from statewright.sdk.connection import Connection
    from statewright.services.secrets.admin import test_connection as check_connection

    conn = Connection.from_json(gcs_server.conn_json(is_anonymous=True), conn_id="gcp_check")
    assert check_connection(conn) == (True, "Credentials are anonymous")


def test_a_deferrable_sensor_waits_in_poke_mode_and_other_google_modules_are_missing(
        gcs: GcsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.sdk.loader import load_dag_file

    hook = GCSHook()
    bucket = _bucket(hook)
    hook.upload(bucket, "x", data="x")
    sensor = GCSObjectExistenceSensor(task_id="s", bucket=bucket, object="x", deferrable=True)
    assert sensor.execute({"ti": _Ti()}) is True
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    path = tmp_path / "bq.py"
    path.write_text("from airflow.providers.google.cloud.operators.bigquery import "
                    "BigQueryInsertJobOperator\n")
    error = load_dag_file(path).error
    assert error is not None and "apache-airflow-providers-google" in error
