"""The object-storage XCom backend on S3 (moto's server through an aws connection): a large
value is written as an object under the configured prefix, the database row holds only its
reference, and the next task reads the value back; through the DAG run on SQLite and
PostgreSQL."""

from __future__ import annotations

import gzip
import json
import uuid
from decimal import Decimal

import pytest
from servers import S3Server
from sqlalchemy import Engine, select

from statewright.db.tables import xcom
from statewright.providers.amazon.aws.hooks.s3 import S3Hook
from statewright.sdk import DAG, task


def test_a_large_value_is_kept_in_s3_and_read_back(
        engine: Engine, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_CONN_AWS_DEFAULT", s3_server.conn_json())
    bucket = f"xcom-{uuid.uuid4().hex[:10]}"
    S3Hook().create_bucket(bucket)
    monkeypatch.setenv("STATEWRIGHT_XCOM_BACKEND",
                       "statewright.sdk.xcom_objectstorage.XComObjectStorageBackend")
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_PATH", f"s3://aws_default@{bucket}/xcom")
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_THRESHOLD", "100")
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_COMPRESSION", "gzip")
    with DAG("xcom_in_s3") as dag:
        @task
        def prices() -> list[Decimal]:
            return [Decimal(i) / 8 for i in range(50)]

        @task
        def total(values: list[Decimal]) -> Decimal:
            assert all(type(v) is Decimal for v in values)
            return sum(values, Decimal(0))

        total(prices())
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.ti("total").state_message
    assert result.ti("total").return_value == Decimal("153.125")
    with engine.connect() as conn:
        reference = conn.execute(select(xcom.c.value).where(
            xcom.c.task_id == "prices")).scalar_one()
    assert reference["__type"] == "objectstorage" and reference["length"] == 50
    prefix = f"s3://{bucket}/xcom/xcom_in_s3/{result.run_id}/prices/"
    assert reference["value"].startswith(prefix) and reference["value"].endswith(".json.gz")
    key = reference["value"].removeprefix(f"s3://{bucket}/")
    body = s3_server.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    assert json.loads(gzip.decompress(body))[1] == {"__type": "decimal", "value": "0.125"}
