"""Trigger-rule timing and short-circuit reach, end to end through dag.test() (the real
scheduler decisions and the one door), on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.sdk import DAG, PythonOperator, ShortCircuitOperator, SkipTask


def _skip() -> None:
    raise SkipTask("nothing to do")


def _fail() -> None:
    raise ValueError("boom")


def _order_of(history: list[dict[str, Any]], task_id: str, to_state: str) -> int:
    return next(i for i, h in enumerate(history)
                if h.get("task_id") == task_id and h["to_state"] == to_state)


def _join_dag(skip_first: bool) -> DAG:
    """``join`` (all_success) after ``skipper`` and ``failer``; one of them finishes first (the
    second one waits for it with ``all_done``)."""
    with DAG(f"timing_{'skip' if skip_first else 'fail'}_first") as dag:
        skipper = PythonOperator(task_id="skipper", python_callable=_skip,
                                 trigger_rule="all_success" if skip_first else "all_done")
        failer = PythonOperator(task_id="failer", python_callable=_fail,
                                trigger_rule="all_done" if skip_first else "all_success")
        join = NoopOperator(task_id="join")
        if skip_first:
            skipper >> failer
        else:
            failer >> skipper
        [skipper, failer] >> join
    return dag


def test_a_skip_seen_first_skips_the_join_while_the_other_upstream_still_runs(
        engine: Engine) -> None:
    r = _join_dag(skip_first=True).test(engine=engine)
    assert r.states == {"skipper": "skipped", "failer": "failed", "join": "skipped"}
    # join was decided before failer even started
    assert _order_of(r.history, "join", "skipped") < _order_of(r.history, "failer", "running")
    assert r.state.value == "success"  # its leaf (join) is skipped


def test_a_failure_seen_first_makes_the_join_upstream_failed(engine: Engine) -> None:
    r = _join_dag(skip_first=False).test(engine=engine)
    assert r.states == {"failer": "failed", "skipper": "skipped", "join": "upstream_failed"}
    assert _order_of(r.history, "join", "upstream_failed") < _order_of(
        r.history, "skipper", "running")
    assert r.state.value == "failed"


@pytest.mark.parametrize("ignore", [True, False])
def test_a_short_circuit_skip_does_not_reach_an_always_task(engine: Engine, ignore: bool) -> None:
    with DAG(f"short_always_{ignore}") as dag:
        gate = ShortCircuitOperator(task_id="gate", python_callable=lambda: False,
                                    ignore_downstream_trigger_rules=ignore)
        direct = NoopOperator(task_id="direct")
        notify = NoopOperator(task_id="notify", trigger_rule="always")
        after = NoopOperator(task_id="after", trigger_rule="always")
        gate >> [direct, notify]
        direct >> after
    r = dag.test(engine=engine)
    assert r.states == {"gate": "success", "direct": "skipped", "notify": "success",
                        "after": "success"}


def test_a_short_circuit_skip_does_not_reach_a_teardown(engine: Engine) -> None:
    with DAG("short_teardown") as dag:
        create = NoopOperator(task_id="create").as_setup()
        gate = ShortCircuitOperator(task_id="gate", python_callable=lambda: False)
        work = NoopOperator(task_id="work")
        delete = NoopOperator(task_id="delete").as_teardown(setups=create)
        create >> gate >> work >> delete
    r = dag.test(engine=engine)
    assert r.states == {"create": "success", "gate": "success", "work": "skipped",
                        "delete": "success"}
