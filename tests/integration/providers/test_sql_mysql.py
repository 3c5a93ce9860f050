"""MySqlHook and MySqlOperator against the real MariaDB server (a scratch database)."""

from __future__ import annotations

import os
import tempfile
from decimal import Decimal
from pathlib import Path

import pymysql
import pytest
from sql_http_servers import define_connection

from statewright.providers.mysql.hooks.mysql import MySqlHook
from statewright.providers.mysql.operators.mysql import MySqlOperator
from statewright.sdk import DAG, BaseHook


@pytest.fixture
def hook(maria_conn: str) -> MySqlHook:
    hook = MySqlHook(mysql_conn_id=maria_conn)
    hook.run("DROP TABLE IF EXISTS sales; CREATE TABLE sales (id INT PRIMARY KEY, "
             "region VARCHAR(20), amount DECIMAL(10, 2))", split_statements=True)
    return hook


def test_queries_rows_and_replace(hook: MySqlHook, maria_scratch_database: str) -> None:
    assert hook.insert_rows("sales", [(1, "north", 10.5), (2, "south", 4)],
                            target_fields=["id", "region", "amount"]) == 2
    assert hook.get_first("SELECT SUM(amount) FROM sales") == (Decimal("14.50"),)
    assert hook.get_records("SELECT region FROM sales WHERE amount > %s", (5,)) == [("north",)]
    assert hook.get_first("SELECT region FROM sales WHERE id = %(id)s", {"id": 2}) == ("south",)
    hook.insert_rows("sales", [(2, "east", 7)], target_fields=["id", "region", "amount"],
                     replace=True)
    assert hook.get_records("SELECT id, region FROM sales ORDER BY id") == [
        (1, "north"), (2, "east")]
    with pytest.raises(pymysql.err.IntegrityError):
        hook.run(["INSERT INTO sales VALUES (3, 'w', 1)", "INSERT INTO sales VALUES (1, 'x', 1)"])
    assert hook.get_first("SELECT COUNT(*) FROM sales WHERE id = 3") == (0,)
    # Airflow-only extra keys (cursor, client) do not reach PyMySQL; charset does
    assert hook.get_first("SELECT @@character_set_client") == ("utf8mb4",)
    assert hook.get_first("SELECT DATABASE()") == (maria_scratch_database,)
    assert hook.get_uri().startswith("mysql+pymysql://root@127.0.0.1:3306/")
    assert isinstance(BaseHook.get_hook(hook.mysql_conn_id), MySqlHook)


def test_autocommit_and_init_command(hook: MySqlHook, maria_conn: str) -> None:
    conn = hook.get_conn()
    try:
        hook.set_autocommit(conn, True)
        assert hook.get_autocommit(conn) is True
        hook.set_autocommit(conn, False)
        assert hook.get_autocommit(conn) is False
    finally:
        conn.close()
    tuned = MySqlHook(mysql_conn_id=maria_conn,
                      init_command="SET @@session.sql_mode='PIPES_AS_CONCAT'")
    assert tuned.get_first("SELECT @@session.sql_mode") == ("PIPES_AS_CONCAT",)


def test_bulk_load_and_dump(hook: MySqlHook, tmp_path: Path) -> None:
    source = tmp_path / "sales.tsv"
    source.write_text("1\tnorth\t3.50\n2\tsouth\t1.25\n")
    hook.bulk_load("sales", str(source))
    assert hook.get_records("SELECT id, region, amount FROM sales ORDER BY id") == [
        (1, "north", Decimal("3.50")), (2, "south", Decimal("1.25"))]
    # the server writes the dump: a folder it may write to, on its machine (this one)
    folder = tempfile.mkdtemp(prefix="sw-mysql-dump-")
    os.chmod(folder, 0o777)
    dump = Path(folder) / "sales.tsv"
    try:
        hook.bulk_dump("sales", str(dump))
        assert dump.read_text() == "1\tnorth\t3.50\n2\tsouth\t1.25\n"
    finally:
        dump.unlink(missing_ok=True)
        os.rmdir(folder)


def test_mysql_operator(hook: MySqlHook, maria_conn: str) -> None:
    with DAG("mysql_operator"):
        write = MySqlOperator(task_id="w", mysql_conn_id=maria_conn,
                              sql="INSERT INTO sales VALUES (9, 'op', 2.5); "
                                  "INSERT INTO sales VALUES (10, 'op', 1)",
                              split_statements=True)
        total = MySqlOperator(task_id="t", mysql_conn_id=maria_conn,
                              sql="SELECT region, SUM(amount) FROM sales GROUP BY region")
    write.execute({})
    assert total.execute({}) == [("op", Decimal("3.50"))]
    assert isinstance(total.get_db_hook(), MySqlHook)


def test_cursor_extra_makes_dict_rows(hook: MySqlHook, maria_scratch_database: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    hook.insert_rows("sales", [(1, "north", 2)])
    define_connection(monkeypatch, "maria_dicts", {
        "conn_type": "mysql", "host": "127.0.0.1", "login": "root",
        "schema": maria_scratch_database, "extra": {"cursor": "dictcursor"}})
    dicts = MySqlHook(mysql_conn_id="maria_dicts")
    assert dicts.get_records("SELECT id, region FROM sales") == [{"id": 1, "region": "north"}]
    assert dicts.get_first("SELECT COUNT(*) AS n FROM sales") == {"n": 1}
    with dicts.get_sqlalchemy_engine().connect() as conn:  # the engine keeps plain rows
        assert conn.exec_driver_sql("SELECT 1").all() == [(1,)]
