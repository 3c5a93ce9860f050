"""DbApiHook and the common-sql operators and sensor, as Airflow defines them, on SQLite (the
PostgreSQL and MariaDB runs are in tests/integration/secrets and tests/integration/celery)."""

from __future__ import annotations

from pathlib import Path

import pytest

from statewright.providers.common.sql.hooks.sql import DbApiHook, fetch_all_handler
from statewright.providers.common.sql.operators.sql import (
    SQLCheckFailed,
    SQLCheckOperator,
    SQLExecuteQueryOperator,
    SQLThresholdCheckOperator,
    SQLValueCheckOperator,
)
from statewright.providers.common.sql.sensors.sql import SqlSensor
from statewright.sdk import DAG, BaseHook, secrets


@pytest.fixture
def lite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DbApiHook:
    monkeypatch.setenv("STATEWRIGHT_CONN_LITE",
                       f'{{"conn_type": "sqlite", "host": "{tmp_path / "t.db"}"}}')
    secrets.clear_cache()
    hook = DbApiHook(conn_id="lite")
    hook.run("CREATE TABLE t (id INTEGER, amount INTEGER, name TEXT); "
             "INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 0, NULL)",
             split_statements=True)
    return hook


def test_hook_queries(lite: DbApiHook) -> None:
    assert lite.get_records("SELECT id FROM t WHERE amount > ? ORDER BY id", [5]) == [(1,), (2,)]
    assert lite.get_first("SELECT COUNT(*) FROM t") == (3,)
    assert lite.get_first("SELECT id FROM t WHERE id = :id", {"id": 2}) == (2,)
    both = lite.run("SELECT 1; SELECT 2", split_statements=True, return_last=False,
                    handler=fetch_all_handler)
    assert both == [[(1,)], [(2,)]]
    assert lite.run("SELECT 1; SELECT 2", split_statements=True,
                    handler=fetch_all_handler) == [(2,)]
    assert lite.insert_rows("t", [(4, 40, "d"), (5, 50, "e")], target_fields=["id", "amount",
                                                                             "name"],
                            commit_every=1) == 2
    assert lite.get_first("SELECT SUM(amount) FROM t") == (120,)
    assert lite.get_uri().startswith("sqlite:///") and lite.test_connection()[0]
    assert isinstance(BaseHook.get_hook("lite"), DbApiHook)


def test_hook_refuses_other_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_CONN_WEIRD", "ftp://h")
    with pytest.raises(ValueError, match="'weird' has the type 'ftp'"):
        DbApiHook(conn_id="weird").get_sqlalchemy_engine()
    with pytest.raises(ValueError, match="needs a connection id"):
        DbApiHook()


def test_execute_query_operator_with_a_sql_file(lite: DbApiHook, tmp_path: Path) -> None:
    (tmp_path / "q.sql").write_text("SELECT id, name FROM t WHERE amount >= ? ORDER BY id")
    with DAG("d") as dag:
        op = SQLExecuteQueryOperator(task_id="q", conn_id="lite", sql="q.sql", parameters=[10])
        silent = SQLExecuteQueryOperator(task_id="s", conn_id="lite", sql="SELECT 1",
                                         do_xcom_push=False)
        missing = SQLExecuteQueryOperator(task_id="m", conn_id="lite", sql="nowhere.sql")
    dag.template_searchpath = [str(tmp_path)]  # type: ignore[attr-defined]
    assert op.execute({}) == [(1, "a"), (2, "b")]
    assert silent.execute({}) is None
    with pytest.raises(FileNotFoundError, match=r"nowhere\.sql"):
        missing.execute({})


