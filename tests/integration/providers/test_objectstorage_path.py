"""ObjectStoragePath on the local file system and on S3 (moto's server through an aws
connection), and in an Airflow DAG file (airflow.sdk.ObjectStoragePath, airflow.io.path)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from servers import S3Server, run_airflow_dag

from statewright.providers.amazon.aws.hooks.s3 import S3Hook
from statewright.sdk.object_storage import ObjectStoragePath


@pytest.fixture
def bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STATEWRIGHT_CONN_AWS_DEFAULT", s3_server.conn_json())
    name = f"osp-{uuid.uuid4().hex[:10]}"
    S3Hook().create_bucket(name)
    return name


def test_names_of_local_and_s3_paths() -> None:
    s3 = ObjectStoragePath("s3://aws_default@bucket/data/2026/x.tar.gz")
    assert (s3.protocol, s3.bucket, s3.container, s3.conn_id) == ("s3", "bucket", "bucket",
                                                                  "aws_default")
    assert (s3.key, s3.path, str(s3)) == ("data/2026/x.tar.gz", "bucket/data/2026/x.tar.gz",
                                          "s3://bucket/data/2026/x.tar.gz")
    assert (s3.name, s3.stem, s3.suffix, s3.suffixes) == ("x.tar.gz", "x.tar", ".gz",
                                                          [".tar", ".gz"])
    assert s3.parent == ObjectStoragePath("s3://bucket/data/2026", conn_id="aws_default")
    assert ObjectStoragePath("s3://bucket/a", conn_id="c") / "b" / "c.csv" == \
        ObjectStoragePath("s3://bucket/a/b/c.csv", conn_id="c")
    assert str(s3.relative_to("s3://bucket/data")) == "2026/x.tar.gz"
    local = ObjectStoragePath("file:///tmp/x/y.txt")
    assert (local.protocol, local.bucket, local.key, local.path) == ("file", "", "tmp/x/y.txt",
                                                                     "/tmp/x/y.txt")
    assert str(local) == "file:///tmp/x/y.txt" and ObjectStoragePath("/tmp/x") == local.parent
    assert ObjectStoragePath.deserialize(s3.serialize()) == s3
    with pytest.raises(ValueError, match="not supported"):
        ObjectStoragePath("abfs://container/x")


def _exercise(base: ObjectStoragePath) -> None:
    """The same pathlib-like calls on any store."""
    (base / "in").mkdir(parents=True, exist_ok=True)
    assert (base / "in" / "a.txt").write_text("héllo") == 5
    (base / "in" / "sub" / "b.bin").write_bytes(b"\x00\x01")
    with (base / "in" / "c.csv").open("w") as handle:
        handle.write("x,y\n")
    assert (base / "in" / "a.txt").read_text() == "héllo"
    assert (base / "in" / "sub" / "b.bin").read_bytes() == b"\x00\x01"
    with (base / "in" / "c.csv").open("rb") as handle:
        assert handle.read() == b"x,y\n"
    assert (base / "in").is_dir() and (base / "in" / "a.txt").is_file()
    assert not (base / "in" / "none").exists()
    assert (base / "in" / "a.txt").stat().st_size == 6 == (base / "in" / "a.txt").size()
    assert [p.name for p in sorted((base / "in").iterdir())] == ["a.txt", "c.csv", "sub"]
    assert sorted(p.key for p in (base / "in").glob("*.csv")) == [(base / "in/c.csv").key]
    assert sorted(p.name for p in (base / "in").rglob("*.bin")) == ["b.bin"]
    assert sorted(p.name for p in (base / "in").glob("**/*")) == [
        "a.txt", "b.bin", "c.csv", "sub"]
    (base / "in" / "a.txt").copy(base / "copy.txt")
    assert (base / "copy.txt").read_text() == "héllo"
    (base / "copy.txt").move(base / "moved.txt")
    assert not (base / "copy.txt").exists() and (base / "moved.txt").read_text() == "héllo"
    (base / "moved.txt").unlink()
    (base / "moved.txt").unlink(missing_ok=True)
    with pytest.raises(FileNotFoundError):
        (base / "moved.txt").unlink()
    (base / "in").rmdir(recursive=True)
    assert not (base / "in").exists()


def test_local_paths(tmp_path: Path) -> None:
    _exercise(ObjectStoragePath(f"file://{tmp_path}"))


def test_s3_paths(bucket: str) -> None:
    _exercise(ObjectStoragePath(f"s3://aws_default@{bucket}/base"))


def test_copy_across_stores_into_a_directory_and_recursively(bucket: str,
                                                            tmp_path: Path) -> None:
    local = ObjectStoragePath(f"file://{tmp_path}/src")
    (local / "d" / "one.txt").write_text("1")
    (local / "d" / "deep" / "two.txt").write_text("2")
    remote = ObjectStoragePath(f"s3://{bucket}/", conn_id="aws_default")
    (local / "d" / "one.txt").copy(remote / "single.txt")  # to a file name
    assert (remote / "single.txt").read_text() == "1"
    (remote / "single.txt").copy(ObjectStoragePath(f"file://{tmp_path}/back/"))  # into a dir
    assert (tmp_path / "back" / "single.txt").read_text() == "1"
    with pytest.raises(IsADirectoryError):
        (local / "d").copy(remote / "tree/")
    (local / "d").copy(remote / "tree/", recursive=True)
    keys = sorted(p.key for p in (remote / "tree").rglob("*.txt"))
    assert keys == [f"tree/{local.key}/d/deep/two.txt", f"tree/{local.key}/d/one.txt"]


DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG, ObjectStoragePath, task
from airflow.io.path import ObjectStoragePath as OldPath

BASE = ObjectStoragePath("s3://aws_default@BUCKET/runs/")

with DAG("osp_dag", schedule=None, start_date=datetime(2026, 1, 1)) as dag:
    @task
    def write(run_id=None):
        path = BASE / f"{run_id}.csv"
        path.write_text("a,b\\n1,2\\n")
        return path  # an XCom: the next task receives the path

    @task
    def read(path):
        again = OldPath(str(path), conn_id="aws_default")
        return [type(path).__name__, again.read_text(), [p.name for p in BASE.iterdir()],
                OldPath is ObjectStoragePath]

    read(write())
'''


def test_object_storage_path_in_an_airflow_dag_file(
        bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = DAG_FILE.replace("BUCKET", bucket)
    result = run_airflow_dag(tmp_path, monkeypatch, source, "osp_dag", run_id="r1")
    assert result.states == {"write": "success", "read": "success"}
    assert str(result.ti("write").return_value) == f"s3://{bucket}/runs/r1.csv"
    assert result.ti("read").return_value == ["ObjectStoragePath", "a,b\n1,2\n", ["r1.csv"],
                                              True]
