"""LatestOnlyOperator, BranchDayOfWeekOperator, BranchDateTimeOperator, and ExternalTaskMarker
clearing across DAGs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time

import pytest
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG
from statewright.sdk.operators import (
    BranchDateTimeOperator,
    BranchDayOfWeekOperator,
    ExternalTaskMarker,
    LatestOnlyOperator,
    WeekDay,
)
from statewright.services.controls.clear import clear_task_instances

JAN1 = datetime(2026, 1, 1, tzinfo=UTC)


def test_latest_only_skips_all_but_the_latest_scheduled_run(
        assets_harness: Callable, monkeypatch: pytest.MonkeyPatch) -> None:
    h = assets_harness(datetime(2026, 1, 3, 12, tzinfo=UTC))
    with DAG("latest", schedule="@daily", start_date=JAN1, catchup=True) as dag:
        LatestOnlyOperator(task_id="latest_only") >> NoopOperator(task_id="work")
    monkeypatch.setattr(LatestOnlyOperator, "clock",
                        staticmethod(lambda: datetime(2026, 1, 3, 12, tzinfo=UTC)))
    h.sync(dag)
    h.loop()
    h.trigger("latest")
    h.loop()
    by_run = {}
    runs = {r.id: (r.run_type, r.logical_date) for r in h.runs("latest")}
    for t in h.tis("latest"):
        by_run.setdefault(runs[t.dag_run_id], {})[t.task_id] = t.state
    scheduled = sorted((k[1].day, v["work"]) for k, v in by_run.items() if k[0] == "scheduled")
    assert scheduled == [(1, "skipped"), (2, "skipped"), (3, "success")]
    manual = [v["work"] for k, v in by_run.items() if k[0] == "manual"]
    assert manual == ["success"]


@pytest.mark.parametrize(("day", "expected"), [(datetime(2026, 1, 3, tzinfo=UTC), "weekend"),
                                               (datetime(2026, 1, 5, tzinfo=UTC), "weekday")])
def test_branch_day_of_week_on_the_logical_date(day: datetime, expected: str) -> None:
    with DAG("dow", schedule=None) as dag:
        BranchDayOfWeekOperator(
            task_id="branch", follow_task_ids_if_true="weekend",
            follow_task_ids_if_false="weekday", week_day={WeekDay.SATURDAY, "Sunday"},
            use_task_logical_date=True) >> [NoopOperator(task_id="weekend"),
                                            NoopOperator(task_id="weekday")]
    states = dag.test(logical_date=day).states
    other = "weekday" if expected == "weekend" else "weekend"
    assert states[expected] == "success" and states[other] == "skipped"


def test_branch_day_of_week_refuses_an_unknown_day() -> None:
    with pytest.raises(DagDefinitionError, match="not a day of the week"):
        BranchDayOfWeekOperator(task_id="b", follow_task_ids_if_true="a",
                                follow_task_ids_if_false="b", week_day="Caturday")


@pytest.mark.parametrize(("at", "expected"), [
    (datetime(2026, 1, 5, 10, tzinfo=UTC), "inside"),
    (datetime(2026, 1, 5, 23, tzinfo=UTC), "outside"),
    (datetime(2026, 1, 5, 1, tzinfo=UTC), "outside"),
])
def test_branch_datetime_between_times(at: datetime, expected: str) -> None:
    with DAG("dt", schedule=None) as dag:
        BranchDateTimeOperator(
            task_id="branch", follow_task_ids_if_true="inside",
            follow_task_ids_if_false="outside", target_lower=time(9), target_upper=time(17),
            use_task_logical_date=True) >> [NoopOperator(task_id="inside"),
                                            NoopOperator(task_id="outside")]
    assert dag.test(logical_date=at).states[expected] == "success"


def test_branch_datetime_crossing_midnight_and_bad_input() -> None:
    with DAG("night", schedule=None) as dag:
        BranchDateTimeOperator(
            task_id="branch", follow_task_ids_if_true="night", follow_task_ids_if_false="day",
            target_lower=time(22), target_upper=time(2),
            use_task_logical_date=True) >> [NoopOperator(task_id="night"),
                                            NoopOperator(task_id="day")]
    assert dag.test(logical_date=datetime(2026, 1, 5, 23, tzinfo=UTC)).states["night"] == (
        "success")
    with pytest.raises(DagDefinitionError, match="both target_upper and target_lower are None"):
        BranchDateTimeOperator(task_id="x", follow_task_ids_if_true="a",
                               follow_task_ids_if_false="b", target_lower=None,
                               target_upper=None)


def test_clearing_an_external_task_marker_clears_the_child_dag(
        assets_harness: Callable, engine: Engine) -> None:
    h = assets_harness(datetime(2026, 1, 1, 12, tzinfo=UTC))
    with DAG("parent", schedule="@daily", start_date=JAN1) as parent:
        NoopOperator(task_id="start") >> ExternalTaskMarker(
            task_id="marker", external_dag_id="child", external_task_id="child_task")
    with DAG("child", schedule="@daily", start_date=JAN1) as child:
        NoopOperator(task_id="before") >> NoopOperator(task_id="child_task") >> NoopOperator(
            task_id="after")
    h.sync(parent, child)
    h.loop()
    (parent_run,) = h.runs("parent")
    assert {t.task_id: t.state for t in h.tis("child")} == {
        "before": "success", "child_task": "success", "after": "success"}
    clear_task_instances(engine, parent_run.run_id, dag_id="parent", task_regexes=["^start$"],
                         downstream=True, now=h.clock())
    child_states = {t.task_id: t.state for t in h.tis("child")}
    assert child_states == {"before": "success", "child_task": "none", "after": "none"}
    h.loop()
    assert {t.state for t in h.tis("child")} == {"success"}


def test_a_marker_needs_a_positive_recursion_depth() -> None:
    with pytest.raises(DagDefinitionError, match="recursion_depth"):
        ExternalTaskMarker(task_id="m", external_dag_id="c", external_task_id="t",
                           recursion_depth=0)