def test_check_operators(lite: DbApiHook) -> None:
    with DAG("d"):
        ok = SQLCheckOperator(task_id="ok", conn_id="lite", sql="SELECT COUNT(*), MAX(id) FROM t")
        falsy = SQLCheckOperator(task_id="f", conn_id="lite", sql="SELECT amount FROM t "
                                                                  "WHERE id = 3")
        empty = SQLCheckOperator(task_id="e", conn_id="lite", sql="SELECT 1 FROM t WHERE 0")
        value = SQLValueCheckOperator(task_id="v", conn_id="lite",
                                      sql="SELECT SUM(amount) FROM t", pass_value=31,
                                      tolerance=0.1)
        strict = SQLValueCheckOperator(task_id="s", conn_id="lite",
                                       sql="SELECT SUM(amount) FROM t", pass_value=31)
        text = SQLValueCheckOperator(task_id="t", conn_id="lite",
                                     sql="SELECT name FROM t WHERE id = 1", pass_value="a")
        inside = SQLThresholdCheckOperator(task_id="i", conn_id="lite",
                                           sql="SELECT MAX(amount) FROM t", min_threshold=5,
                                           max_threshold="SELECT 25")
        outside = SQLThresholdCheckOperator(task_id="o", conn_id="lite",
                                            sql="SELECT MAX(amount) FROM t", min_threshold=21,
                                            max_threshold=30)
    ok.execute({})
    with pytest.raises(SQLCheckFailed, match="Test failed"):
        falsy.execute({})
    with pytest.raises(SQLCheckFailed, match="returned zero rows"):
        empty.execute({})
    value.execute({})
    with pytest.raises(SQLCheckFailed, match="Pass value:31"):
        strict.execute({})
    text.execute({})
    assert inside.execute({})["within_threshold"] is True
    with pytest.raises(SQLCheckFailed, match='Threshold Check: "o" failed'):
        outside.execute({})


def test_sql_sensor(lite: DbApiHook) -> None:
    with DAG("d"):
        ready = SqlSensor(task_id="r", conn_id="lite", sql="SELECT COUNT(*) FROM t")
        zero = SqlSensor(task_id="z", conn_id="lite", sql="SELECT amount FROM t WHERE id = 3")
        none = SqlSensor(task_id="n", conn_id="lite", sql="SELECT 1 FROM t WHERE 0")
        strict = SqlSensor(task_id="s", conn_id="lite", sql="SELECT 1 FROM t WHERE 0",
                           fail_on_empty=True)
        judged = SqlSensor(task_id="j", conn_id="lite", sql="SELECT MAX(amount) FROM t",
                           success=lambda v: v > 100, failure=lambda v: v < 0)
        failing = SqlSensor(task_id="f", conn_id="lite", sql="SELECT MAX(amount) FROM t",
                            failure=lambda v: v == 20)
    assert ready.poke({}) is True and zero.poke({}) is False and none.poke({}) is False
    with pytest.raises(RuntimeError, match="fail_on_empty"):
        strict.poke({})
    assert judged.poke({}) is False
    with pytest.raises(RuntimeError, match="Failure criteria met"):
        failing.poke({})
    with pytest.raises(ValueError, match="success must be a callable"), DAG("e"):
        SqlSensor(task_id="x", conn_id="lite", sql="SELECT 1", success="yes")  # type: ignore[arg-type]


def test_a_hook_keeps_no_connection_open_between_queries(lite: DbApiHook) -> None:
    """Each connection a hook hands out is closed for real when its user closes it: nothing
    pooled stays open for the garbage collector (a server database would see it linger)."""
    import sqlite3

    engine = lite.get_sqlalchemy_engine()
    opened: list[sqlite3.Connection] = []
    from sqlalchemy import event

    event.listen(engine, "connect", lambda dbapi_conn, rec: opened.append(dbapi_conn))
    assert lite.get_first("SELECT COUNT(*) FROM t") == (3,)
    assert lite.get_records("SELECT id FROM t ORDER BY id") == [(1,), (2,), (3,)]
    assert len(opened) == 2
    for conn in opened:  # the driver's connections themselves are closed
        with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
            conn.execute("SELECT 1")
