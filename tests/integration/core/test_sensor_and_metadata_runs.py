"""``BashSensor``, ``TimeSensor``, ``ExternalTaskSensor(external_task_group_id=...)`` and
``Metadata`` end to end through ``dag.test()``, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from tests.noop import NoopOperator

from statewright.db.tables_assets import asset, asset_event
from statewright.sdk import (
    DAG,
    Asset,
    AssetAlias,
    BashOperator,
    Metadata,
    TaskGroup,
    task,
)
from statewright.sdk.sensors import BashSensor, ExternalTaskSensor, TimeSensor
from statewright.sdk.sensors import base as sensor_base

LOGICAL = datetime(2026, 5, 1, tzinfo=UTC)


def _path(r: Any, task_id: str) -> list[str]:
    return [h["to_state"] for h in r.history if h.get("task_id") == task_id]


def test_a_rescheduling_bash_sensor_pokes_until_its_command_succeeds(
        engine: Engine, tmp_path: Path) -> None:
    counter = tmp_path / "n"
    command = (f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; "
               "if [ $n -ge 2 ]; then exit 0; else exit 3; fi")
    with DAG("bash_sensor") as dag:
        BashSensor(task_id="wait", bash_command=command, retry_exit_code=3, mode="reschedule",
                   poke_interval=0.05, timeout=60)
        BashSensor(task_id="broken", bash_command="exit 2", retry_exit_code=3, retries=2,
                   retry_delay=0)
    r = dag.test(engine=engine)
    assert r.states == {"wait": "success", "broken": "failed"}
    assert counter.read_text().strip() == "3" and _path(r, "wait").count("up_for_reschedule") == 2
    assert r.ti("wait").try_number == 1
    assert r.ti("broken").try_number == 1  # an unexpected exit code fails without retry
    assert "exited with code 2" in (r.ti("broken").state_message or "")


class SensorClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def noon(monkeypatch: pytest.MonkeyPatch) -> Iterator[SensorClock]:
    clock = SensorClock(datetime.combine(datetime.now(UTC).date(), time(12), tzinfo=UTC))
    monkeypatch.setattr(sensor_base, "_now", clock)
    monkeypatch.setattr(sensor_base, "_sleep", clock.sleep)
    yield clock


def test_time_sensors_wait_for_a_time_of_today(engine: Engine, noon: SensorClock) -> None:
    """Poke mode on the injected clock; deferred ones through the triggerer, whose clock is
    the wall clock: its target, 23:59 of today, is hours away, so the short timeout ends it."""
    start = noon.now
    with DAG("time_sensor") as dag:
        TimeSensor(task_id="passed", target_time=time(11, 0))
        TimeSensor(task_id="in_an_hour", target_time=time(13, 0), poke_interval=300)
        TimeSensor(task_id="passed_async", target_time=time(0, 0), deferrable=True)
        TimeSensor(task_id="tonight_async", target_time=time(23, 59, 59), deferrable=True,
                   timeout=0.2, soft_fail=True)
    r = dag.test(engine=engine, logical_date=LOGICAL)
    assert r.states == {"passed": "success", "in_an_hour": "success",
                        "passed_async": "success", "tonight_async": "skipped"}
    assert noon.now - start == timedelta(hours=1)  # in_an_hour slept until 13:00
    assert "deferred" in _path(r, "tonight_async")
    assert "deferred" not in _path(r, "passed_async")


def _upstream() -> DAG:
    with DAG("upstream") as dag:
        with TaskGroup("extract"):
            NoopOperator(task_id="a")
            with TaskGroup("more"):
                @task
                def part(n: int) -> int:
                    return n

                part.expand(n=[1, 2, 3])
        with TaskGroup("broken"):
            @task
            def boom() -> None:
                raise RuntimeError("no")

            boom()
        with TaskGroup("quiet"):
            @task
            def skip() -> None:
                from statewright.sdk import SkipTask

                raise SkipTask("nothing to do")

            skip()
    return dag


def test_an_external_task_sensor_waits_for_a_whole_task_group(engine: Engine) -> None:
    up = _upstream()
    assert up.test(engine=engine, logical_date=LOGICAL).states == {
        "extract.a": "success", "extract.more.part[0]": "success",
        "extract.more.part[1]": "success", "extract.more.part[2]": "success",
        "broken.boom": "failed", "quiet.skip": "skipped"}
    with DAG("downstream") as down:
        opts: dict[str, Any] = {"external_dag_id": "upstream", "poke_interval": 0.05}
        ExternalTaskSensor(task_id="extract", external_task_group_id="extract", **opts)
        ExternalTaskSensor(task_id="broken", external_task_group_id="broken",
                           failed_states=["failed"], **opts)
        ExternalTaskSensor(task_id="broken_soft", external_task_group_id="broken",
                           failed_states=["failed"], soft_fail=True, **opts)
        ExternalTaskSensor(task_id="quiet", external_task_group_id="quiet",
                           skipped_states=["skipped"], **opts)
        ExternalTaskSensor(task_id="missing", external_task_group_id="no_such_group",
                           timeout=0.3, **opts)
        ExternalTaskSensor(task_id="yesterday", external_task_group_id="extract",
                           execution_delta=timedelta(days=1), timeout=0.3, **opts)
    r = down.test(engine=engine, logical_date=LOGICAL)
    assert r.states == {"extract": "success", "broken": "failed", "broken_soft": "skipped",
                        "quiet": "skipped", "missing": "failed", "yesterday": "failed"}
    assert "task group broken of upstream failed" in (r.ti("broken").state_message or "")
    assert "SensorTimeout" in (r.ti("missing").state_message or "")
    assert "SensorTimeout" in (r.ti("yesterday").state_message or "")


def test_a_group_sensor_waits_for_every_run_of_its_dates(engine: Engine) -> None:
    up = _upstream()
    up.test(engine=engine, logical_date=LOGICAL)

    def both_days(day: datetime) -> list[datetime]:
        return [day, day - timedelta(days=1)]

    with DAG("two_days") as down:
        ExternalTaskSensor(task_id="s", external_dag_id="upstream",
                           external_task_group_id="extract", execution_date_fn=both_days,
                           poke_interval=0.05, timeout=0.3)
    assert down.test(engine=engine, logical_date=LOGICAL).states == {"s": "failed"}
    up.test(engine=engine, logical_date=LOGICAL - timedelta(days=1))
    assert down.test(engine=engine, logical_date=LOGICAL).states == {"s": "success"}


def _events(engine: Engine) -> dict[tuple[str, str | None], Any]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(asset.c.name, asset_event.c.source_task_id, asset_event.c.extra)
            .join(asset, asset.c.id == asset_event.c.asset_id)).all()
    return {(name, task_id): extra for name, task_id, extra in rows}


def test_metadata_and_hooks_put_extra_on_the_recorded_events(engine: Engine) -> None:
    report = Asset(name="report", uri="s3://bucket/report")
    daily = Asset(name="daily", uri="s3://bucket/daily")
    alias = AssetAlias("latest")

    def stamp(context: Any, result: Any) -> None:
        context["outlet_events"][report].extra = {"line": result}

    with DAG("metadata") as dag:
        @task(outlets=[report])
        def by_yield() -> Iterator[Any]:
            yield Metadata(report, {"rows": 3})
            return "done"

        @task(outlets=[alias])
        def by_alias() -> Iterator[Any]:
            yield Metadata(daily, {"day": "2026-05-01"}, alias=alias)

        by_yield()
        by_alias()
        BashOperator(task_id="by_hook", bash_command="echo 42", outlets=[report],
                     post_execute=stamp)
    r = dag.test(engine=engine)
    assert r.states == {"by_yield": "success", "by_alias": "success", "by_hook": "success"}
    assert r.ti("by_yield").return_value == "done"
    assert _events(engine) == {("report", "by_yield"): {"rows": 3},
                               ("daily", "by_alias"): {"day": "2026-05-01"},
                               ("report", "by_hook"): {"line": "42"}}
