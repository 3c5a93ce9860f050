"""Setup and teardown tasks end to end through dag.test(): the real scheduler decisions and the
one door, on SQLite and PostgreSQL; and clearing a work task, which runs its setup and teardown
again."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.cli.commands.diagnose import explain
from statewright.core.clock import utcnow
from statewright.core.states import RUN_TERMINAL
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.sdk import DAG, PythonOperator, SkipTask, setup, task, teardown
from statewright.services.controls import clear_task_instances
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

CALLS: list[str] = []
FAIL: set[str] = set()


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()
    FAIL.clear()


def _step(name: str) -> Any:
    def fn() -> str:
        CALLS.append(name)
        if name in FAIL:
            raise ValueError(f"{name} fails")
        return name
    return fn


def _states(result: Any) -> dict[str, str]:
    return {k: v.state.value for k, v in result.task_instances.items()}


def _cluster_dag(dag_id: str, *, fail_dagrun: bool = False) -> DAG:
    """create_cluster >> run_query >> delete_cluster, create_cluster >> delete_cluster."""
    with DAG(dag_id) as dag:
        create = PythonOperator(task_id="create_cluster", python_callable=_step("create"))
        query = PythonOperator(task_id="run_query", python_callable=_step("query"))
        delete = PythonOperator(task_id="delete_cluster", python_callable=_step("delete"))
        create >> query >> delete.as_teardown(setups=create.as_setup(),
                                              on_failure_fail_dagrun=fail_dagrun)
    return dag


def test_happy_path_runs_setup_work_teardown_in_order(engine: Engine) -> None:
    r = _cluster_dag("st_happy").test(engine=engine)
    assert _states(r) == {"create_cluster": "success", "run_query": "success",
                          "delete_cluster": "success"}
    assert CALLS == ["create", "query", "delete"]
    assert r.state.value == "success"


def test_a_failed_work_task_still_runs_the_teardown_and_fails_the_run(engine: Engine) -> None:
    FAIL.add("query")
    r = _cluster_dag("st_work_fails").test(engine=engine)
    assert _states(r) == {"create_cluster": "success", "run_query": "failed",
                          "delete_cluster": "success"}
    assert CALLS == ["create", "query", "delete"]
    # The teardown is the only plain leaf and it succeeded, but it is ignored: the work task
    # before it decides the run (an all_done clean-up task would have made the run succeed).
    assert r.state.value == "failed"


def test_a_failed_setup_fails_its_work_and_its_teardown_does_not_run(engine: Engine) -> None:
    FAIL.add("create")
    r = _cluster_dag("st_setup_fails").test(engine=engine)
    # As Airflow's all_done_setup_success: no setup succeeded and none was skipped, so the
    # teardown is upstream_failed (it is skipped only when its setups were all skipped).
    assert _states(r) == {"create_cluster": "failed", "run_query": "upstream_failed",
                          "delete_cluster": "upstream_failed"}
    assert CALLS == ["create"]
    assert r.state.value == "failed"


def test_a_skipped_setup_skips_its_work_and_its_teardown(engine: Engine) -> None:
    with DAG("st_setup_skips") as dag:
        @setup
        def create() -> None:
            CALLS.append("create")
            raise SkipTask("nothing to prepare today")

        @task
        def work() -> None:
            CALLS.append("work")

        @teardown
        def delete() -> None:
            CALLS.append("delete")

        made = create()
        made >> work() >> delete().as_teardown(setups=made)
    r = dag.test(engine=engine)
    assert _states(r) == {"create": "skipped", "work": "skipped", "delete": "skipped"}
    assert CALLS == ["create"]
    assert r.state.value == "success"


@pytest.mark.parametrize(("fail_dagrun", "run_state"), [(False, "success"), (True, "failed")])
def test_a_failed_teardown_fails_the_run_only_with_on_failure_fail_dagrun(
        engine: Engine, fail_dagrun: bool, run_state: str) -> None:
    FAIL.add("delete")
    r = _cluster_dag(f"st_teardown_fails_{fail_dagrun}", fail_dagrun=fail_dagrun).test(
        engine=engine)
    assert _states(r) == {"create_cluster": "success", "run_query": "success",
                          "delete_cluster": "failed"}
    assert r.state.value == run_state


def test_one_successful_setup_of_two_is_enough_for_the_teardown(engine: Engine) -> None:
    FAIL.add("s2")
    with DAG("st_two_setups") as dag:
        s1 = PythonOperator(task_id="s1", python_callable=_step("s1"))
        s2 = PythonOperator(task_id="s2", python_callable=_step("s2"))
        w = PythonOperator(task_id="w", python_callable=_step("w"))
        t = PythonOperator(task_id="t", python_callable=_step("t"))
        [s1, s2] >> w >> t.as_teardown(setups=[s1, s2])
    r = dag.test(engine=engine)
    assert _states(r) == {"s1": "success", "s2": "failed", "w": "upstream_failed",
                          "t": "success"}
    assert r.state.value == "failed"


def test_the_taskflow_context_manager_form_runs(engine: Engine) -> None:
    with DAG("st_taskflow") as dag:
        @setup
        def create() -> str:
            CALLS.append("create")
            return "cluster-1"

        @teardown
        def delete() -> None:
            CALLS.append("delete")

        @task
        def query(cluster: str) -> str:
            CALLS.append("query")
            return f"rows from {cluster}"

        cluster = create()
        with cluster >> delete():
            query(cluster)
    r = dag.test(engine=engine)
    assert CALLS == ["create", "query", "delete"]
    assert r.ti("query").return_value == "rows from cluster-1"
    assert r.state.value == "success"


def test_fail_fast_still_runs_the_teardown(engine: Engine) -> None:
    FAIL.add("w1")
    with DAG("st_fail_fast", fail_fast=True) as dag:
        s = PythonOperator(task_id="s", python_callable=_step("s"))
        w1 = PythonOperator(task_id="w1", python_callable=_step("w1"))
        w2 = PythonOperator(task_id="w2", python_callable=_step("w2"))
        t = PythonOperator(task_id="t", python_callable=_step("t"))
        s >> w1 >> w2 >> t.as_teardown(setups=s)
    r = dag.test(engine=engine)
    # fail_fast skips the unfinished work task at once but never a teardown ("Not skipping
    # teardown task"), so the teardown runs once everything before it is done.
    assert _states(r) == {"s": "success", "w1": "failed", "w2": "skipped", "t": "success"}
    assert CALLS == ["s", "w1", "t"]


# -- clearing ----------------------------------------------------------------------------------


def _drive(engine: Engine, dag: DAG, run_id: str) -> str:
    """Run the scheduler and the in-process executor on one run until it finishes again."""
    with engine.connect() as conn:
        run_pk = run_repo.get_by_run_id(conn, dag.dag_id, run_id).id
    views = DagViewCache()
    executor = InProcessExecutor(engine, dags={dag.dag_id: dag}, views=views)
    scheduler = Scheduler(engine, executor, views=views,
                          config=SchedulerConfig(idle_seconds=0.0, only_runs=frozenset({run_pk})))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        scheduler.run_once()
        with engine.connect() as conn:
            state = run_repo.get(conn, run_pk).state
        if state in {s.value for s in RUN_TERMINAL}:
            return str(state)
    raise AssertionError(f"run {run_id} did not finish")


def _ti_states(engine: Engine, dag_id: str, run_id: str) -> dict[str, tuple[str, int]]:
    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, dag_id, run_id)
        return {t.task_id: (t.state, t.try_number) for t in ti_repo.by_run(conn, run.id)}


def _scoped_chain(dag_id: str) -> DAG:
    """prepare >> create >> load >> report >> delete, create >> delete: only create is a setup,
    so report is in create's scope without being its direct downstream."""
    with DAG(dag_id) as dag:
        prepare = PythonOperator(task_id="prepare", python_callable=_step("prepare"))
        create = PythonOperator(task_id="create", python_callable=_step("create"))
        load = PythonOperator(task_id="load", python_callable=_step("load"))
        report = PythonOperator(task_id="report", python_callable=_step("report"))
        delete = PythonOperator(task_id="delete", python_callable=_step("delete"))
        prepare >> create >> load >> report >> delete.as_teardown(setups=create.as_setup())
    return dag


