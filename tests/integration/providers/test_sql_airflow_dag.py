"""An Airflow DAG file that imports the SQL and HTTP providers from ``airflow.providers...``,
run unedited with ``dag.test()`` through the compatibility layer: it fetches pages from the
local HTTP server, writes them to PostgreSQL, checks them, copies them to MariaDB, branches on
a query, and returns MariaDB's ``SUM()`` (a ``Decimal``)."""

from __future__ import annotations

import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.providers.mysql.hooks.mysql import MySqlHook
from statewright.sdk.loader import load_dag_file
from statewright.sdk.serde import deserialize
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler

DAG_FILE = '''
from __future__ import annotations

import pendulum

from airflow.sdk import DAG, task
from airflow.providers.common.sql.operators.sql import (
    BranchSQLOperator, SQLCheckOperator, SQLExecuteQueryOperator)
from airflow.providers.common.sql.sensors.sql import SqlSensor
from airflow.providers.http.operators.http import HttpOperator
from airflow.providers.http.sensors.http import HttpSensor
from airflow.providers.mysql.hooks.mysql import MySqlHook
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.providers.postgres.operators.postgres import PostgresOperator
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG("warehouse_sync", schedule=None, catchup=False,
         start_date=pendulum.datetime(2025, 1, 1, tz="UTC")) as dag:
    api_up = HttpSensor(task_id="api_up", http_conn_id="web_provider", endpoint="echo",
                        poke_interval=0.01, timeout=30)
    create = PostgresOperator(
        task_id="create", postgres_conn_id="pg_provider", split_statements=True,
        sql="DROP TABLE IF EXISTS staged; CREATE TABLE staged (v NUMERIC(10, 2))")
    fetch = HttpOperator(
        task_id="fetch", http_conn_id="web_provider", endpoint="pages", method="GET",
        data={"page": "1"},
        pagination_function=lambda r: {"data": {"page": str(r.json()["next"])}}
        if r.json()["next"] else None,
        response_filter=lambda responses: [i for r in responses for i in r.json()["items"]])

    @task
    def load(items):
        hook = PostgresHook(postgres_conn_id="pg_provider")
        return hook.insert_rows("staged", [(i / 4,) for i in items], target_fields=["v"])

    loaded = load(fetch.output)
    rows = SqlSensor(task_id="rows", conn_id="pg_provider", sql="SELECT COUNT(*) >= 3 FROM staged",
                     poke_interval=0.01, timeout=30)
    check = SQLCheckOperator(task_id="check", conn_id="pg_provider",
                             sql="SELECT COUNT(*) = 3, MIN(v) > 0 FROM staged")
    read = SQLExecuteQueryOperator(task_id="read", conn_id="pg_provider",
                                   sql="SELECT v FROM staged ORDER BY v")

    @task
    def mirror(values):
        hook = MySqlHook(mysql_conn_id="maria_provider")
        hook.run("DROP TABLE IF EXISTS mirrored; CREATE TABLE mirrored (v DECIMAL(10, 2))",
                 split_statements=True)
        hook.insert_rows("mirrored", [tuple(v) for v in values])

    @task
    def total():
        return MySqlHook(mysql_conn_id="maria_provider").get_first(
            "SELECT SUM(v) FROM mirrored")[0]

    big = BranchSQLOperator(task_id="big", conn_id="maria_provider",
                            sql="SELECT SUM(v) > 10 FROM mirrored",
                            follow_task_ids_if_true="report", follow_task_ids_if_false="skip")
    mirrored = mirror(read.output)
    [api_up, create] >> fetch
    create >> loaded >> rows >> check >> read
    mirrored >> total() >> big >> [EmptyOperator(task_id="report"), EmptyOperator(task_id="skip")]
'''


def test_airflow_dag_with_sql_and_http_providers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_conn: str, maria_conn: str,
        web_conn: str) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    path = tmp_path / "warehouse_sync.py"
    path.write_text(DAG_FILE)
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    run = loaded.dags["warehouse_sync"].test()
    assert run.states == {
        "api_up": "success", "create": "success", "fetch": "success", "load": "success",
        "rows": "success", "check": "success", "read": "success", "mirror": "success",
        "total": "success", "big": "success", "report": "success", "skip": "skipped"}
    assert run.ti("fetch").return_value == [10, 20, 30]
    assert run.ti("load").return_value == 3
    assert run.ti("read").return_value == [
        (Decimal("2.50"),), (Decimal("5.00"),), (Decimal("7.50"),)]
    total = run.ti("total").return_value  # MariaDB's DECIMAL, through XCom
    assert (type(total), total) == (Decimal, Decimal("15.00"))
    assert MySqlHook(mysql_conn_id=maria_conn).get_records(
        "SELECT v FROM mirrored ORDER BY v") == [
        (Decimal("2.50"),), (Decimal("5.00"),), (Decimal("7.50"),)]


@pytest.mark.slow  # a DAG processor child, the executor's fork server, 12 task processes
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # the metadata database
def test_airflow_dag_under_the_scheduler_and_local_executor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine, pg_conn: str,
        maria_conn: str, web_conn: str) -> None:
    """The same file from a DAGs folder, run by the scheduler and the local executor: each task
    imports the providers through the layer in its own process, with the connections of the
    environment it inherited."""
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "warehouse_sync.py").write_text(DAG_FILE)
    assert DagProcessor(engine, tmp_path / "dags").run_once().errors == {}
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=4, views=views, logs_folder=tmp_path / "logs",
                             heartbeat_seconds=0.5)
    executor.start()
    scheduler = Scheduler(engine, executor, views=views)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        with transaction(engine) as conn:
            _, run_id = trigger_dag(conn, "warehouse_sync", now=utcnow(), actor=Actor.USER)
        run = _wait_for_run(engine, run_id)
    finally:
        stop.set()
        thread.join(10)
        executor.stop()
    with engine.connect() as conn:
        tis = {t.task_id: t for t in ti_repo.by_run(conn, run.id)}
        values = xcom_repo.get_return_values(conn, [(run.id, "total"), (run.id, "fetch")])
    assert {t: ti.state for t, ti in tis.items()} == {
        "api_up": "success", "create": "success", "fetch": "success", "load": "success",
        "rows": "success", "check": "success", "read": "success", "mirror": "success",
        "total": "success", "big": "success", "report": "success", "skip": "skipped"}
    assert deserialize(values[(run.id, "total")]) == Decimal("15.00")
    assert deserialize(values[(run.id, "fetch")]) == [10, 20, 30]


def _wait_for_run(engine: Engine, run_id: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, "warehouse_sync", run_id)
        if run.state in ("success", "failed"):
            return run
        time.sleep(0.1)  # the run ends in other processes: polled, as the API would
    raise AssertionError(f"run {run_id} did not finish in {timeout}s")
