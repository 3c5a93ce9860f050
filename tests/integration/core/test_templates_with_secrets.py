"""Variables and connections in templates (``var.value``, ``var.json``, ``conn.ID``), read only
when a template asks, and masked as ``***`` in the rendered fields that are stored and shown."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.db.repositories import rendered_fields as rendered_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import DAG, BashOperator, PythonOperator


def _rendered(engine: Engine, run_id: str, dag_id: str, task_id: str) -> dict[str, Any]:
    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, dag_id, run_id)
        ti = ti_repo.get_by_key(conn, run.id, task_id)
        [stored] = rendered_repo.for_task_instance(conn, ti.id)
        return dict(stored.rendered_fields)


def test_var_and_conn_render_and_the_password_is_stored_masked(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_VAR_THRESHOLD", "42")
    monkeypatch.setenv("STATEWRIGHT_VAR_LIMITS", '{"rows": 10}')
    monkeypatch.setenv("STATEWRIGHT_CONN_WAREHOUSE",
                       "postgresql://loader:hunter2-very-secret@db.example.org:5432/w")
    seen: list[tuple[str, ...]] = []
    with DAG("templates_with_secrets", schedule=None) as dag:
        PythonOperator(
            task_id="uses", python_callable=lambda *a: seen.append(a),
            op_args=["{{ var.value.threshold }}", "{{ var.json.limits.rows }}",
                     "{{ conn.warehouse.host }}:{{ conn.warehouse.port }}",
                     "{{ conn.warehouse.password }}"])
    result = dag.test(engine=engine)
    assert result.states == {"uses": "success"}
    assert seen == [("42", "10", "db.example.org:5432", "hunter2-very-secret")]
    stored = _rendered(engine, result.run_id, "templates_with_secrets", "uses")
    assert stored["op_args"] == ["42", "10", "db.example.org:5432", "***"]
    assert "hunter2-very-secret" not in repr(stored)


def test_an_unknown_variable_in_a_template_fails_the_try_naming_it(engine: Engine) -> None:
    with DAG("unknown_variable", schedule=None) as dag:
        BashOperator(task_id="b", bash_command="echo {{ var.value.no_such_key }}")
    result = dag.test(engine=engine)
    assert result.states == {"b": "failed"}
    assert "no_such_key" in (result.ti("b").state_message or "")


def test_a_dag_that_uses_no_variable_never_reads_the_store(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.sdk import secrets

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the store was read")

    monkeypatch.setattr(secrets, "get_variable", refuse)
    monkeypatch.setattr(secrets, "get_connection", refuse)
    with DAG("no_variables", schedule=None) as dag:
        BashOperator(task_id="b", bash_command="echo {{ ds }}")
    assert dag.test(engine=engine).states == {"b": "success"}
