"""Airflow 2 DAG code that opens ``airflow.settings.Session()`` and adds model objects: the
variables it adds are stored, connections and pools and queries of Airflow's tables fail the
task with a clear error (statewright's tasks hold no database session, Airflow 3's neither).
SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from statewright.sdk.loader import load_dag_file

SESSION_FILE = """\
from datetime import datetime

from airflow import DAG, models
from airflow.models import DagRun, Pool
from airflow.operators.python_operator import PythonOperator
from airflow.settings import Session


def add_variable():
    session = Session()
    session.add(models.Variable(key="sql_path", val="/usr/local/airflow/sql"))
    session.rollback()  # nothing stored
    session.add(models.Variable(key="sql_path", val="/opt/sql"))
    session.commit()
    session.close()


def read_variable():
    return models.Variable.get("sql_path")


def add_connection():
    session = Session()
    conn = models.Connection()
    conn.conn_id = "postgres_dwh"
    conn.conn_type = "postgres"
    conn.set_password("dwh-pw")
    session.add(conn)
    session.commit()


def add_pool():
    with Session() as session:
        session.add(Pool(pool="dwh", slots=10, description="DWH"))


def query_runs():
    return Session().query(DagRun).count()


with DAG("session_file", start_date=datetime(2024, 1, 1), schedule_interval=None) as dag:
    add = PythonOperator(task_id="add_variable", python_callable=add_variable)
    read = PythonOperator(task_id="read_variable", python_callable=read_variable)
    add >> read
    for name, call in [("add_connection", add_connection), ("add_pool", add_pool),
                       ("query_runs", query_runs)]:
        PythonOperator(task_id=name, python_callable=call)
"""


@pytest.fixture(autouse=True)
def airflow_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")


def test_a_session_stores_variables_and_refuses_the_rest_clearly(
        engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "session_file.py"
    path.write_text(SESSION_FILE)
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    run = loaded.dags["session_file"].test(
        logical_date=datetime(2024, 3, 10, tzinfo=UTC), engine=engine)
    assert run.states == {"add_variable": "success", "read_variable": "success",
                          "add_connection": "failed", "add_pool": "failed",
                          "query_runs": "failed"}
    assert run.ti("read_variable").return_value == "/opt/sql"
    assert "statewright connections add" in (run.ti("add_connection").state_message or "")
    assert "statewright pools import" in (run.ti("add_pool").state_message or "")
    assert "Direct database access" in (run.ti("query_runs").state_message or "")
