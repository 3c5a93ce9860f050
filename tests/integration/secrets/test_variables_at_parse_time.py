"""A DAG file that reads a variable or a connection at its top level (while the DAG processor
parses it) sees what the database holds, as its tasks do."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine

from statewright.core.clock import ManualClock
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors
from statewright.db.repositories import variables as var_repo
from statewright.services.dag_processor import DagProcessor
from statewright.services.secrets.store import to_record

NOW = datetime(2026, 1, 10, 12, tzinfo=UTC)

FILE = textwrap.dedent('''
    from statewright.sdk import DAG, BaseHook, EmptyOperator, Variable

    regions = Variable.get("regions", deserialize_json=True)
    host = BaseHook.get_connection("warehouse").host
    with DAG("per_region", schedule=None, tags=[host]):
        for region in regions:
            EmptyOperator(task_id=f"load_{region}")
''')


def test_a_dag_file_reads_variables_and_connections_from_the_database(
        engine: Engine, tmp_path: Path, cipher: MultiFernet) -> None:
    # ``cipher``: this process and the DAG-import children share one key (whatever key an
    # earlier test of the session left installed)
    from statewright.db.repositories import connections as conn_repo
    from statewright.sdk.connection import Connection

    with transaction(engine) as conn:
        var_repo.put(conn, cipher, "regions", '["emea", "apac"]', now=NOW)
        conn_repo.put(conn, cipher, to_record(Connection.from_uri_or_json(
            "warehouse", "postgresql://u:pw@db.internal:5432/w")), now=NOW)
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "per_region.py").write_text(FILE)
    DagProcessor(engine, folder, clock=ManualClock(NOW), timeout=20.0).run_once()
    with engine.connect() as conn:
        assert import_errors.list_all(conn) == []
        dag = dag_repo.get_dag(conn, "per_region")
    tasks = [t["task_id"] for t in dag.serialized["tasks"]]
    assert tasks == ["load_emea", "load_apac"]
    assert "db.internal" in str(dag.serialized.get("tags"))


def test_a_missing_variable_at_parse_time_is_an_import_error_naming_it(
        engine: Engine, tmp_path: Path) -> None:
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "needs_var.py").write_text(
        "from statewright.sdk import Variable\nVariable.get('no_such_variable_here')\n")
    DagProcessor(engine, folder, clock=ManualClock(NOW), timeout=20.0).run_once()
    with engine.connect() as conn:
        [error] = import_errors.list_all(conn)
    assert "no_such_variable_here" in error.stacktrace
