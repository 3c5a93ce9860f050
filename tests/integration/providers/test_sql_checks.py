"""SqliteHook, SqliteOperator and the common-sql data-quality and branch operators, on SQLite,
PostgreSQL and MariaDB."""

from __future__ import annotations

import importlib.util
import sys
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.noop import NoopOperator

from statewright.core.errors import StatewrightError
from statewright.providers.common.sql.hooks.sql import DbApiHook
from statewright.providers.common.sql.operators.generic_transfer import GenericTransfer
from statewright.providers.common.sql.operators.sql import (
    BranchSQLOperator,
    SQLCheckFailed,
    SQLColumnCheckOperator,
    SQLIntervalCheckOperator,
    SQLTableCheckOperator,
    SQLValueCheckOperator,
)
from statewright.providers.common.sql.sensors.sql import SqlSensor
from statewright.providers.sqlite.hooks.sqlite import SqliteHook
from statewright.providers.sqlite.operators.sqlite import SqliteOperator
from statewright.sdk import DAG, BaseHook

ROWS = [(1, "a", 10, "2025-01-01"), (2, "b", 20, "2025-01-01"), (3, None, 30, "2025-01-08"),
        (4, "d", 45, "2025-01-08")]


@pytest.fixture(params=["sqlite", "pg", "maria"])
def orders(request: pytest.FixtureRequest) -> str:
    """The connection id of a database holding the table ``orders`` (ROWS)."""
    conn_id: str = request.getfixturevalue(f"{request.param}_conn")
    hook = DbApiHook(conn_id=conn_id)
    hook.run("DROP TABLE IF EXISTS orders; CREATE TABLE orders (id INT, customer VARCHAR(10), "
             "amount INT, ds VARCHAR(10))", split_statements=True)
    hook.insert_rows("orders", ROWS)
    return conn_id


def test_sqlite_hook_and_operator(sqlite_conn: str) -> None:
    hook = SqliteHook(sqlite_conn_id=sqlite_conn)
    hook.run("CREATE TABLE t (k TEXT PRIMARY KEY, v INT)")
    hook.insert_rows("t", [("x", 1), ("y", 2)], target_fields=["k", "v"])
    hook.insert_rows("t", [("x", 5)], target_fields=["k", "v"], replace=True)
    assert hook.get_records("SELECT k, v FROM t ORDER BY k") == [("x", 5), ("y", 2)]
    assert hook.get_first("SELECT v FROM t WHERE k = ?", ["y"]) == (2,)
    assert hook.placeholder == "?" and isinstance(BaseHook.get_hook(sqlite_conn), SqliteHook)
    with DAG("lite"):
        op = SqliteOperator(task_id="q", sqlite_conn_id=sqlite_conn,
                            sql="SELECT SUM(v) FROM t WHERE v > :low", parameters={"low": 1})
    assert op.execute({}) == [(7,)]


