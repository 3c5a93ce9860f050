"""A DAG with more tasks than ``STATEWRIGHT_MAX_TIS_PER_RUN`` is refused when its file is
loaded: no run of it of any kind is created, the import error says why, and a later process
with a higher limit loads it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors
from statewright.db.tables import dag_run
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import DagNotFound, trigger_dag
from statewright.services.scheduler.dagrun_creation import DagRunCreation

WIDE = '''
from datetime import datetime
from statewright.sdk import DAG, EmptyOperator

with DAG("wide_daily", schedule="@daily", start_date=datetime(2026, 1, 1), catchup=True):
    for i in range(5):
        EmptyOperator(task_id=f"t{i}")
'''
NOW = datetime(2026, 1, 3, 12, tzinfo=UTC)


def _runs(engine: Engine) -> int:
    with read_snapshot(engine) as conn:
        return int(conn.execute(select(func.count()).select_from(dag_run)).scalar_one())


def test_a_dag_over_the_limit_is_refused_at_load_and_gets_no_runs(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.core.transitions import Actor

    (tmp_path / "wide.py").write_text(WIDE)
    monkeypatch.setenv("STATEWRIGHT_MAX_TIS_PER_RUN", "4")
    stats = DagProcessor(engine, tmp_path, paused_at_creation=False).run_once()
    (error,) = stats.errors.values()
    assert "DAG 'wide_daily' has 5 tasks, more than the 4 task instances a run may have" in error
    with read_snapshot(engine) as conn:
        assert dag_repo.get_dag(conn, "wide_daily") is None
        assert "STATEWRIGHT_MAX_TIS_PER_RUN" in import_errors.list_all(conn)[0].stacktrace
    assert DagRunCreation().create_due_runs(engine, NOW) == 0  # no scheduled run
    with pytest.raises(DagNotFound, match="has 5 tasks, more than the 4"), \
            transaction(engine) as conn:
        trigger_dag(conn, "wide_daily", now=NOW, actor=Actor.USER)
    assert _runs(engine) == 0

    # The same file, unchanged, with the limit raised: a new process loads it, and it runs.
    monkeypatch.setenv("STATEWRIGHT_MAX_TIS_PER_RUN", "5")
    again = DagProcessor(engine, tmp_path, paused_at_creation=False).run_once()
    assert again.errors == {}
    with read_snapshot(engine) as conn:
        assert dag_repo.get_dag(conn, "wide_daily") is not None
        assert import_errors.list_all(conn) == []
    assert DagRunCreation().create_due_runs(engine, NOW) >= 1
