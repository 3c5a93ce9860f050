"""``BashSensor`` and ``TimeSensor`` in the runtime alone: argument checks, pokes on an injected
clock, deferral; no database, no wall-clock waits."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.sensor_clock import SensorClock, install_sensor_clock

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, BaseOperator
from statewright.sdk.runtime import TaskOutcome, build_context, execute_task
from statewright.sdk.sensors import BashSensor, TimeSensor, TimeSensorAsync
from statewright.sdk.sensors import base as sensor_base

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)  # a Friday, 14:00 in Berlin, 21:00 in Tokyo


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SensorClock:
    return install_sensor_clock(monkeypatch, T0)


def _run(task: BaseOperator, logical_date: datetime = T0) -> TaskOutcome:
    assert task.dag is not None
    context = build_context(task.dag, task, run_id="r", logical_date=logical_date,
                            data_interval_start=logical_date, data_interval_end=logical_date,
                            conf={}, try_number=1, max_tries=task.retries, xcoms={})
    return execute_task(task, context)


# -- BashSensor -------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"retry_exit_code": "1"}, "retry_exit_code must be an int"),
    ({"retry_exit_code": True}, "retry_exit_code must be an int"),
    ({"env": ["A=1"]}, "env must be a dict"),
    ({"output_encoding": ""}, "output_encoding must be"),
])
def test_bash_sensor_refuses_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with DAG("d"), pytest.raises(DagDefinitionError, match=message):
        BashSensor(task_id="s", bash_command="exit 0", **kwargs)


def test_bash_sensor_pokes_until_the_command_exits_0(clock: SensorClock, tmp_path: Path) -> None:
    counter = tmp_path / "n"
    command = (f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; "
               "test $n -ge 2")
    with DAG("d"):
        s = BashSensor(task_id="s", bash_command=command, poke_interval=30)
    outcome = _run(s)
    assert outcome.kind == "success", outcome.error
    assert counter.read_text().strip() == "3" and clock.sleeps == [30, 30]


def test_without_retry_exit_code_any_failure_is_not_yet(clock: SensorClock) -> None:
    with DAG("d"):
        hard = BashSensor(task_id="hard", bash_command="exit 7", poke_interval=10, timeout=25)
        soft = BashSensor(task_id="soft", bash_command="exit 7", poke_interval=10, timeout=25,
                          soft_fail=True)
    outcome = _run(hard)
    assert outcome.kind == "fail_no_retry" and "SensorTimeout" in (outcome.error or "")
    assert clock.sleeps == [10, 10, 10]  # poked until past its timeout
    assert _run(soft).kind == "skipped"


def test_with_retry_exit_code_only_that_code_pokes_again(clock: SensorClock) -> None:
    with DAG("d"):
        again = BashSensor(task_id="again", bash_command="exit 3", retry_exit_code=3,
                           poke_interval=10, timeout=15)
        broken = BashSensor(task_id="broken", bash_command="exit 2", retry_exit_code=3,
                            retries=4)
        soft = BashSensor(task_id="soft", bash_command="exit 2", retry_exit_code=3,
                          soft_fail=True)
    assert _run(again).kind == "fail_no_retry" and clock.sleeps == [10, 10]
    clock.sleeps.clear()
    outcome = _run(broken)
    assert outcome.kind == "fail_no_retry"  # no retry, whatever retries says
    assert "exited with code 2" in (outcome.error or "") and clock.sleeps == []
    assert _run(soft).kind == "skipped"


def test_bash_sensor_env_replaces_the_environment(clock: SensorClock,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INHERITED", "yes")
    with DAG("d"):
        own = BashSensor(task_id="own", bash_command='test "$FOO" = bar -a -z "$INHERITED"',
                         env={"FOO": "bar", "PATH": "/usr/bin:/bin"}, timeout=0)
        inherited = BashSensor(task_id="inherited", bash_command='test "$INHERITED" = yes',
                               timeout=0)
    assert _run(own).kind == "success"
    assert _run(inherited).kind == "success"


def test_bash_sensor_renders_its_command(clock: SensorClock) -> None:
    with DAG("d"):
        s = BashSensor(task_id="s", bash_command='test "{{ ds }}" = 2026-05-01', timeout=0)
        wrong = BashSensor(task_id="w", bash_command='test "{{ ds }}" = 1999-01-01', timeout=0)
    assert _run(s).kind == "success"
    assert _run(wrong).kind == "fail_no_retry"


# -- TimeSensor -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [datetime(2026, 5, 1, 13), "13:00", 13])
def test_time_sensor_takes_a_time_of_day(target: Any) -> None:
    with DAG("d"), pytest.raises(DagDefinitionError, match=r"target_time must be a datetime\.time"):
        TimeSensor(task_id="t", target_time=target)


def test_time_sensor_waits_for_that_time_of_today(clock: SensorClock) -> None:
    with DAG("d"):
        past = TimeSensor(task_id="past", target_time=time(11, 0))
        later = TimeSensor(task_id="later", target_time=time(13, 0), poke_interval=600)
    assert _run(past).kind == "success" and clock.sleeps == []
    assert _run(later).kind == "success"
    assert clock.sleeps == [600] * 6 and clock.now == T0 + timedelta(hours=1)
    assert later.target_datetime == datetime(2026, 5, 1, 13, tzinfo=UTC)


def test_time_sensor_uses_today_not_the_runs_day(clock: SensorClock) -> None:
    """Airflow's rule: a run of an old logical date still waits for today's target time."""
    with DAG("d"):
        s = TimeSensor(task_id="s", target_time=time(13, 0), mode="reschedule")
    outcome = _run(s, logical_date=datetime(2020, 1, 1, tzinfo=UTC))
    assert outcome.kind == "up_for_reschedule"
    assert s.target_datetime == datetime(2026, 5, 1, 13, tzinfo=UTC)


@pytest.mark.parametrize(("zone", "target", "moment"), [
    # 14:00 in Berlin: 13:30 there has passed, 15:00 there is 13:00 UTC.
    ("Europe/Berlin", time(13, 30), datetime(2026, 5, 1, 11, 30, tzinfo=UTC)),
    ("Europe/Berlin", time(15, 0), datetime(2026, 5, 1, 13, 0, tzinfo=UTC)),
    # 21:00 in Tokyo; 23:00 there is 14:00 UTC.
    ("Asia/Tokyo", time(23, 0), datetime(2026, 5, 1, 14, 0, tzinfo=UTC)),
])
def test_time_sensor_reads_the_time_in_the_dags_timezone(
        clock: SensorClock, zone: str, target: time, moment: datetime) -> None:
    with DAG("d", timezone=zone):
        s = TimeSensor(task_id="s", target_time=target, deferrable=True, timeout=7200)
    outcome = _run(s)
    assert s.target_datetime == moment
    if moment <= T0:
        assert outcome.kind == "success"
    else:
        assert outcome.kind == "deferred"
        deferral = outcome.extra["deferral"]
        assert deferral["classpath"] == "statewright.sdk.triggers.temporal.DateTimeTrigger"
        assert deferral["trigger_kwargs"]["moment"]["value"] == moment.isoformat()
        assert deferral["timeout"] == 7200


def test_today_is_the_dags_today_across_midnight(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = SensorClock(datetime(2026, 5, 1, 23, 30, tzinfo=UTC))  # already May 2 in Tokyo
    monkeypatch.setattr(sensor_base, "_now", clock)
    with DAG("d", timezone="Asia/Tokyo"):
        s = TimeSensor(task_id="s", target_time=time(9, 0), deferrable=True)
    assert _run(s).kind == "deferred"
    assert s.target_datetime == datetime(2026, 5, 2, 0, 0, tzinfo=UTC)  # 09:00 on May 2 JST


def test_time_sensor_async_always_defers(clock: SensorClock) -> None:
    with DAG("d"):
        s = TimeSensorAsync(task_id="s", target_time=time(18, 0))
    assert s.deferrable is True
    assert _run(s).kind == "deferred"