def test_clearing_a_work_task_runs_its_setup_and_teardown_again(engine: Engine) -> None:
    dag = _scoped_chain("st_clear")
    FAIL.add("report")
    first = dag.test(engine=engine, run_id="r1")
    assert _states(first) == {"prepare": "success", "create": "success", "load": "success",
                              "report": "failed", "delete": "success"}
    assert first.state.value == "failed"
    FAIL.clear()
    CALLS.clear()

    plan = clear_task_instances(engine, "r1", dag_id="st_clear", task_regexes=["^report$"],
                                now=utcnow())

    # The setup and its teardown come with the work task; the tasks outside its scope do not.
    assert sorted(c.task_id for c in plan.changes) == ["create", "delete", "report"]
    with engine.connect() as conn:
        why = explain(conn, "st_clear", "r1", "report", now=utcnow())
    assert any("not met yet" in line for line in why)
    assert any("scope of setup task(s) [create=none]" in line for line in why)
    assert _drive(engine, dag, "r1") == "success"
    assert CALLS == ["create", "report", "delete"]
    # report's own upstream (load) stayed success, yet it was not scheduled before its setup
    # had succeeded again (Airflow's setup constraint); the teardown came after both.
    with engine.connect() as conn:
        rows = transitions_log.for_run(conn, "st_clear", "r1")
    cleared_at = max(i for i, r in enumerate(rows) if r.to_state == "restarting")
    after = [(r.task_id, r.to_state) for r in rows[cleared_at + 1:] if r.task_id]
    assert after.index(("report", "scheduled")) > after.index(("create", "success"))
    assert after.index(("delete", "scheduled")) > after.index(("report", "success"))
    states = _ti_states(engine, "st_clear", "r1")
    assert {t: s for t, (s, _) in states.items()} == {
        "prepare": "success", "create": "success", "load": "success", "report": "success",
        "delete": "success"}
    assert (states["prepare"][1], states["load"][1]) == (1, 1)
    assert (states["create"][1], states["report"][1], states["delete"][1]) == (2, 2, 2)


