"""The extract-check-load DAG of the SQL operators, against PostgreSQL and MariaDB, shared by
the local and the Celery executor tests."""

from __future__ import annotations

import textwrap
import time
import uuid
from typing import Any

import pymysql
from cryptography.fernet import MultiFernet
from sqlalchemy import Engine

from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk.connection import Connection
from statewright.services.secrets.admin import SecretsAdmin

PG_URI = "postgresql://postgres@127.0.0.1:5432/postgres"
MARIADB_DATABASE = "statewright_sql_test"
MARIADB_URI = f"mysql://root@127.0.0.1:3306/{MARIADB_DATABASE}"

DAG_TEXT = '''
from statewright.sdk import DAG, Variable, task
from statewright.providers.common.sql.hooks.sql import DbApiHook
from statewright.providers.common.sql.operators.sql import (
    SQLCheckOperator, SQLExecuteQueryOperator, SQLThresholdCheckOperator, SQLValueCheckOperator)
from statewright.providers.common.sql.sensors.sql import SqlSensor

TASK_DEFAULTS = DEFAULTS_HERE

with DAG("sql_ecl", default_args=TASK_DEFAULTS):
    for conn_id in ("pg_target", "maria_target"):
        src, dst = f"src_SUFFIX", f"dst_SUFFIX"
        setup = SQLExecuteQueryOperator(
            task_id=f"{conn_id}_setup", conn_id=conn_id,
            sql=f"DROP TABLE IF EXISTS {src}; CREATE TABLE {src} (id INT, amount INT); "
                f"INSERT INTO {src} VALUES (1, 10), (2, 20), (3, 30); "
                f"DROP TABLE IF EXISTS {dst}; CREATE TABLE {dst} (id INT, amount INT)",
            split_statements=True)
        ready = SqlSensor(task_id=f"{conn_id}_ready", conn_id=conn_id,
                          sql=f"SELECT COUNT(*) FROM {src}", poke_interval=0.1, timeout=30)
        extract = SQLExecuteQueryOperator(
            task_id=f"{conn_id}_extract", conn_id=conn_id,
            sql=f"SELECT id, amount FROM {src} WHERE amount >= %s ORDER BY id",
            parameters=[int(Variable.get("min_amount", default="0"))])
        checks = [
            SQLCheckOperator(task_id=f"{conn_id}_rows", conn_id=conn_id,
                             sql=f"SELECT COUNT(*) FROM {src}"),
            SQLValueCheckOperator(task_id=f"{conn_id}_sum", conn_id=conn_id,
                                  sql=f"SELECT SUM(amount) FROM {src}", pass_value=60,
                                  tolerance=0.01),
            SQLThresholdCheckOperator(task_id=f"{conn_id}_max", conn_id=conn_id,
                                      sql=f"SELECT MAX(amount) FROM {src}", min_threshold=1,
                                      max_threshold="SELECT 100"),
        ]

        @task(task_id=f"{conn_id}_load", **TASK_DEFAULTS)
        def load(rows, conn_id=conn_id, dst=dst):
            hook = DbApiHook(conn_id=conn_id)
            hook.insert_rows(dst, rows, target_fields=["id", "amount"])
            count, total = hook.get_first(f"SELECT COUNT(*), SUM(amount) FROM {dst}")
            return [int(count), int(total)]

        loaded = load(extract.output)
        setup >> ready >> extract >> checks
        checks >> loaded

    @task(**TASK_DEFAULTS)
    def threads():
        # lookups from several threads share the task's pipe to its worker
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda i: Variable.get("min_amount") if i % 2 else
                                DbApiHook(conn_id="pg_target").connection.host, range(40)))
        return sorted(set(got))

    threads()
'''


def dag_text(suffix: str, defaults: str = "{}") -> str:
    """The DAG file; ``defaults`` is the Python text of its tasks' default arguments."""
    return textwrap.dedent(DAG_TEXT).replace("SUFFIX", suffix).replace("DEFAULTS_HERE",
                                                                       defaults)


def seed_targets(engine: Engine, cipher: MultiFernet) -> str:
    """The two target connections in the database and a variable; returns a table suffix."""
    with pymysql.connect(host="127.0.0.1", port=3306, user="root") as conn:
        conn.cursor().execute(f"CREATE DATABASE IF NOT EXISTS {MARIADB_DATABASE}")
    admin = SecretsAdmin(engine, lambda: cipher)
    admin.add_connection(Connection(conn_id="pg_target", uri=PG_URI))
    admin.add_connection(Connection(conn_id="maria_target", uri=MARIADB_URI))
    admin.set_variable("min_amount", "20")
    return uuid.uuid4().hex[:10]


def wait_for_run(engine: Engine, dag_id: str, run_id: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, dag_id, run_id)
        if run.state in ("success", "failed"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish in {timeout}s")


def check_outcome(engine: Engine, run: Any, suffix: str) -> None:
    from statewright.db.repositories import xcoms as xcom_repo

    with engine.connect() as conn:
        tis = {t.task_id: t for t in ti_repo.by_run(conn, run.id)}
        threads = xcom_repo.get_return_values(conn, [(run.id, "threads")])
    states = {t: (ti.state, ti.state_message) for t, ti in tis.items()}
    assert run.state == "success", states
    assert len(tis) == 15
    assert threads[(run.id, "threads")] == ["127.0.0.1", "20"]
    drop_tables(suffix)


def drop_tables(suffix: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres",
                         autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS src_{suffix}, dst_{suffix}")
    with pymysql.connect(host="127.0.0.1", port=3306, user="root",
                         database=MARIADB_DATABASE) as conn:
        conn.cursor().execute(f"DROP TABLE IF EXISTS src_{suffix}, dst_{suffix}")
