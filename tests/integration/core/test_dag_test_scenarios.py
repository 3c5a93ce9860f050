"""Airflow's run semantics end to end through dag.test(): the real decisions and the one door,
on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.states import TI
from statewright.core.transitions import TASK_INSTANCE_EDGES, Actor
from statewright.sdk import (
    DAG,
    FailTask,
    PythonOperator,
    ShortCircuitOperator,
    SkipTask,
    task,
)


def _fail() -> None:
    raise ValueError("boom")


def _states(result) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {k: v.state.value for k, v in result.task_instances.items()}


def test_failure_propagates_down_a_diamond(engine: Engine) -> None:
    with DAG("diamond") as dag:
        a = PythonOperator(task_id="a", python_callable=_fail)
        b, c, d = (NoopOperator(task_id=t) for t in "bcd")
        a >> [b, c] >> d
    r = dag.test(engine=engine)
    assert _states(r) == {"a": "failed", "b": "upstream_failed", "c": "upstream_failed",
                          "d": "upstream_failed"}
    assert r.state.value == "failed"


def test_a_cleanup_leaf_that_succeeds_makes_the_run_succeed(engine: Engine) -> None:
    with DAG("cleanup") as dag:
        a = PythonOperator(task_id="a", python_callable=_fail)
        cleanup = NoopOperator(task_id="cleanup", trigger_rule="all_done")
        a >> cleanup
    r = dag.test(engine=engine)
    assert _states(r) == {"a": "failed", "cleanup": "success"}
    assert r.state.value == "success"  # Airflow decides the run from its leaves


def test_a_failed_leaf_fails_the_run_even_when_another_leaf_succeeds(engine: Engine) -> None:
    with DAG("two_leaves") as dag:
        a = PythonOperator(task_id="a", python_callable=_fail)
        publish = NoopOperator(task_id="publish")
        cleanup = NoopOperator(task_id="cleanup", trigger_rule="all_done")
        a >> [publish, cleanup]
    r = dag.test(engine=engine)
    assert _states(r)["publish"] == "upstream_failed" and r.state.value == "failed"


@pytest.mark.parametrize(("join_rule", "join_state"), [
    ("all_success", "skipped"),
    ("none_failed_min_one_success", "success"),
    ("one_success", "success"),
    ("all_done", "success"),
    ("none_skipped", "skipped"),
])
def test_branch_join_under_each_rule(engine: Engine, join_rule: str, join_state: str) -> None:
    with DAG("branching") as dag:
        @task.branch
        def choose() -> str:
            return "left"

        left, right = NoopOperator(task_id="left"), NoopOperator(task_id="right")
        after_right = NoopOperator(task_id="after_right")
        join = NoopOperator(task_id="join", trigger_rule=join_rule)
        choose() >> [left, right]
        right >> after_right
        [left, after_right] >> join
    r = dag.test(engine=engine)
    s = _states(r)
    assert (s["choose"], s["left"], s["right"], s["after_right"]) == (
        "success", "success", "skipped", "skipped")
    assert s["join"] == join_state
    assert r.state.value == "success"


@pytest.mark.parametrize(("ignore", "expected"), [
    (True, {"direct": "skipped", "cleanup": "skipped"}),
    (False, {"direct": "skipped", "cleanup": "success"}),
])
def test_short_circuit_modes(engine: Engine, ignore: bool, expected: dict[str, str]) -> None:
    with DAG("short") as dag:
        gate = ShortCircuitOperator(task_id="gate", python_callable=lambda: False,
                                    ignore_downstream_trigger_rules=ignore)
        direct = NoopOperator(task_id="direct")
        cleanup = NoopOperator(task_id="cleanup", trigger_rule="all_done")
        gate >> direct >> cleanup
    r = dag.test(engine=engine)
    s = _states(r)
    assert s["gate"] == "success"
    assert {k: s[k] for k in expected} == expected


def test_one_failed_alert_is_skipped_when_all_succeed(engine: Engine) -> None:
    with DAG("alerts") as dag:
        a, b = NoopOperator(task_id="a"), NoopOperator(task_id="b")
        alert = NoopOperator(task_id="alert", trigger_rule="one_failed")
        [a, b] >> alert
    r = dag.test(engine=engine)
    assert _states(r)["alert"] == "skipped" and r.state.value == "success"


def test_skip_task_propagates_under_all_success(engine: Engine) -> None:
    def skip() -> None:
        raise SkipTask("nothing to do today")

    with DAG("skips") as dag:
        a = PythonOperator(task_id="a", python_callable=skip)
        b = NoopOperator(task_id="b")
        c = NoopOperator(task_id="c", trigger_rule="none_failed")
        a >> b >> c
    r = dag.test(engine=engine)
    assert _states(r) == {"a": "skipped", "b": "skipped", "c": "success"}  # none_failed runs
    assert r.state.value == "success"


def test_retries_count_tries_and_name_them(engine: Engine) -> None:
    calls: list[int] = []

    def flaky(**context: object) -> str:
        calls.append(context["ti"].try_number)  # type: ignore[attr-defined]
        if len(calls) < 3:
            raise ConnectionError("not yet")
        return "done"

    with DAG("retrying") as dag:
        PythonOperator(task_id="t", python_callable=flaky, retries=3,
                       retry_delay=timedelta(seconds=0))
    r = dag.test(engine=engine)
    assert calls == [1, 2, 3]
    t = r.ti("t")
    assert (t.state.value, t.try_number, t.return_value) == ("success", 3, "done")
    names = [(h["to_state"], h["name"]) for h in r.history if h["task_id"] == "t"]
    assert ("running", "Running") in names and ("running", "Retrying") in names
    assert ("up_for_retry", "AwaitingRetry") in names


def test_retries_exhausted_fail(engine: Engine) -> None:
    with DAG("exhausted") as dag:
        PythonOperator(task_id="t", python_callable=_fail, retries=1,
                       retry_delay=timedelta(seconds=0))
    r = dag.test(engine=engine)
    assert (r.ti("t").state.value, r.ti("t").try_number) == ("failed", 2)


def test_fail_task_does_not_retry(engine: Engine) -> None:
    def fail_now() -> None:
        raise FailTask("bad credentials; retrying will not help")

    with DAG("no_retry") as dag:
        PythonOperator(task_id="t", python_callable=fail_now, retries=5,
                       retry_delay=timedelta(seconds=0))
    r = dag.test(engine=engine)
    assert (r.ti("t").state.value, r.ti("t").try_number) == ("failed", 1)
    assert "bad credentials" in (r.ti("t").state_message or "")


def test_fail_stop_skips_the_rest(engine: Engine) -> None:
    with DAG("stopping", fail_stop=True) as dag:
        a = PythonOperator(task_id="a", python_callable=_fail)
        b = NoopOperator(task_id="b")
        c = NoopOperator(task_id="c")
        a >> c
        b >> c
    r = dag.test(engine=engine)
    s = _states(r)
    # As in Airflow 3 (the execution API's _stop_remaining_tasks): the moment `a` fails, every
    # unfinished task that is not running is skipped, before its trigger rule is evaluated. The
    # run is then decided from its leaves, like any other run: the only leaf was skipped.
    assert s == {"a": "failed", "b": s["b"], "c": "skipped"}
    assert s["b"] in {"success", "skipped"}
    assert r.state.value == "success"
    assert "fail_stop" in (r.ti("c").state_message or "")


def test_results_flow_and_conf_reaches_params(engine: Engine) -> None:
    with DAG("flow", params={"n": 2}) as dag:
        @task
        def base(**context: object) -> int:
            return int(context["params"]["n"])  # type: ignore[index]

        @task
        def square(x: int) -> int:
            return x * x

        square(base())
    r = dag.test(engine=engine, conf={"n": 7})
    assert r.ti("square").return_value == 49


def test_every_recorded_edge_is_allowed_and_attributed(engine: Engine) -> None:
    with DAG("audit") as dag:
        a = PythonOperator(task_id="a", python_callable=_fail, retries=1,
                           retry_delay=timedelta(seconds=0))
        b = NoopOperator(task_id="b", trigger_rule="all_done")
        a >> b
    r = dag.test(engine=engine)
    for h in r.history:
        if h["entity"] != "task_instance" or h["from_state"] is None:
            continue
        if h["from_state"] == h["to_state"]:
            continue
        edge = TASK_INSTANCE_EDGES[(TI(h["from_state"]), TI(h["to_state"]))]
        assert Actor(h["actor"]) in edge.actors


def test_dag_test_on_a_shared_database_touches_only_its_own_run(engine: Engine) -> None:
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import runs as run_repo
    from statewright.services.dag_runs import trigger_dag

    with DAG("bystander") as other:
        NoopOperator(task_id="x")
    other.test(engine=engine)  # registers the DAG
    with transaction(engine) as conn:
        _, waiting = trigger_dag(conn, "bystander", now=utcnow(), actor=Actor.USER,
                                 run_id="left_alone")
    with DAG("mine") as dag:
        NoopOperator(task_id="y")
    assert dag.test(engine=engine).state.value == "success"
    with engine.connect() as conn:
        assert run_repo.get_by_run_id(conn, "bystander", waiting).state == "queued"
