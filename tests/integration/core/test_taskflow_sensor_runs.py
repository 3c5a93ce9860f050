"""``@task.sensor`` end to end through dag.test(): reschedules keep the try, the poke's value is
the task's result, a timeout fails the task; on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from statewright.sdk import DAG, PokeReturnValue, task


def test_a_rescheduling_task_sensor_pokes_until_done_and_passes_its_value_on(
        engine: Engine) -> None:
    pokes: list[int] = []

    with DAG("tf_sensor") as dag:
        @task.sensor(mode="reschedule", poke_interval=0.05, timeout=60)
        def wait_for_rows(ti: Any) -> PokeReturnValue:
            pokes.append(ti.poke_count)
            return PokeReturnValue(is_done=len(pokes) >= 3, xcom_value={"rows": len(pokes)})

        @task
        def report(found: dict[str, int]) -> int:
            return found["rows"] * 10

        report(wait_for_rows())
    r = dag.test(engine=engine)
    assert r.states == {"wait_for_rows": "success", "report": "success"}
    assert r.ti("wait_for_rows").try_number == 1 and pokes == [0, 1, 2]
    assert r.ti("wait_for_rows").return_value == {"rows": 3}
    assert r.ti("report").return_value == 30
    path = [h["to_state"] for h in r.history if h.get("task_id") == "wait_for_rows"]
    assert path.count("up_for_reschedule") == 2


def test_a_task_sensor_that_times_out_fails_and_soft_fail_skips(engine: Engine) -> None:
    with DAG("tf_sensor_timeout") as dag:
        @task.sensor(poke_interval=0.01, timeout=0.05)
        def never() -> bool:
            return False

        @task.sensor(poke_interval=0.01, timeout=0.05, soft_fail=True)
        def never_soft() -> bool:
            return False

        never()
        never_soft()
    r = dag.test(engine=engine)
    assert r.states == {"never": "failed", "never_soft": "skipped"}
    assert "past its timeout" in (r.ti("never").state_message or "")
