"""``dag.test()`` runs the tries it queued together one after another in the scheduler's order
(priority weight first), not in the order the database returns their rows: a file whose tasks
must run in that order (one removes a file another creates) ends the same each time."""

from __future__ import annotations

from sqlalchemy import Engine

from statewright.sdk import DAG, task

ran: list[str] = []


def test_tries_queued_together_run_in_priority_order(engine: Engine) -> None:
    ran.clear()
    with DAG("by_priority", schedule=None) as dag:
        @task
        def note(name: str) -> None:
            ran.append(name)

        # defined (and stored) in one order, weighted in another
        for name, weight in (("low", 1), ("high", 4), ("middle", 3), ("lower", 2)):
            note.override(task_id=name, priority_weight=weight)(name)
    assert dag.test(engine=engine).state.value == "success"
    assert ran == ["high", "middle", "lower", "low"]