def test_clearing_only_failed_leaves_a_successful_setup_alone(engine: Engine) -> None:
    # --only-failed narrows after the setup/teardown widening, as in Airflow: here the failed
    # work task is cleared alone, and its direct upstream setup is not run again.
    dag = _cluster_dag("st_clear_failed")
    FAIL.add("query")
    dag.test(engine=engine, run_id="r1")
    FAIL.clear()
    CALLS.clear()
    plan = clear_task_instances(engine, "r1", dag_id="st_clear_failed",
                                task_regexes=["^run_query$"], only_failed=True, now=utcnow())
    assert [c.task_id for c in plan.changes] == ["run_query"]
    assert _drive(engine, dag, "r1") == "success"
    assert CALLS == ["query"]


def test_clearing_a_setup_runs_its_teardown_again(engine: Engine) -> None:
    dag = _cluster_dag("st_clear_setup")
    dag.test(engine=engine, run_id="r1")
    CALLS.clear()
    plan = clear_task_instances(engine, "r1", dag_id="st_clear_setup",
                                task_regexes=["^create_cluster$"], now=utcnow())
    assert sorted(c.task_id for c in plan.changes) == ["create_cluster", "delete_cluster"]
    assert _drive(engine, dag, "r1") == "success"
    assert CALLS == ["create", "delete"]
