"""A try's upstream values are read for any number of upstreams: a task below 10,000 tasks
once never started on PostgreSQL, whose parser ran out of stack on an ``IN`` list of 10,000
row values (the executor's step failed on every pass and the task stayed queued)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, select
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import xcoms as xcom_repo
from statewright.db.tables import dag_run
from statewright.sdk import DAG
from statewright.services.dag_processor.sync import FileSync, ImportOutcome
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, tzinfo=UTC)
N = 10_000


def test_the_values_of_ten_thousand_upstreams_are_read_and_cleared(engine: Engine) -> None:
    with DAG("wide") as dag:
        NoopOperator(task_id="t")
    with transaction(engine) as conn:
        FileSync(conn, now=NOW, folder_prefix="/d/", present_files={"/d/w.py"},
                 paused_at_creation=False).file(
            "/d/w.py", ImportOutcome("/d/w.py", dags=[dag.serialize()]), mtime=0.0, size=0,
            content_hash="w")
        trigger_dag(conn, "wide", now=NOW, actor=Actor.USER, run_id="r")
        run = conn.execute(select(dag_run.c.id)).scalar_one()
        xcom_repo.set_return_values(conn, [(run, f"t{i}", -1, i) for i in (0, 4_321, N - 1)],
                                    NOW)
    pairs = [(run, f"t{i}") for i in range(N)]
    with engine.connect() as conn:
        got = xcom_repo.get_values(conn, pairs)
    assert got == {(run, f"t{i}"): {-1: {"return_value": i}} for i in (0, 4_321, N - 1)}
    with transaction(engine) as conn:
        xcom_repo.clear_tasks(conn, [(run, t, -1) for run, t in pairs])
        assert xcom_repo.get_values(conn, pairs) == {}
