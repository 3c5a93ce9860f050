"""Authoring setup and teardown tasks: as_setup / as_teardown, @setup / @teardown, the checks
Airflow makes on them, ``with setup >> teardown:``, and what the scheduler receives."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, EmptyOperator, PythonOperator, XComArg, setup, task, teardown
from statewright.services.dag_view import DagView


def _op(task_id: str) -> EmptyOperator:
    return EmptyOperator(task_id=task_id)


def _make(name: str, kind: str, role: str = "") -> Any:
    """A task named ``name``: a classic operator or a TaskFlow call, optionally setup/teardown."""
    if kind == "classic":
        op = _op(name)
        return op.as_setup() if role == "setup" else op.as_teardown() if role == "teardown" else op

    def fn() -> None:
        return None

    fn.__name__ = name
    if role == "setup":
        return setup(fn)()
    if role == "teardown":
        return teardown(fn)()
    return task(fn)()


def _operator(task_like: Any) -> Any:
    return task_like.operator if isinstance(task_like, XComArg) else task_like


# -- marking tasks ------------------------------------------------------------------------------


def test_tasks_are_neither_setup_nor_teardown_by_default() -> None:
    with DAG("d"):
        op = _op("a")
    assert (op.is_setup, op.is_teardown, op.on_failure_fail_dagrun) == (False, False, False)
    assert op.trigger_rule == "all_success"


def test_as_setup_and_as_teardown_return_the_task_and_set_the_rule() -> None:
    with DAG("d"):
        s = _op("s")
        t = _op("t")
        assert s.as_setup() is s
        assert t.as_teardown() is t
    assert s.is_setup and not s.is_teardown and s.trigger_rule == "all_success"
    assert t.is_teardown and not t.is_setup and t.trigger_rule == "all_done_setup_success"
    assert t.on_failure_fail_dagrun is False


@pytest.mark.parametrize(("s_kind", "w_kind", "t_kind"),
                         list(itertools.product(["classic", "taskflow"], repeat=3)))
def test_as_teardown_with_setups_marks_and_links_them(s_kind: str, w_kind: str,
                                                      t_kind: str) -> None:
    with DAG("d") as dag:
        s1 = _make("s1", s_kind)
        w1 = _make("w1", w_kind)
        t1 = _make("t1", t_kind)
        s1 >> w1 >> t1.as_teardown(setups=s1)
    assert _operator(s1).is_setup and _operator(t1).is_teardown
    assert not _operator(w1).is_setup and not _operator(w1).is_teardown
    assert dag.get_task("t1").upstream_task_ids == {"s1", "w1"}
    assert dag.get_task("s1").downstream_task_ids == {"w1", "t1"}
    assert dag.get_task("t1").trigger_rule == "all_done_setup_success"


def test_as_teardown_takes_several_setups_and_on_failure_fail_dagrun() -> None:
    with DAG("d") as dag:
        a, b, t = _op("a"), _op("b"), _op("t")
        t.as_teardown(setups=[a, b], on_failure_fail_dagrun=True)
    assert a.is_setup and b.is_setup
    assert dag.get_task("t").upstream_task_ids == {"a", "b"}
    assert t.on_failure_fail_dagrun is True


@pytest.mark.parametrize("kind", ["classic", "taskflow"])
@pytest.mark.parametrize(("first", "second"), [("setup", "teardown"), ("teardown", "setup")])
def test_a_task_cannot_be_both_setup_and_teardown(kind: str, first: str, second: str) -> None:
    with DAG("d"):
        s1 = _make("s1", kind)
        getattr(s1, f"as_{first}")()
        with pytest.raises(DagDefinitionError,
                           match=f"Cannot mark task 's1' as {second}; task is already a {first}"):
            getattr(s1, f"as_{second}")()
        with pytest.raises(DagDefinitionError, match="already a"):
            setattr(_operator(s1), f"is_{second}", True)


def test_a_setup_cannot_be_a_teardown_through_setups_either() -> None:
    with DAG("d"):
        t0 = _op("t0").as_teardown()
        t = _op("t")
        with pytest.raises(DagDefinitionError, match="'t0' as setup; task is already a teardown"):
            t.as_teardown(setups=t0)


def test_on_failure_fail_dagrun_only_on_a_teardown() -> None:
    with DAG("d"):
        op = _op("t")
        with pytest.raises(DagDefinitionError, match="'t' because it is not a teardown task"):
            op.on_failure_fail_dagrun = True
        op.on_failure_fail_dagrun = False  # allowed
        op.as_teardown(on_failure_fail_dagrun=True)
        assert op.on_failure_fail_dagrun is True
        with pytest.raises(DagDefinitionError, match="True or False"):
            op.on_failure_fail_dagrun = "yes"  # type: ignore[assignment]


def test_a_teardown_keeps_its_trigger_rule() -> None:
    with DAG("d"):
        t = _op("t").as_teardown()
        with pytest.raises(DagDefinitionError, match="'t' is a teardown task"):
            t.trigger_rule = "all_done"  # type: ignore[assignment]
        t.trigger_rule = "all_done_setup_success"  # type: ignore[assignment]
    assert t.trigger_rule == "all_done_setup_success"


def test_all_done_setup_success_is_a_valid_rule_for_any_task() -> None:
    # Airflow accepts it on any task; without upstream setups it behaves as all_done.
    with DAG("d"):
        op = EmptyOperator(task_id="x", trigger_rule="all_done_setup_success")
    assert op.trigger_rule == "all_done_setup_success" and not op.is_teardown


# -- decorators --------------------------------------------------------------------------------


def test_setup_and_teardown_decorators() -> None:
    with DAG("d") as dag:
        @setup
        def create() -> str:
            return "id"

        @teardown
        def delete() -> None:
            return None

        @teardown(on_failure_fail_dagrun=True)
        def delete_hard() -> None:
            return None

        @setup
        @task(retries=3)
        def create_with_retries() -> str:
            return "id"

        c, d, dh, cr = create(), delete(), delete_hard(), create_with_retries()
    assert isinstance(c, XComArg)
    assert dag.get_task("create").is_setup and not dag.get_task("create").is_teardown
    assert dag.get_task("delete").is_teardown
    assert dag.get_task("delete").trigger_rule == "all_done_setup_success"
    assert dag.get_task("delete").on_failure_fail_dagrun is False
    assert dag.get_task("delete_hard").on_failure_fail_dagrun is True
    assert dag.get_task("create_with_retries").is_setup
    assert dag.get_task("create_with_retries").retries == 3
    assert (c.is_setup, d.is_teardown, dh.on_failure_fail_dagrun) == (True, True, True)
    assert not cr.is_teardown


def test_override_keeps_setup_and_teardown() -> None:
    @setup
    def create() -> None:
        return None

    @teardown(on_failure_fail_dagrun=True)
    def delete() -> None:
        return None

    with DAG("d") as dag:
        create.override(task_id="make")()
        delete.override(task_id="drop")()
    assert dag.get_task("make").is_setup
    assert dag.get_task("drop").is_teardown and dag.get_task("drop").on_failure_fail_dagrun


def test_a_teardown_decorator_rejects_a_trigger_rule() -> None:
    @teardown
    @task(trigger_rule="one_success")
    def delete() -> None:
        return None

    with DAG("d") as dag:
        with pytest.raises(DagDefinitionError, match="trigger rule not configurable"):
            delete()
    assert "delete" not in dag.task_dict


def test_on_failure_fail_dagrun_on_a_plain_task_call_is_an_error() -> None:
    @task(on_failure_fail_dagrun=True)
    def my_bad_task() -> None:
        return None

    @task
    def my_ok_task() -> None:
        return None

    with DAG("d") as dag:
        with pytest.raises(DagDefinitionError,
                           match="'my_bad_task' because it is not a teardown task"):
            my_bad_task()
        ok = my_ok_task().as_teardown(on_failure_fail_dagrun=True)
    assert "my_bad_task" not in dag.task_dict
    assert ok.operator.is_teardown and ok.operator.on_failure_fail_dagrun


def test_decorating_twice_with_both_is_an_error() -> None:
    def fn() -> None:
        return None

    with pytest.raises(DagDefinitionError, match="already a teardown"):
        setup(teardown(fn))
    with pytest.raises(DagDefinitionError, match="already a setup"):
        teardown(setup(lambda: None))


def test_setup_decorates_only_functions() -> None:
    with pytest.raises(DagDefinitionError, match="@setup must decorate"):
        setup(3)  # type: ignore[arg-type]


# -- DAG checks --------------------------------------------------------------------------------


def test_a_task_right_after_a_setup_must_use_all_success() -> None:
    with pytest.raises(DagDefinitionError, match="'w' directly follows setup task 's'"):
        with DAG("d"):
            s = _op("s").as_setup()
            s >> EmptyOperator(task_id="w", trigger_rule="all_done")


def test_a_task_two_steps_after_a_setup_may_use_any_rule() -> None:
    with DAG("d") as dag:
        s = _op("s").as_setup()
        s >> _op("w1") >> EmptyOperator(task_id="w2", trigger_rule="all_done")
        _op("t").as_teardown(setups=s)
    assert dag.get_task("w2").trigger_rule == "all_done"


def test_fail_stop_accepts_teardowns() -> None:
    with DAG("d", fail_stop=True) as dag:
        s, w, t = _op("s"), _op("w"), _op("t")
        s >> w >> t.as_teardown(setups=s)
    assert dag.get_task("t").trigger_rule == "all_done_setup_success"
    with pytest.raises(DagDefinitionError, match="fail_stop"):
        with DAG("e", fail_stop=True):
            EmptyOperator(task_id="x", trigger_rule="all_done")


# -- with setup >> teardown: ---------------------------------------------------------------------


def test_context_manager_puts_the_work_between_setup_and_teardown() -> None:
    with DAG("d") as dag:
        s, t = _op("s").as_setup(), _op("t").as_teardown()
        with s >> t:
            a = _op("a")
            b = _op("b")
            _op("c")
            a >> b
    up = {x.task_id: x.upstream_task_ids for x in dag.tasks}
    assert up == {"s": set(), "t": {"s", "b", "c"}, "a": {"s"}, "b": {"a"}, "c": {"s"}}


def test_context_manager_with_taskflow_and_a_setup_only() -> None:
    with DAG("d") as dag:
        @setup
        def create() -> int:
            return 1

        @task
        def work(x: int) -> int:
            return x

        made = create()
        with made:
            work(2)
        outside = _op("outside")
    assert dag.get_task("work").upstream_task_ids == {"create"}
    assert outside.upstream_task_ids == set()


def test_nested_context_managers_chain_setups_and_teardowns() -> None:
    with DAG("d") as dag:
        s1, t1 = _op("s1").as_setup(), _op("t1").as_teardown()
        s2, t2 = _op("s2").as_setup(), _op("t2").as_teardown()
        with s1 >> t1:
            with s2 >> t2:
                _op("w")
    up = {x.task_id: x.upstream_task_ids for x in dag.tasks}
    assert up["w"] == {"s2"}
    assert up["t2"] == {"s2", "w"}
    assert up["s2"] == {"s1"}
    assert up["t1"] == {"s1", "t2"}


def test_a_task_created_before_the_block_can_be_added_to_it() -> None:
    with DAG("d") as dag:
        early = _op("early")
        s, t = _op("s").as_setup(), _op("t").as_teardown()
        with s >> t as scope:
            scope.add_task(early)
    assert dag.get_task("early").upstream_task_ids == {"s"}
    assert dag.get_task("t").upstream_task_ids == {"s", "early"}


def test_only_setup_or_teardown_tasks_are_context_managers() -> None:
    with DAG("d"):
        with pytest.raises(DagDefinitionError, match="only setup/teardown tasks"):
            with _op("plain"):
                pass


def test_a_failing_block_links_nothing() -> None:
    with DAG("d") as dag:
        s, t = _op("s").as_setup(), _op("t").as_teardown()
        with pytest.raises(RuntimeError):
            with s >> t:
                _op("w")
                raise RuntimeError("stop")
        _op("after")
    assert dag.get_task("w").upstream_task_ids == set()
    assert dag.get_task("after").upstream_task_ids == set()


# -- what the scheduler receives --------------------------------------------------------------


def _st_dag() -> DAG:
    with DAG("st") as dag:
        s = PythonOperator(task_id="s", python_callable=lambda: 1).as_setup()
        w1, w2 = _op("w1"), _op("w2")
        t = _op("t").as_teardown(setups=s, on_failure_fail_dagrun=True)
        s >> w1 >> w2 >> t
    return dag


def test_serialization_carries_setup_and_teardown() -> None:
    tasks = {t["task_id"]: t for t in _st_dag().serialize()["tasks"]}
    assert (tasks["s"]["is_setup"], tasks["s"]["is_teardown"]) == (True, False)
    assert (tasks["t"]["is_setup"], tasks["t"]["is_teardown"]) == (False, True)
    assert tasks["t"]["on_failure_fail_dagrun"] is True
    assert tasks["t"]["trigger_rule"] == "all_done_setup_success"
    assert tasks["w1"]["is_setup"] is tasks["w1"]["is_teardown"] is False


def test_dag_view_exposes_setups_teardowns_and_leaves() -> None:
    view = DagView(_st_dag().serialize())
    assert view.setups == {"s"} and view.teardowns == {"t"}
    assert view.tasks["t"].on_failure_fail_dagrun and view.tasks["s"].is_setup
    assert view.leaves == {"t"}
    assert view.run_state_leaves == {"t"}  # it fails the run: it counts
    assert view.indirect_setups == {"w2": frozenset({"s"})}


def test_dag_view_ignores_a_plain_teardown_for_the_run_state() -> None:
    with DAG("st2") as dag:
        s, w, t = _op("s"), _op("w"), _op("t")
        s >> w >> t.as_teardown(setups=s)
    view = DagView(dag.serialize())
    assert view.leaves == {"t"} and view.run_state_leaves == {"w"}


def test_dag_view_reads_dags_serialized_before_setup_teardown() -> None:
    data = _st_dag().serialize()
    for t in data["tasks"]:
        for key in ("is_setup", "is_teardown", "on_failure_fail_dagrun"):
            del t[key]
    data["tasks"][-1]["trigger_rule"] = "all_done"
    view = DagView(data)
    assert view.setups == frozenset() and view.teardowns == frozenset()
    assert not view.tasks["t"].is_teardown
    assert view.run_state_leaves == view.leaves == {"t"}
    assert view.indirect_setups == {}
