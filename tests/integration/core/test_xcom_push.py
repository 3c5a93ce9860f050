"""``ti.xcom_push`` / ``ti.xcom_pull`` with keys: values pushed by a try are stored with its
outcome, read by downstream tasks, kept when the try fails, and gone when a new try starts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from statewright.db.engine import make_engine
from statewright.db.tables import xcom
from statewright.sdk import DAG, PythonOperator, task


def _extract(ti: Any) -> str:
    ti.xcom_push(key="row_count", value=3)
    ti.xcom_push(key="columns", value=["id", "amount"])
    assert ti.xcom_pull(key="row_count") == 3  # this try's own push reads back
    return "s3://bucket/orders.csv"


def _load(ti: Any) -> dict[str, Any]:
    return {
        "path": ti.xcom_pull(task_ids="extract"),
        "rows": ti.xcom_pull(task_ids="extract", key="row_count"),
        "columns": ti.xcom_pull(task_ids="extract", key="columns"),
        "missing": ti.xcom_pull(task_ids="extract", key="nope", default="none"),
    }


def test_a_pushed_value_is_read_downstream_beside_the_return_value() -> None:
    with DAG("push_pull") as dag:
        extract = PythonOperator(task_id="extract", python_callable=_extract)
        load = PythonOperator(task_id="load", python_callable=_load)
        extract >> load
    result = dag.test()
    assert result.state.value == "success", result.states
    assert result.ti("load").return_value == {
        "path": "s3://bucket/orders.csv", "rows": 3, "columns": ["id", "amount"],
        "missing": "none"}


def _flaky(ti: Any) -> str:
    ti.xcom_push(key=f"attempt_{ti.try_number}", value=ti.try_number)
    if ti.try_number == 1:
        raise ConnectionError("the API timed out")
    return "ok"


def test_a_failed_try_keeps_its_pushes_and_the_next_try_starts_without_them(
        tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path}/x.db"
    with DAG("push_retry") as dag:
        PythonOperator(task_id="flaky", python_callable=_flaky, retries=1,
                       retry_delay=timedelta(seconds=0))
    seen: list[dict[str, Any]] = []

    def after_each_try(workload: Any, result: Any) -> None:
        with make_engine(url).connect() as conn:
            seen.append({r.key: r.value for r in conn.execute(select(xcom)).all()})

    result = dag.test(database_url=url, on_result=after_each_try)
    assert result.state.value == "success" and result.ti("flaky").try_number == 2
    # After each try's outcome is stored: the failed first try kept its push; the second try
    # started without it (attempt_1 is gone) and stored its own with its return value.
    assert seen == [{"attempt_1": 1}, {"attempt_2": 2, "return_value": "ok"}]


def test_a_try_that_fails_keeps_what_it_pushed(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path}/x.db"

    def push_then_fail(ti: Any) -> None:
        ti.xcom_push(key="partial", value={"done": 7})
        raise RuntimeError("disk full")

    with DAG("push_fail") as dag:
        PythonOperator(task_id="work", python_callable=push_then_fail)
    assert dag.test(database_url=url).state.value == "failed"
    with make_engine(url).connect() as conn:
        stored = {r.key: r.value for r in conn.execute(select(xcom)).all()}
    assert stored == {"partial": {"done": 7}}


def test_bad_pushes_fail_the_try_with_a_clear_error() -> None:
    with DAG("push_bad") as dag:

        @task
        def not_json() -> None:
            from statewright.sdk import get_current_context

            get_current_context()["ti"].xcom_push(key="when", value=object())

        @task
        def reserved() -> None:
            from statewright.sdk import get_current_context

            get_current_context()["ti"].xcom_push(key="return_value", value=1)

        not_json()
        reserved()
    result = dag.test()
    assert result.states == {"not_json": "failed", "reserved": "failed"}
    assert "cannot be stored as JSON" in (result.ti("not_json").state_message or "")
    assert "return the value instead" in (result.ti("reserved").state_message or "")


def test_dag_test_closes_the_engine_it_made_for_a_database_url(
        tmp_path: Any, monkeypatch: Any) -> None:
    """An engine ``dag.test(database_url=…)`` made is disposed when the run ends (on a server
    database its pooled connections would otherwise stay open until garbage collection)."""
    from statewright.services import dag_test

    made: list[Any] = []

    def tracked(url: str) -> Any:
        engine = make_engine(url)
        made.append(engine)
        monkeypatch.setattr(engine, "dispose", lambda *a, **k: made.append("disposed"))
        return engine

    monkeypatch.setattr(dag_test, "make_engine", tracked)
    with DAG("closes") as dag:
        PythonOperator(task_id="t", python_callable=lambda: 1)
    assert dag.test(database_url=f"sqlite:///{tmp_path}/c.db").state.value == "success"
    assert len(made) == 2 and made[1] == "disposed"
