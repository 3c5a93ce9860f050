"""Sensors (poke, reschedule, deferrable, timeouts, backoff) and ``defer`` / resume, in the
runtime alone: no database, no worker, no wall-clock waits."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.sensor_clock import SensorClock, install_sensor_clock

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, BaseOperator
from statewright.sdk.runtime import build_context, execute_task, resume_task
from statewright.sdk.sensors import (
    BaseSensor,
    DateTimeSensor,
    ExternalTaskSensor,
    ExternalTaskTrigger,
    FileSensor,
    HttpSensor,
    PokeReturnValue,
    PythonSensor,
    TimeDeltaSensor,
)
from statewright.sdk.triggers import TimeDeltaTrigger

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SensorClock:
    return install_sensor_clock(monkeypatch, T0)


def _context(dag: DAG, task: BaseOperator, **ti: Any) -> Any:
    ctx = build_context(dag, task, run_id="r", logical_date=T0, data_interval_start=T0,
                        data_interval_end=T0, conf={}, try_number=1, max_tries=task.retries,
                        xcoms={})
    for k, v in ti.items():
        setattr(ctx["ti"], k, v)
    return ctx


def _run(task: BaseOperator, **ti: Any) -> Any:
    assert task.dag is not None
    return execute_task(task, _context(task.dag, task, **ti))


class Counting(BaseSensor):
    def __init__(self, *, ready_after: int, value: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ready_after = ready_after
        self.value = value
        self.pokes = 0

    def poke(self, context: Any) -> Any:
        self.pokes += 1
        if self.value is not None:
            return PokeReturnValue(self.pokes >= self.ready_after, self.value)
        return self.pokes >= self.ready_after


def test_poke_mode_sleeps_between_pokes_and_stores_the_value(clock: SensorClock) -> None:
    with DAG("d"):
        s = Counting(task_id="s", ready_after=3, poke_interval=10, value={"found": 1})
    outcome = _run(s)
    assert outcome.kind == "success" and outcome.return_value == {"found": 1}
    assert clock.sleeps == [10, 10]


def test_poke_mode_times_out_without_retry_or_skips_with_soft_fail(clock: SensorClock) -> None:
    with DAG("d"):
        hard = Counting(task_id="hard", ready_after=99, poke_interval=10, timeout=25, retries=3)
        soft = Counting(task_id="soft", ready_after=99, poke_interval=10, timeout=25,
                        soft_fail=True)
    outcome = _run(hard)
    assert outcome.kind == "fail_no_retry" and "SensorTimeout" in outcome.error
    assert _run(soft).kind == "skipped"


def test_reschedule_mode_raises_with_the_first_poke_kept(clock: SensorClock) -> None:
    with DAG("d"):
        s = Counting(task_id="s", ready_after=99, poke_interval=30, mode="reschedule",
                     timeout=100)
    first = _run(s)
    assert first.kind == "up_for_reschedule"
    spec = first.extra["reschedule"]
    assert spec == {"reschedule_date": T0 + timedelta(seconds=30), "first_poke_at": T0,
                    "poke_count": 1}
    clock.now = T0 + timedelta(seconds=31)
    second = _run(s, first_poke_at=T0, poke_count=1)
    assert second.extra["reschedule"]["first_poke_at"] == T0
    assert second.extra["reschedule"]["poke_count"] == 2
    clock.now = T0 + timedelta(seconds=101)  # measured from the first poke, not this one
    assert _run(s, first_poke_at=T0, poke_count=2).kind == "fail_no_retry"


def test_exponential_backoff_grows_and_is_capped(clock: SensorClock) -> None:
    with DAG("d"):
        s = Counting(task_id="s", ready_after=99, poke_interval=10, exponential_backoff=True,
                     max_wait=60, timeout=10_000)
    intervals = [s.next_poke_interval(T0, n, 0.0) for n in range(1, 8)]
    assert intervals[0] < intervals[2] < intervals[4]
    assert all(i <= 60 for i in intervals) and intervals[-1] == 60
    assert s.next_poke_interval(T0, 3, 9_990.0) <= 10  # never past the timeout
    assert intervals == [s.next_poke_interval(T0, n, 0.0) for n in range(1, 8)]  # stable


def test_sensor_arguments_are_checked() -> None:
    with DAG("d"):
        with pytest.raises(DagDefinitionError, match="mode"):
            Counting(task_id="a", ready_after=1, mode="sometimes")
        with pytest.raises(DagDefinitionError, match="no trigger to defer to"):
            PythonSensor(task_id="b", python_callable=lambda: True, deferrable=True)
        with pytest.raises(DagDefinitionError, match="no timezone"):
            DateTimeSensor(task_id="c", target_time=datetime(2026, 1, 1))


def test_time_sensors_poke_and_defer(clock: SensorClock) -> None:
    with DAG("d"):
        past = DateTimeSensor(task_id="past", target_time="2026-05-01T11:00:00+00:00")
        later = DateTimeSensor(task_id="later", target_time=T0 + timedelta(hours=1),
                               deferrable=True, timeout=7200)
        delta = TimeDeltaSensor(task_id="delta", delta=timedelta(minutes=5), deferrable=True)
    assert _run(past).kind == "success"
    outcome = _run(later)
    assert outcome.kind == "deferred"
    spec = outcome.extra["deferral"]
    assert spec["classpath"] == "statewright.sdk.triggers.temporal.DateTimeTrigger"
    assert spec["method_name"] == "execute_complete" and spec["timeout"] == 7200
    assert _run(delta).extra["deferral"]["trigger_kwargs"]["moment"]["value"].startswith(
        "2026-05-01T12:05")


def test_file_sensor(tmp_path: Path, clock: SensorClock) -> None:
    with DAG("d"):
        s = FileSensor(task_id="s", filepath=str(tmp_path / "*.csv"), poke_interval=5,
                       timeout=12)
        d = FileSensor(task_id="d", filepath=str(tmp_path / "*.csv"), deferrable=True)
    assert _run(s).kind == "fail_no_retry"
    assert _run(d).extra["deferral"]["classpath"].endswith("FileTrigger")
    (tmp_path / "a.csv").write_text("x")
    assert _run(s).kind == "success" and _run(d).kind == "success"


def test_python_sensor_passes_context_and_op_kwargs(clock: SensorClock) -> None:
    seen: list[Any] = []

    def ready(limit: int, ti: Any) -> Any:
        seen.append(ti.task_id)
        return PokeReturnValue(len(seen) >= limit, xcom_value=len(seen))

    with DAG("d"):
        s = PythonSensor(task_id="s", python_callable=ready, op_kwargs={"limit": 2},
                         poke_interval=1)
    outcome = _run(s)
    assert (outcome.kind, outcome.return_value, seen) == ("success", 2, ["s", "s"])


@pytest.fixture
def http_server() -> Iterator[tuple[str, list[int]]]:
    statuses: list[int] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            code = statuses.pop(0) if statuses else 200
            body = b'{"ready": true}'
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/status", statuses
    server.shutdown()
    server.server_close()


def test_http_sensor(http_server: tuple[str, list[int]], clock: SensorClock) -> None:
    url, statuses = http_server
    with DAG("d"):
        s = HttpSensor(task_id="s", url=url, poke_interval=1,
                       response_check=lambda response: response.json()["ready"])
        broken = HttpSensor(task_id="broken", url=url, poke_interval=1)
        deferred = HttpSensor(task_id="deferred", url=url, deferrable=True)
    statuses[:] = [404, 404]
    assert _run(s).kind == "success" and len(clock.sleeps) == 2
    statuses[:] = [500]
    outcome = _run(broken)
    assert outcome.kind == "failed" and "HTTP 500" in outcome.error
    spec = _run(deferred).extra["deferral"]
    assert spec["classpath"].endswith("HttpTrigger") and spec["trigger_kwargs"]["url"] == url


def test_external_task_trigger_decides_from_states() -> None:
    trig = ExternalTaskTrigger("up", [T0, T0 - timedelta(days=1)], ["a"],
                               failed_states=["failed"], skipped_states=["skipped"])
    assert trig.decide(["success"]) is None  # one of two dates
    assert trig.decide(["success", "success"]) == "success"
    assert trig.decide(["success", "failed"]) == "failed"
    assert trig.decide(["skipped", "running"]) == "skipped"
    with DAG("d"):
        s = ExternalTaskSensor(task_id="s", external_dag_id="up", external_task_id="a",
                               execution_delta=timedelta(hours=1), mode="reschedule")
    outcome = _run(s)
    kwargs = outcome.extra["deferral"]["trigger_kwargs"]
    assert kwargs["logical_dates"][0]["value"] == (T0 - timedelta(hours=1)).isoformat()
    assert kwargs["external_task_ids"] == ["a"]


# -- defer and resume ---------------------------------------------------------------------


class Deferring(BaseOperator):
    def __init__(self, *, handle: Any = None, method: str = "done", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.handle = handle
        self.method = method

    def execute(self, context: Any) -> Any:
        self.defer(trigger=TimeDeltaTrigger(timedelta(minutes=1)), method_name=self.method,
                   kwargs={"at": T0, "handle": self.handle}, timeout=30)

    def done(self, context: Any, event: Any = None, at: Any = None, handle: Any = None) -> Any:
        return {"event": event, "at": at.isoformat()}


def test_defer_describes_the_trigger_and_the_resume_point() -> None:
    with DAG("d"):
        t = Deferring(task_id="t")
    outcome = _run(t)
    assert outcome.kind == "deferred"
    spec = outcome.extra["deferral"]
    assert spec["classpath"] == "statewright.sdk.triggers.temporal.DateTimeTrigger"
    assert spec["method_name"] == "done" and spec["timeout"] == 30
    assert spec["kwargs"]["at"] == {"__type": "datetime", "value": T0.isoformat()}


def test_unserializable_kwargs_and_bad_method_fail_at_defer_time() -> None:
    with DAG("d"):
        bad = Deferring(task_id="bad", handle=object())
        typo = Deferring(task_id="typo", method="doen")
    outcome = _run(bad)
    assert outcome.kind == "failed" and "cannot be serialized" in outcome.error
    assert "'handle'" in outcome.error
    outcome = _run(typo)
    assert outcome.kind == "failed" and "names no method" in outcome.error


def test_resume_calls_the_method_with_the_event_and_kwargs() -> None:
    with DAG("d"):
        t = Deferring(task_id="t")
    ctx = _context(t.dag, t)  # type: ignore[arg-type]
    stored = _run(t).extra["deferral"]["kwargs"]
    outcome = resume_task(t, ctx, "done", {**stored, "event": "2026-05-01T12:01:00+00:00"})
    assert outcome.kind == "success"
    assert outcome.return_value == {"event": "2026-05-01T12:01:00+00:00",
                                    "at": T0.isoformat()}


def test_resume_in_fail_fails_the_try_with_the_triggers_error() -> None:
    with DAG("d"):
        t = Deferring(task_id="t")
        s = DateTimeSensor(task_id="s", target_time=T0, deferrable=True, soft_fail=True)
    ctx = _context(t.dag, t)  # type: ignore[arg-type]
    outcome = resume_task(t, ctx, "__fail__", {"error": "Trigger failure: boom",
                                               "traceback": "Traceback: trigger line 3"})
    assert outcome.kind == "failed" and "Trigger failure: boom" in outcome.error
    assert "trigger line 3" in outcome.traceback
    outcome = resume_task(t, ctx, "__fail__", {"error": "Trigger timeout", "reason": "timeout"})
    assert outcome.kind == "failed" and "TaskDeferralTimeout" in outcome.error
    sensor_ctx = _context(s.dag, s)  # type: ignore[arg-type]
    outcome = resume_task(s, sensor_ctx, "__fail__", {"error": "Trigger timeout",
                                                      "reason": "timeout"})
    assert outcome.kind == "skipped"  # a sensor's deferral timeout is its timeout: soft_fail


def test_except_exception_in_user_code_does_not_swallow_a_deferral() -> None:
    class Careless(Deferring):
        def execute(self, context: Any) -> Any:
            try:
                super().execute(context)
            except Exception:
                return "swallowed"

    with DAG("d"):
        t = Careless(task_id="t")
    assert _run(t).kind == "deferred"