def test_dataframes(sqlite_conn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = SqliteHook(sqlite_conn_id=sqlite_conn)
    hook.run("CREATE TABLE t (k TEXT, v INT); INSERT INTO t VALUES ('x', 1), ('y', 2)",
             split_statements=True)
    if importlib.util.find_spec("pandas") is not None:
        frame = hook.get_pandas_df("SELECT k, v FROM t WHERE v >= ? ORDER BY k", [1])
        assert frame.to_dict("list") == {"k": ["x", "y"], "v": [1, 2]}
        assert hook.get_df("SELECT SUM(v) AS s FROM t")["s"].tolist() == [3]
    monkeypatch.setitem(sys.modules, "pandas", None)  # as without pandas installed
    with pytest.raises(ImportError, match="pip install pandas"):
        hook.get_pandas_df("SELECT 1")


def test_column_checks(orders: str) -> None:
    with DAG("cols"):
        passing = SQLColumnCheckOperator(
            task_id="ok", conn_id=orders, table="orders", column_mapping={
                "id": {"null_check": {"equal_to": 0}, "unique_check": {"equal_to": 0},
                       "distinct_check": {"geq_to": 4}},
                "amount": {"min": {"greater_than": 5}, "max": {"leq_to": 50},
                           "null_check": {"equal_to": 0}}})
        mapping: dict[str, Any] = {
            "customer": {"null_check": {"equal_to": 0}},
            "amount": {"max": {"equal_to": 42, "tolerance": 0.1},
                       "min": {"equal_to": 30, "partition_clause": "ds = '2025-01-08'"}}}
        failing = SQLColumnCheckOperator(task_id="bad", conn_id=orders, table="orders",
                                         column_mapping=mapping)
    passing.execute({})
    with pytest.raises(SQLCheckFailed, match="Check: null_check") as failed:
        failing.execute({})
    assert "Check: max" not in str(failed.value)  # 45 is within 10% of 42
    assert mapping["customer"]["null_check"] == {"equal_to": 0, "result": 1, "success": False}
    assert mapping["amount"]["min"]["success"] is True
    with pytest.raises(ValueError, match="Invalid column check"):
        SQLColumnCheckOperator(task_id="x", conn_id=orders, table="orders",
                               column_mapping={"id": {"mean": {"equal_to": 1}}})


def test_table_checks(orders: str) -> None:
    checks: dict[str, Any] = {"positive": {"check_statement": "amount > 0"},
                              "big": {"check_statement": "amount >= 20"},
                              "recent_big": {"check_statement": "amount >= 20",
                                             "partition_clause": "ds = '2025-01-08'"}}
    with DAG("tables"):
        op = SQLTableCheckOperator(task_id="t", conn_id=orders, table="orders", checks=checks)
    with pytest.raises(SQLCheckFailed, match=r"The following tests have failed:\nbig$"):
        op.execute({})
    assert [checks[name]["success"] for name in checks] == [True, False, True]


def test_interval_and_branch_in_a_run(orders: str) -> None:
    """Templates of the interval check are rendered for the run (``ds`` and ``days_back``); the
    branch follows the truth of its query's first cell."""
    with DAG("quality", schedule=None, start_date=datetime(2025, 1, 1, tzinfo=UTC)) as dag:
        grows = SQLIntervalCheckOperator(
            task_id="grows", conn_id=orders, table="orders", days_back=7,
            metrics_thresholds={"SUM(amount)": 3, "COUNT(*)": 1.5})
        too_much = SQLIntervalCheckOperator(
            task_id="too_much", conn_id=orders, table="orders", days_back=-7,
            ratio_formula="relative_diff", metrics_thresholds={"SUM(amount)": 1})
        branch = BranchSQLOperator(
            task_id="branch", conn_id=orders, sql="SELECT COUNT(*) > 3 FROM orders",
            follow_task_ids_if_true="many", follow_task_ids_if_false="few")
        branch >> [NoopOperator(task_id="many"), NoopOperator(task_id="few")]
        grows >> too_much
    run = dag.test(logical_date=datetime(2025, 1, 8, tzinfo=UTC))
    # SUM 75 vs 30: max/min 2.5 < 3 and COUNT 2 vs 2; relative diff (75-30)/30 = 1.5 >= 1
    assert run.states == {"grows": "success", "too_much": "failed", "branch": "success",
                          "many": "success", "few": "skipped"}
    assert "SUM(amount)" in (run.ti("too_much").state_message or "")


def test_sql_sensor_selector_and_failure(orders: str) -> None:
    with DAG("sensing"):
        second = SqlSensor(task_id="s", conn_id=orders,
                           sql="SELECT COUNT(*), SUM(amount) FROM orders",
                           selector=lambda row: row[1], success=lambda total: total > 100)
        first = SqlSensor(task_id="f", conn_id=orders, sql="SELECT COUNT(*), 0 FROM orders")
        failing = SqlSensor(task_id="x", conn_id=orders, sql="SELECT MAX(amount) FROM orders",
                            failure=lambda biggest: biggest > 40)
        empty = SqlSensor(task_id="e", conn_id=orders, sql="SELECT id FROM orders WHERE id < 0",
                          fail_on_empty=True)
    assert second.poke({}) is True and first.poke({}) is True
    with pytest.raises(StatewrightError, match=r"self.failure\(45\) returned True"):
        failing.poke({})
    with pytest.raises(StatewrightError, match="fail_on_empty"):
        empty.poke({})


def test_generic_transfer_between_databases(pg_conn: str, maria_conn: str, sqlite_conn: str
                                            ) -> None:
    """PostgreSQL to MariaDB in one read, then MariaDB to SQLite in pages of 2."""
    source = DbApiHook(conn_id=pg_conn)
    source.run("DROP TABLE IF EXISTS src; CREATE TABLE src (id INT, name VARCHAR(5)); "
               "INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')",
               split_statements=True)
    with DAG("transfer"):
        to_maria = GenericTransfer(
            task_id="to_maria", sql="SELECT id, name FROM src WHERE id > 1",
            source_conn_id=pg_conn, destination_conn_id=maria_conn, destination_table="dst",
            preoperator=["DROP TABLE IF EXISTS dst", "CREATE TABLE dst (id INT, name CHAR(5))"],
            insert_args={"target_fields": ["id", "name"], "commit_every": 3})
        to_lite = GenericTransfer(
            task_id="to_lite", sql="SELECT id, name FROM dst ORDER BY id;",
            source_conn_id=maria_conn, destination_conn_id=sqlite_conn,
            destination_table="copy", preoperator="CREATE TABLE copy (id INT, name TEXT)",
            page_size=2)
    assert to_maria.execute({}) == 4
    assert to_lite.execute({}) == 4
    assert SqliteHook(sqlite_conn_id=sqlite_conn).get_records(
        "SELECT id, name FROM copy ORDER BY id") == [(2, "b"), (3, "c"), (4, "d"), (5, "e")]


def test_value_check_with_parameters(orders: str) -> None:
    mark = "?" if orders.startswith("lite") else "%s"
    with DAG("values"):
        ok = SQLValueCheckOperator(task_id="ok", conn_id=orders, pass_value=75,
                                   sql=f"SELECT SUM(amount) FROM orders WHERE ds = {mark}",
                                   parameters=["2025-01-08"])
        off = SQLValueCheckOperator(task_id="off", conn_id=orders, pass_value=75,
                                    tolerance=0.1, parameters=["2025-01-01"],
                                    sql=f"SELECT SUM(amount) FROM orders WHERE ds = {mark}")
    ok.execute({})
    with pytest.raises(SQLCheckFailed, match="Pass value:75"):
        off.execute({})
