"""XCom backends: a custom ``BaseXCom`` subclass named by ``STATEWRIGHT_XCOM_BACKEND`` stores and
reads every value, and the object-storage backend writes large values to files (the database
row keeps only a reference), on SQLite and PostgreSQL."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from sqlalchemy import Engine, select

from statewright.db.tables import xcom
from statewright.sdk import DAG, PythonOperator, serde, task
from statewright.sdk.xcom_backend import BaseXCom, XComResult, resolve_xcom_backend

CALLS: list[dict[str, Any]] = []


class EnvelopeXCom(BaseXCom):
    """Stores each value inside an envelope that names where it came from."""

    @staticmethod
    def serialize_value(value: Any, *, key: str | None = None, task_id: str | None = None,
                        dag_id: str | None = None, run_id: str | None = None,
                        map_index: int | None = None) -> Any:
        CALLS.append({"key": key, "task_id": task_id, "dag_id": dag_id, "map_index": map_index,
                      "run_id": run_id})
        return {"envelope": f"{task_id}/{key}", "data": serde.serialize(value)}

    @staticmethod
    def deserialize_value(result: Any) -> Any:
        assert result.value["envelope"].endswith(f"/{result.key}")
        return serde.deserialize(result.value["data"])

    @staticmethod
    def orm_deserialize_value(result: Any) -> Any:
        return f"envelope {result.value['envelope']}"


class NotABackend:
    pass


def _money(ti: Any) -> Decimal:
    ti.xcom_push(key="currency", value=("EUR",))
    return Decimal("12.50")


def _spend(ti: Any) -> str:
    amount = ti.xcom_pull(task_ids="money")
    currency = ti.xcom_pull(task_ids="money", key="currency")
    assert type(amount) is Decimal and currency == ("EUR",)
    return f"{amount} {currency[0]}"


def test_a_custom_backend_stores_and_reads_every_value(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_XCOM_BACKEND", f"{__name__}.EnvelopeXCom")
    CALLS.clear()
    with DAG("custom_backend") as dag:
        money = PythonOperator(task_id="money", python_callable=_money)
        spend = PythonOperator(task_id="spend", python_callable=_spend)
        money >> spend
    result = dag.test(engine=engine)
    assert result.states == {"money": "success", "spend": "success"}, result.ti("spend")
    assert result.ti("spend").return_value == "12.50 EUR"
    assert result.ti("money").return_value == Decimal("12.50")
    with engine.connect() as conn:
        rows = {(r.task_id, r.key): r.value for r in conn.execute(select(xcom))}
    assert rows[("money", "return_value")] == {
        "envelope": "money/return_value", "data": {"__type": "decimal", "value": "12.50"}}
    assert rows[("money", "currency")]["envelope"] == "money/currency"
    assert {(c["task_id"], c["key"], c["dag_id"], c["map_index"]) for c in CALLS} == {
        ("money", "currency", "custom_backend", -1),
        ("money", "return_value", "custom_backend", -1),
        ("spend", "return_value", "custom_backend", -1)}
    assert {c["run_id"] for c in CALLS} == {result.run_id}


def test_the_backend_setting_must_name_a_base_xcom_subclass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_XCOM_BACKEND", f"{__name__}.NotABackend")
    with pytest.raises(TypeError, match="not a subclass of BaseXCom"):
        resolve_xcom_backend()
    with DAG("bad_backend") as dag:
        task(task_id="t")(lambda: 1)()
    result = dag.test()
    assert "not a subclass of BaseXCom" in (result.ti("t").state_message or "")
    monkeypatch.delenv("STATEWRIGHT_XCOM_BACKEND")
    assert resolve_xcom_backend() is BaseXCom


@pytest.fixture
def object_storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "xcom store"
    monkeypatch.setenv("STATEWRIGHT_XCOM_BACKEND",
                       "statewright.sdk.xcom_objectstorage.XComObjectStorageBackend")
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_PATH", folder.as_uri())
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_THRESHOLD", "200")
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_COMPRESSION", "gzip")
    return folder


def test_a_large_value_lands_in_a_file_and_reads_back(
        engine: Engine, object_storage: Path) -> None:
    with DAG("big_values") as dag:
        @task
        def big() -> list[Decimal]:
            return [Decimal(i) / 4 for i in range(100)]

        @task
        def small() -> Decimal:
            return Decimal("1.5")

        @task
        def chunks() -> list[str]:
            return ["x" * 100, "y" * 100, "z" * 100]

        @task
        def total(values: list[Decimal], one: Decimal) -> Decimal:
            assert all(type(v) is Decimal for v in values)
            return sum(values, one)

        @task
        def size(chunk: str) -> int:
            return len(chunk)

        total(big(), small())
        size.expand(chunk=chunks())  # mapped over a value the scheduler does not read
    result = dag.test(engine=engine)
    assert result.state.value == "success", {k: v.state_message for k, v in
                                            result.task_instances.items()}
    assert result.ti("total").return_value == Decimal("1239.0")
    assert [result.task_instances[f"size[{i}]"].return_value for i in range(3)] == [100] * 3
    with engine.connect() as conn:
        rows = {r.task_id: r.value for r in conn.execute(
            select(xcom.c.task_id, xcom.c.value).where(xcom.c.map_index == -1))}
    assert rows["small"] == {"__type": "decimal", "value": "1.5"}  # below the threshold
    reference = rows["big"]
    assert set(reference) == {"__type", "value", "bytes", "length"}
    assert reference["__type"] == "objectstorage" and reference["length"] == 100
    stored = Path(unquote(urlsplit(reference["value"]).path))
    assert stored.is_relative_to(object_storage / "big_values" / result.run_id / "big")
    assert stored.name.endswith(".json.gz")
    data = json.loads(gzip.decompress(stored.read_bytes()))
    assert data[1] == {"__type": "decimal", "value": "0.25"}
    assert reference["bytes"] == len(json.dumps(data, separators=(",", ":")).encode())
    assert rows["chunks"]["length"] == 3


def test_the_object_storage_backend_reads_only_under_its_path(object_storage: Path) -> None:
    from statewright.sdk.xcom_objectstorage import XComObjectStorageBackend as Backend

    ref = Backend.serialize_value(["a" * 300], key="k", task_id="t", dag_id="d", run_id="r")
    assert Backend.deserialize_value(XComResult("k", ref)) == ["a" * 300]
    assert Backend.orm_deserialize_value(XComResult("k", ref)) == {
        "stored_at": ref["value"], "bytes": ref["bytes"]}
    outside = dict(ref, value=(object_storage.parent / "elsewhere.json").as_uri())
    with pytest.raises(ValueError, match="points outside STATEWRIGHT_XCOM_OBJECTSTORAGE_PATH"):
        Backend.deserialize_value(XComResult("k", outside))
    Backend.purge(XComResult("k", ref))
    assert not list(object_storage.rglob("*.json.gz"))
    assert Backend.serialize_value(Decimal(1)) == {"__type": "decimal", "value": "1"}


def test_airflows_backend_path_names_the_same_backend(
        object_storage: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.sdk.xcom_objectstorage import XComObjectStorageBackend

    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    monkeypatch.setenv("STATEWRIGHT_XCOM_BACKEND",
                       "airflow.providers.common.io.xcom.backend.XComObjectStorageBackend")
    assert resolve_xcom_backend() is XComObjectStorageBackend
    monkeypatch.setenv("STATEWRIGHT_XCOM_BACKEND", "airflow.sdk.bases.xcom.BaseXCom")
    assert resolve_xcom_backend() is BaseXCom
    from statewright.sdk.loader import dag_code_imports

    with dag_code_imports():
        from airflow.sdk import BaseXCom as AirflowBaseXCom  # type: ignore[import-not-found]
    assert AirflowBaseXCom is BaseXCom
    # without the backend configured, the API still shows where a value is kept
    assert serde.render({"__type": "objectstorage", "value": "s3://b/k.json", "bytes": 9}) == {
        "stored_at": "s3://b/k.json", "bytes": 9}


def _push_big_then_fail_once(ti: Any) -> str:
    ti.xcom_push(key="rows", value=[f"row {i}" for i in range(50)])
    if ti.try_number == 1:
        raise ConnectionError("first try fails")
    return "done"


def test_objects_go_when_a_retry_starts_and_when_the_task_is_cleared(
        engine: Engine, object_storage: Path) -> None:
    from datetime import timedelta

    from statewright.core.clock import utcnow
    from statewright.services.controls.clear import clear_task_instances

    with DAG("purged_values") as dag:
        PythonOperator(task_id="work", python_callable=_push_big_then_fail_once, retries=1,
                       retry_delay=timedelta(seconds=0))
    seen: list[list[str]] = []
    result = dag.test(engine=engine, on_result=lambda w, r: seen.append(
        sorted(p.name for p in object_storage.rglob("*.json.gz"))))
    assert result.states == {"work": "success"}
    # each try left one object; the second try started by purging the first's
    assert len(seen) == 2 and len(seen[0]) == len(seen[1]) == 1 and seen[0] != seen[1]
    assert [p.name for p in object_storage.rglob("*.json.gz")] == seen[1]
    clear_task_instances(engine, result.run_id, dag_id="purged_values", now=utcnow())
    assert not list(object_storage.rglob("*.json.gz"))
    with engine.connect() as conn:
        assert conn.execute(select(xcom.c.key)).all() == []


def test_the_default_backend_reads_nothing_to_purge() -> None:
    from statewright.services.xcom_purge import purge_values

    assert purge_values(None, [(1, "t", -1)]) == 0  # type: ignore[arg-type]  # no query made
