"""dag.test()'s in-process executor starts and ends quick tries in groups (one transaction each
way for a group): every try still gets its own try number, state history and
``task_instance_history`` row, failures in a group still retry or fail each on its own,
outcomes are stored before ``on_result`` hears of them, and slow tries run one per group."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.states import TI
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.repositories import xcoms as xcom_repo
from statewright.sdk import DAG, PythonOperator
from statewright.services.executors.inprocess import InProcessExecutor


def _grouped(monkeypatch: pytest.MonkeyPatch, group_seconds: float) -> list[int]:
    """dag.test() runs with ``group_seconds``; the list it returns gets the size of each group
    of tries the executor ran."""
    groups: list[int] = []

    class Recording(InProcessExecutor):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs, group_seconds=group_seconds)

        def _end(self, done: list[Any]) -> None:
            groups.append(len(done))
            super()._end(done)

    monkeypatch.setattr("statewright.services.dag_test.InProcessExecutor", Recording)
    return groups


def _run_pk(engine: Engine, result: Any) -> int:
    with engine.connect() as conn:
        return int(run_repo.get_by_run_id(conn, result.dag_id, result.run_id).id)


def _tis(engine: Engine, run_pk: int) -> dict[str, Any]:
    with engine.connect() as conn:
        return {t.task_id: t for t in ti_repo.by_run(conn, run_pk)}


def _tries(engine: Engine, ti_id: int) -> list[tuple[int, str]]:
    """The task instance's ``task_instance_history`` rows: (try number, state)."""
    with engine.connect() as conn:
        return [(h.try_number, h.state) for h in ti_repo.history_of(conn, ti_id)]


def _edges(engine: Engine, ti_id: int) -> list[tuple[str | None, str, int]]:
    with engine.connect() as conn:
        return [(h.from_state, h.to_state, h.try_number)
                for h in transitions_log.for_task_instance(conn, ti_id)]


def _value(i: int) -> int:
    return i * i


def test_a_grouped_fan_out_records_every_try_on_its_own(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    with DAG("grouped_fan_out", max_active_tasks=64) as dag:
        for i in range(30):
            PythonOperator(task_id=f"t{i}", python_callable=_value, op_args=[i])
    # group_seconds of a minute: every group takes twice as many tries as the last one.
    groups = _grouped(monkeypatch, 60.0)
    run_pk = _run_pk(engine, dag.test(engine=engine))
    assert groups == [1, 2, 4, 8, 15]
    tis = _tis(engine, run_pk)
    assert {t.state for t in tis.values()} == {"success"}
    with engine.connect() as conn:
        values = xcom_repo.get_indexed_return_values(conn, [(run_pk, k) for k in tis])
    for task_id, t in tis.items():
        assert t.try_number == 1
        assert _edges(engine, t.id) == [
            (None, "none", 0), ("none", "scheduled", 0), ("scheduled", "queued", 0),
            ("queued", "running", 1), ("running", "success", 1)]
        assert _tries(engine, t.id) == [(1, "success")]
        assert values[(run_pk, task_id)][-1] == _value(int(task_id[1:]))
    # The tries of a group started in one door call: one moment for each group.
    with engine.connect() as conn:
        starts = Counter(h.at for h in transitions_log.for_run(conn, "grouped_fan_out",
                                                                run_repo.get(conn, run_pk).run_id)
                         if h.entity == "task_instance" and h.to_state == "running")
    assert sorted(starts.values()) == [1, 2, 4, 8, 15]


_FLAKY_TRIES: list[int] = []


def _flaky(ti: Any) -> str:
    _FLAKY_TRIES.append(ti.try_number)
    if ti.try_number == 1:
        raise ConnectionError("the API timed out")
    return "ok"


def _broken() -> None:
    raise ValueError("bad input")


def test_failures_in_a_group_retry_or_fail_each_on_its_own(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    _FLAKY_TRIES.clear()
    with DAG("grouped_failures", max_active_tasks=64) as dag:
        for i in range(3):
            PythonOperator(task_id=f"ok{i}", python_callable=_value, op_args=[i])
        PythonOperator(task_id="flaky", python_callable=_flaky, retries=1,
                       retry_delay=timedelta(seconds=0))
        PythonOperator(task_id="broken", python_callable=_broken, retries=0)
        for i in range(3, 6):
            PythonOperator(task_id=f"ok{i}", python_callable=_value, op_args=[i])
    groups = _grouped(monkeypatch, 60.0)
    result = dag.test(engine=engine)
    assert result.state.value == "failed"  # broken is a leaf that failed
    assert groups == [1, 2, 4, 1, 1]  # the 8 first tries, then the retry
    tis = _tis(engine, _run_pk(engine, result))
    assert _FLAKY_TRIES == [1, 2]
    assert (tis["flaky"].state, tis["flaky"].try_number) == (TI.SUCCESS.value, 2)
    assert _tries(engine, tis["flaky"].id) == [(1, "up_for_retry"), (2, "success")]
    assert [e for e in _edges(engine, tis["flaky"].id) if e[0] in ("queued", "running")] == [
        ("queued", "running", 1), ("running", "up_for_retry", 1),
        ("queued", "running", 2), ("running", "success", 2)]
    assert (tis["broken"].state, tis["broken"].try_number) == (TI.FAILED.value, 1)
    assert "bad input" in (tis["broken"].state_message or "")
    assert _tries(engine, tis["broken"].id) == [(1, "failed")]
    for i in range(6):
        assert _tries(engine, tis[f"ok{i}"].id) == [(1, "success")]
    # Both failing first tries ran in a group with others (started at the same moment).
    with engine.connect() as conn:
        starts = {(h.task_id, h.try_number): h.at
                  for h in transitions_log.for_run(conn, result.dag_id, result.run_id)
                  if h.entity == "task_instance" and h.to_state == "running"}
    moments = Counter(starts.values())
    assert moments[starts[("flaky", 1)]] > 1 and moments[starts[("broken", 1)]] > 1


def _sleep() -> None:
    time.sleep(0.05)


def test_slow_tries_run_one_per_group_and_are_reported_once_stored(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    with DAG("slow_fan_out", max_active_tasks=64) as dag:
        for i in range(4):
            PythonOperator(task_id=f"s{i}", python_callable=_sleep)
    stored: list[tuple[str, str]] = []

    def on_result(w: Any, r: Any) -> None:  # the outcome is in the database already
        with engine.connect() as conn:
            stored.append((w.task_id, ti_repo.get(conn, w.ti_id).state))

    groups = _grouped(monkeypatch, 0.02)
    run_pk = _run_pk(engine, dag.test(engine=engine, on_result=on_result))
    assert groups == [1, 1, 1, 1]
    assert sorted(stored) == [(f"s{i}", "success") for i in range(4)]
    # Each try's recorded start follows the previous try's recorded end.
    spans = sorted((t.start_date, t.end_date) for t in _tis(engine, run_pk).values())
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end
