"""The XCom entries of the API show each value readably (a Decimal as its number, a dataclass
as its fields, a DataFrame as a small table), name its type, and keep the stored form."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from api_helpers import run_url
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.sdk import DAG, PythonOperator


@dataclasses.dataclass
class Shipment:
    id: int
    weight: Decimal
    sent: datetime


def _produce(ti: Any) -> Decimal:
    ti.xcom_push(key="shipment", value=Shipment(3, Decimal("2.5"),
                                                datetime(2026, 1, 1, tzinfo=UTC)))
    ti.xcom_push(key="frame",
                 value=pd.DataFrame({"n": range(25), "sq": [i * i for i in range(25)]}))
    ti.xcom_push(key="pair", value=(1, "a"))
    return Decimal("12.50")


def _entries(client: TestClient, engine: Engine, dag_id: str) -> dict[str, Any]:
    with DAG(dag_id) as dag:
        PythonOperator(task_id="produce", python_callable=_produce)
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.ti("produce").state_message
    res = client.get(run_url(dag_id, result.run_id) + "/taskInstances/produce/xcomEntries")
    assert res.status_code == 200, res.text
    return {e["key"]: e for e in res.json()["xcom_entries"]}


def test_xcom_entries_are_readable_with_their_type_and_stored_form(
        client: TestClient, engine: Engine) -> None:
    entries = _entries(client, engine, "xcom_readable")
    total = entries["return_value"]
    assert (total["value"], total["type"]) == (12.5, "decimal.Decimal")
    assert total["raw"] == {"__type": "decimal", "value": "12.50"}
    shipment = entries["shipment"]
    assert shipment["type"] == f"{__name__}.Shipment"
    assert shipment["value"] == {"id": 3, "weight": 2.5, "sent": "2026-01-01T00:00:00+00:00"}
    assert shipment["raw"]["__classname__"] == f"{__name__}.Shipment"
    frame = entries["frame"]
    assert frame["type"] == "pandas.core.frame.DataFrame"
    assert frame["value"]["columns"] == ["n", "sq"] and frame["value"]["total_rows"] == 25
    assert len(frame["value"]["rows"]) == 20 and frame["value"]["rows"][3] == [3, 9]
    assert (entries["pair"]["value"], entries["pair"]["type"]) == ([1, "a"], "builtins.tuple")


def test_the_object_storage_backend_shows_where_a_value_is_kept(
        client: TestClient, engine: Engine, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_XCOM_BACKEND",
                       "statewright.sdk.xcom_objectstorage.XComObjectStorageBackend")
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_PATH", str(tmp_path / "store"))
    monkeypatch.setenv("STATEWRIGHT_XCOM_OBJECTSTORAGE_THRESHOLD", "200")
    entries = _entries(client, engine, "xcom_stored_elsewhere")
    frame = entries["frame"]
    assert frame["type"] == "objectstorage"
    assert frame["value"]["stored_at"].startswith((tmp_path / "store").as_uri())
    assert frame["value"]["bytes"] >= 200
    assert entries["return_value"]["value"] == 12.5  # small: kept in the database
