"""A try's rendered fields are stored once per try: a second report of the same try (a resumed
deferral renders again) replaces the row, on SQLite and PostgreSQL (one upsert)."""

from __future__ import annotations

from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import rendered_fields as rendered_repo
from statewright.sdk import DAG, PythonOperator


def test_the_same_try_replaces_its_row_and_another_try_adds_one(engine: Engine) -> None:
    with DAG("rendered_replaced", schedule=None) as dag:
        PythonOperator(task_id="t", python_callable=lambda x: None, op_args=["{{ run_id }}"])
    assert dag.test(engine=engine).states == {"t": "success"}
    with engine.connect() as conn:
        ti = conn.exec_driver_sql(
            "SELECT id, run_id FROM task_instance WHERE dag_id = 'rendered_replaced'").one()
        [first] = rendered_repo.for_task_instance(conn, ti.id)
    assert first.rendered_fields["op_args"] == [ti.run_id]

    def store(try_number: int, value: str) -> None:
        with transaction(engine) as conn:
            rendered_repo.record(conn, [rendered_repo.RenderedTry(
                ti.id, try_number, "rendered_replaced", ti.run_id, "t",
                {"op_args": [value]})], utcnow())

    store(first.try_number, "again")  # the resumed try renders again: its row is replaced
    store(first.try_number + 1, "next")  # a later try adds its own
    with engine.connect() as conn:
        tries = rendered_repo.for_task_instance(conn, ti.id)
    assert [(t.try_number, t.rendered_fields) for t in tries] == [
        (first.try_number, {"op_args": ["again"]}),
        (first.try_number + 1, {"op_args": ["next"]})]
