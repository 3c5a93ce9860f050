"""PostgresHook and PostgresOperator against the real PostgreSQL server (a scratch database)."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from sql_http_servers import define_connection

from statewright.providers.postgres.hooks.postgres import PostgresHook
from statewright.providers.postgres.operators.postgres import PostgresOperator
from statewright.sdk import DAG, BaseHook


@pytest.fixture
def hook(pg_conn: str) -> PostgresHook:
    hook = PostgresHook(postgres_conn_id=pg_conn)
    hook.run("DROP TABLE IF EXISTS items; "
             "CREATE TABLE items (id INT PRIMARY KEY, name TEXT, price NUMERIC(10, 2))",
             split_statements=True)
    return hook


def test_queries_rows_and_transactions(hook: PostgresHook, pg_scratch_database: str) -> None:
    assert hook.insert_rows("items", [(1, "a", 1.5), (2, "b", 2.25), (3, "c", None)],
                            target_fields=["id", "name", "price"], commit_every=2) == 3
    assert hook.get_records("SELECT id, name FROM items WHERE id > %s ORDER BY id", (1,)) == [
        (2, "b"), (3, "c")]
    assert hook.get_first("SELECT SUM(price) FROM items") == (Decimal("3.75"),)
    assert hook.get_first("SELECT name FROM items WHERE id = %(id)s", {"id": 3}) == ("c",)
    assert hook.last_description is not None and hook.last_description[0][0] == "name"
    assert hook.get_first("SELECT current_database()") == (pg_scratch_database,)
    # run: one transaction, so a failing statement leaves nothing of the earlier ones
    with pytest.raises(psycopg.errors.UniqueViolation):
        hook.run(["INSERT INTO items VALUES (10, 'x', 1)", "INSERT INTO items VALUES (1, 'y', 1)"])
    assert hook.get_first("SELECT COUNT(*) FROM items WHERE id = 10") == (0,)
    # the extra's driver keys reach psycopg
    assert hook.get_first("SELECT current_setting('application_name')") == (
        "statewright-provider-test",)


def test_upsert_with_replace_index(hook: PostgresHook) -> None:
    hook.insert_rows("items", [(1, "a", 1)], target_fields=["id", "name", "price"])
    hook.insert_rows("items", [(1, "A", 9), (2, "b", 2)], target_fields=["id", "name", "price"],
                     replace=True, replace_index="id")
    assert hook.get_records("SELECT id, name, price FROM items ORDER BY id") == [
        (1, "A", 9), (2, "b", 2)]
    with pytest.raises(ValueError, match="requires an unique index"):
        hook.insert_rows("items", [(1, "a", 1)], target_fields=["id", "name", "price"],
                         replace=True)
    assert hook.get_table_primary_key("items") == ["id"]


def test_copy_bulk_load_and_dump(hook: PostgresHook, tmp_path: Path) -> None:
    source = tmp_path / "in.tsv"
    source.write_text("1\tpen\t1.20\n2\tink\t\\N\n")
    hook.bulk_load("items", str(source))
    assert hook.get_records("SELECT id, name, price FROM items ORDER BY id") == [
        (1, "pen", Decimal("1.20")), (2, "ink", None)]
    dump = tmp_path / "out" / "items.tsv"
    dump.parent.mkdir()
    hook.bulk_dump("items", str(dump))
    assert dump.read_text() == "1\tpen\t1.20\n2\tink\t\\N\n"
    csv = tmp_path / "items.csv"
    hook.copy_expert("COPY (SELECT name FROM items ORDER BY id) TO STDOUT WITH CSV HEADER",
                     str(csv))
    assert csv.read_text().splitlines() == ["name", "pen", "ink"]


def test_engine_uri_autocommit_and_options(hook: PostgresHook, pg_conn: str) -> None:
    assert hook.get_uri().startswith("postgresql+psycopg://postgres@127.0.0.1:5432/")
    with hook.get_sqlalchemy_engine().connect() as conn:
        assert conn.exec_driver_sql("SELECT 7").scalar() == 7
    # VACUUM cannot run inside a transaction: autocommit=True is the way, as in Airflow
    hook.run("VACUUM items", autocommit=True)
    with pytest.raises(psycopg.errors.ActiveSqlTransaction):
        hook.run("VACUUM items")
    # get_conn is the driver's connection: `with` commits at its end, as DAG code expects
    with hook.get_conn() as conn, conn.cursor() as cursor:
        assert isinstance(conn, psycopg.Connection)
        cursor.execute("INSERT INTO items VALUES (40, 'with', 1)")
    assert hook.get_first("SELECT name FROM items WHERE id = 40") == ("with",)
    conn = hook.get_conn()
    try:
        assert hook.get_autocommit(conn) is False
        hook.set_autocommit(conn, True)
        assert hook.get_autocommit(conn) is True
    finally:
        conn.close()
    tuned = PostgresHook(postgres_conn_id=pg_conn, options="-c statement_timeout=1234")
    assert tuned.get_first("SHOW statement_timeout") == ("1234ms",)
    assert isinstance(BaseHook.get_hook(pg_conn), PostgresHook)
    assert PostgresHook().postgres_conn_id == "postgres_default"


def test_postgres_operator_runs_as_sql_execute_query(hook: PostgresHook, pg_conn: str) -> None:
    with DAG("pg_operator"):
        write = PostgresOperator(task_id="write", postgres_conn_id=pg_conn,
                                 sql="INSERT INTO items VALUES (%(id)s, %(name)s, 1)",
                                 parameters={"id": 5, "name": "op"})
        read = PostgresOperator(task_id="read", postgres_conn_id=pg_conn,
                                sql="SELECT id, name, current_setting('search_path') FROM items",
                                runtime_parameters={"search_path": "elsewhere, public"})
    assert write.execute({}) is None
    assert read.execute({}) == [(5, "op", "elsewhere, public")]
    assert isinstance(read.get_db_hook(), PostgresHook)


def test_cursor_extra_makes_dict_or_named_rows(hook: PostgresHook, pg_scratch_database: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    hook.insert_rows("items", [(1, "a", 2)])
    for kind in ("realdictcursor", "namedtuplecursor"):
        define_connection(monkeypatch, "pg_rows", {
            "conn_type": "postgres", "host": "127.0.0.1", "login": "postgres",
            "schema": pg_scratch_database, "extra": {"cursor": kind}})
        rows = PostgresHook(postgres_conn_id="pg_rows").get_records("SELECT id, name FROM items")
        if kind == "realdictcursor":
            assert rows == [{"id": 1, "name": "a"}]
        else:
            assert (rows[0].id, rows[0].name) == (1, "a")


def test_an_operator_uses_the_hook_of_its_connection_type(pg_conn: str) -> None:
    """Without the postgres provider imported by the DAG file, a postgres connection's SQL
    operator still gets PostgresHook (with its cursor extra), as Airflow's conn.get_hook()."""
    code = (
        "from statewright.providers.common.sql.operators.sql import SQLExecuteQueryOperator\n"
        "from statewright.sdk import DAG\n"
        "with DAG('d'):\n"
        f"    op = SQLExecuteQueryOperator(task_id='q', conn_id='{pg_conn}',\n"
        "                                 sql='SELECT 1 AS one')\n"
        "print(type(op.get_db_hook()).__name__, op.execute({}))\n")
    env = {**os.environ, f"STATEWRIGHT_CONN_{pg_conn.upper()}":
           os.environ[f"STATEWRIGHT_CONN_{pg_conn.upper()}"] + "&cursor=realdictcursor"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.split(" ", 1) == ["PostgresHook", "[{'one': 1}]\n"], out.stderr
