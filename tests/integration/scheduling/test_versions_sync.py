"""DAG versions: written by the DAG processor's sync when a DAG's structure or code changes;
runs record the version they were created with, tries the version they ran."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dag_versions
from statewright.db.tables import dag_run, task_instance
from statewright.db.tables_versions import dag_version
from statewright.sdk import DAG
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def shape(*task_ids: str) -> DAG:
    with DAG("versioned") as dag:
        first = NoopOperator(task_id="first")
        for t in task_ids:
            first >> NoopOperator(task_id=t)
    return dag


def versions(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return dag_versions.list_versions(conn, "versioned")


def sync_file(engine: Engine, path: Path, outcome: ImportOutcome, now: datetime) -> Any:
    with transaction(engine) as conn:
        return FileSync(conn, now=now, folder_prefix=str(path.parent) + "/",
                        present_files={str(path)}, paused_at_creation=False
                        ).file(str(path), outcome, mtime=0.0, size=0, content_hash=None)


def test_a_change_mid_run_makes_a_version_and_tries_record_theirs(
        harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    h.sync(shape("a"))
    h.sync(shape("a"))  # parsed again, nothing changed: no row
    assert [v.version_number for v in versions(engine)] == [1]
    with transaction(engine) as conn:
        trigger_dag(conn, "versioned", now=h.clock(), actor=Actor.USER, run_id="r1")
    h.executor.hold = True
    h.loop()  # "first" queued, "a" waits
    v1 = versions(engine)[0].id
    assert {t.task_id: t.dag_version_id for t in h.tis("versioned")} == {"first": v1, "a": v1}

    h.sync(shape("a", "added"))
    v2 = versions(engine)[1].id
    assert [v.version_number for v in versions(engine)] == [1, 2]
    assert h.runs("versioned")[0].dag_version_id == v1  # the version it was created with
    h.executor.hold = False
    h.executor.finish()
    h.loop()
    tis = {t.task_id: t for t in h.tis("versioned")}
    assert {k: t.state for k, t in tis.items()} == {"first": "success", "a": "success",
                                                    "added": "success"}
    # "first" started under version 2 too: it is queued under v1 but its try starts now.
    assert tis["a"].dag_version_id == tis["added"].dag_version_id == v2

    with transaction(engine) as conn:
        trigger_dag(conn, "versioned", now=h.clock(), actor=Actor.USER, run_id="r2")
    assert h.runs("versioned")[1].dag_version_id == v2
    with engine.connect() as conn:
        assert conn.execute(select(dag_version)).all().__len__() == 2  # one row per version


def test_a_code_change_alone_makes_a_version(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "versioned.py"
    path.write_text("# one\n")
    ser = {**shape("a").serialize(), "fileloc": str(path)}
    sync_file(engine, path, ImportOutcome(str(path), dags=[ser]), NOW)
    sync_file(engine, path, ImportOutcome(str(path), dags=[ser]), NOW)
    path.write_text("# two: the callable's body changed\n")
    sync_file(engine, path, ImportOutcome(str(path), dags=[ser]), NOW)
    rows = versions(engine)
    assert [v.version_number for v in rows] == [1, 2]
    assert rows[0].structure_hash == rows[1].structure_hash
    assert rows[0].code_hash != rows[1].code_hash
    with engine.connect() as conn:
        assert dag_versions.get_version(conn, "versioned", 1).source_code == "# one\n"
        assert "body changed" in dag_versions.get_version(conn, "versioned").source_code


def test_a_change_that_cannot_be_serialized_keeps_the_previous_version(
        engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "versioned.py"
    path.write_text("# one\n")
    ser = {**shape("a").serialize(), "fileloc": str(path)}
    sync_file(engine, path, ImportOutcome(str(path), dags=[ser]), NOW)
    path.write_text("# two: not serializable\n")
    result = sync_file(engine, path, ImportOutcome(
        str(path), dag_errors={"versioned": "a default_args value is not JSON"}), NOW)
    assert result.error is not None and "cannot be serialized" in result.error
    rows = versions(engine)
    assert [v.version_number for v in rows] == [1]
    with engine.connect() as conn:
        assert dag_versions.get_version(conn, "versioned").source_code == "# one\n"


def test_unused_versions_go_only_with_their_runs(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    h.sync(shape("a"))
    with transaction(engine) as conn:
        trigger_dag(conn, "versioned", now=h.clock(), actor=Actor.USER, run_id="r1")
    h.loop()
    h.sync(shape("b"))
    h.sync(shape("c"))  # version 2 has no run
    h.sync(shape("d"))
    with transaction(engine) as conn:
        assert dag_versions.prune_unused(conn) == 2  # versions 2 and 3
    assert [v.version_number for v in versions(engine)] == [1, 4]
    with transaction(engine) as conn:
        conn.execute(task_instance.delete())
        conn.execute(dag_run.delete())
        assert dag_versions.prune_unused(conn) == 1  # version 1 went with its run
    assert [v.version_number for v in versions(engine)] == [4]
