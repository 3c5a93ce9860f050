"""ObjectStoragePath on gs:// (the Cloud Storage emulator through a google_cloud_platform
connection), across stores, and in an Airflow DAG file passing a gs:// path through XCom."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from servers import GcsServer, run_airflow_dag
from test_objectstorage_path import _exercise

from statewright.providers.google.cloud.hooks.gcs import GCSHook
from statewright.sdk.object_storage import ObjectStoragePath


@pytest.fixture
def bucket(gcs_server: GcsServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_server.endpoint_url)
    monkeypatch.setenv("STATEWRIGHT_CONN_GOOGLE_CLOUD_DEFAULT", gcs_server.conn_json())
    name = f"osp-{uuid.uuid4().hex[:10]}"
    GCSHook().create_bucket(bucket_name=name)
    return name


def test_names_of_gs_paths() -> None:
    gs = ObjectStoragePath("gs://google_cloud_default@bucket/data/x.csv")
    assert (gs.protocol, gs.bucket, gs.conn_id, gs.key, gs.path, str(gs)) == (
        "gs", "bucket", "google_cloud_default", "data/x.csv", "bucket/data/x.csv",
        "gs://bucket/data/x.csv")
    assert ObjectStoragePath("gcs://bucket/a") / "b" == ObjectStoragePath("gs://bucket/a/b")
    assert ObjectStoragePath.deserialize(gs.serialize()) == gs


def test_gs_paths(bucket: str) -> None:
    _exercise(ObjectStoragePath(f"gs://{bucket}/base"))


def test_gs_bucket_mkdir_copy_across_stores_and_rmdir(bucket: str, tmp_path: Path) -> None:
    fresh = ObjectStoragePath(f"gs://osp-{uuid.uuid4().hex[:10]}/")
    assert not fresh.exists()
    fresh.mkdir()
    assert fresh.is_dir()
    local = ObjectStoragePath(f"file://{tmp_path}/src")
    (local / "d" / "one.txt").write_text("1")
    (local / "d" / "deep" / "two.txt").write_text("2")
    (local / "d").copy(fresh / "tree/", recursive=True)
    keys = sorted(p.key for p in (fresh / "tree").rglob("*.txt"))
    assert keys == [f"tree/{local.key}/d/deep/two.txt", f"tree/{local.key}/d/one.txt"]
    remote = ObjectStoragePath(f"gs://{bucket}/x.txt")
    (fresh / "tree" / local.key / "d" / "one.txt").copy(remote)  # same store: a server copy
    assert remote.read_text() == "1"
    with remote.open("a") as handle:
        handle.write("+more")
    assert remote.read_bytes() == b"1+more"
    with pytest.raises(FileExistsError):
        remote.open("x")
    with pytest.raises(OSError, match="not empty"):
        fresh.rmdir(recursive=False)
    fresh.rmdir()
    assert not fresh.exists()


DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG, ObjectStoragePath, task

BASE = ObjectStoragePath("gs://google_cloud_default@BUCKET/runs/")

with DAG("gs_osp_dag", schedule=None, start_date=datetime(2026, 1, 1)) as dag:
    @task
    def write(run_id=None):
        path = BASE / f"{run_id}.csv"
        path.write_text("a,b\\n1,2\\n")
        return path

    @task
    def read(path):
        return [str(path), path.read_text(), [p.name for p in BASE.iterdir()]]

    read(write())
'''


def test_gs_object_storage_path_in_an_airflow_dag_file(
        bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = DAG_FILE.replace("BUCKET", bucket)
    result = run_airflow_dag(tmp_path, monkeypatch, source, "gs_osp_dag", run_id="r1")
    assert result.states == {"write": "success", "read": "success"}
    assert result.ti("read").return_value == [f"gs://{bucket}/runs/r1.csv", "a,b\n1,2\n",
                                              ["r1.csv"]]
