from __future__ import annotations

import importlib
from datetime import timedelta

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import (
    DAG,
    EmptyOperator,
    PythonOperator,
    TriggerRule,
    chain,
    cross_downstream,
)


def _ids(tasks):
    return sorted(t.task_id for t in tasks)


def test_cycle_is_named_as_a_path():
    with pytest.raises(DagDefinitionError, match=r"a >> b >> c >> a"):
        with DAG("cyclic"):
            a, b, c = (EmptyOperator(task_id=i) for i in "abc")
            a >> b >> c >> a


def test_cycle_in_plain_dag_found_by_validate():
    dag = DAG("plain")
    a = EmptyOperator(task_id="a", dag=dag)
    b = EmptyOperator(task_id="b", dag=dag)
    a >> b >> a
    with pytest.raises(DagDefinitionError, match=r"a >> b >> a|b >> a >> b"):
        dag.validate()
    with pytest.raises(DagDefinitionError, match="cycle"):
        dag.serialize()


def test_self_dependency_is_an_error():
    with DAG("d"):
        a = EmptyOperator(task_id="a")
        with pytest.raises(DagDefinitionError, match="itself"):
            a >> a


def test_duplicate_task_id_names_both_tasks():
    with pytest.raises(DagDefinitionError) as info:
        with DAG("d"):
            EmptyOperator(task_id="same")
            PythonOperator(task_id="same", python_callable=print)
    message = str(info.value)
    assert "'same'" in message and "EmptyOperator" in message and "PythonOperator" in message
    assert "test_dag_definition.py" in message


def test_unknown_trigger_rule_names_task_and_value():
    with DAG("d"):
        with pytest.raises(DagDefinitionError, match=r"task 'x'.*'sometimes'"):
            EmptyOperator(task_id="x", trigger_rule="sometimes")


def test_trigger_rule_accepts_enum_and_is_validated_on_assignment():
    with DAG("d"):
        t = EmptyOperator(task_id="x", trigger_rule=TriggerRule.ALL_DONE)
    assert t.trigger_rule is TriggerRule.ALL_DONE
    with pytest.raises(DagDefinitionError):
        t.trigger_rule = "nope"


@pytest.mark.parametrize("bad", ["", "has space", "semi;colon", "x" * 251, 7])
def test_invalid_ids(bad):
    with pytest.raises(DagDefinitionError):
        DAG(bad)
    with pytest.raises(DagDefinitionError):
        EmptyOperator(task_id=bad)


def test_valid_ids():
    DAG("a-b.c_d9")
    DAG("x" * 250)


def test_unknown_dag_keyword_is_named():
    with pytest.raises(DagDefinitionError, match=r"'schedule_interval'.*now 'schedule'"):
        DAG("d", schedule_interval="@daily")
    with pytest.raises(DagDefinitionError, match="'colour'"):
        DAG("d", colour="red")


def test_unknown_operator_keyword_names_argument_and_task():
    with DAG("d"):
        with pytest.raises(
            DagDefinitionError, match=r"task_id='t'.*'retrys' \(did you mean 'retries'"
        ):
            EmptyOperator(task_id="t", retrys=3)
        with pytest.raises(DagDefinitionError, match=r"'python_callable'"):
            PythonOperator(task_id="p")


def test_fail_stop_and_fail_fast():
    assert DAG("a", fail_fast=True).fail_stop is True
    assert DAG("b", fail_stop=True, fail_fast=True).fail_stop is True
    assert DAG("c").fail_stop is False
    with pytest.raises(DagDefinitionError, match="disagree"):
        DAG("d", fail_stop=True, fail_fast=False)


def test_fail_stop_requires_all_success():
    with DAG("d", fail_stop=True):
        with pytest.raises(DagDefinitionError, match=r"'t'.*'all_done'"):
            EmptyOperator(task_id="t", trigger_rule="all_done")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"retries": -1},
        {"retries": 1.5},
        {"retry_delay": "5m"},
        {"execution_timeout": "10"},
        {"execution_timeout": 0},
        {"pool_slots": 0},
        {"pool_slots": 2**31},  # the columns are 32-bit integers: a run's rows would be refused
        {"retries": 2**31},
        {"weight_rule": "sideways"},
        {"priority_weight": 2**40},
        {"on_failure_callback": "not callable"},
        {"retry_exponential_backoff": 3},
    ],
)
def test_bad_task_arguments(kwargs):
    with DAG("d"):
        with pytest.raises(DagDefinitionError):
            EmptyOperator(task_id="t", **kwargs)


@pytest.mark.parametrize("argument", ["pool", "queue"])
def test_a_pool_or_queue_name_past_its_column_is_refused_when_parsed(argument):
    """A name the database would refuse when the run's task instances are written (256
    characters, Airflow's limit) stops the file, with the task and the limit named; at the
    limit it loads."""
    with DAG("d"):
        assert getattr(EmptyOperator(task_id="ok", **{argument: "p" * 256}), argument) == "p" * 256
        with pytest.raises(DagDefinitionError, match=rf"'t'.*{argument}.*257 characters.*256"):
            EmptyOperator(task_id="t", **{argument: "p" * 257})


def test_an_operator_class_name_is_stored_clipped_to_its_column():
    from statewright.sdk.serialization import serialize_dag

    long_name = type("Op" + "x" * 150, (EmptyOperator,), {})
    with DAG("d") as dag:
        long_name(task_id="t")
    assert serialize_dag(dag)["tasks"][0]["operator"] == long_name.__name__[:100]


def test_delays_accept_seconds():
    with DAG("d"):
        t = EmptyOperator(task_id="t", retry_delay=30, max_retry_delay=600.5, execution_timeout=10)
    assert t.retry_delay == timedelta(seconds=30)
    assert t.max_retry_delay == timedelta(seconds=600.5)
    assert t.execution_timeout == timedelta(seconds=10)


def test_bad_schedule():
    with pytest.raises(DagDefinitionError, match="cron"):
        DAG("d", schedule="every day")
    with pytest.raises(DagDefinitionError, match="preset"):
        DAG("d", schedule="@fortnightly")
    assert DAG("d", schedule="*/5 * * * *").schedule == "*/5 * * * *"


def test_default_args_fill_unset_arguments_only():
    default_args = {
        "retries": 3,
        "retry_delay": timedelta(minutes=1),
        "pool": "small",
        "owner": "data",
        "email_on_failure": True,  # unknown to operators: ignored, as in Airflow
        "env": {"A": "1"},  # only operators that take `env` get it
    }
    with DAG("d", default_args=default_args) as dag:
        a = EmptyOperator(task_id="a")
        b = EmptyOperator(task_id="b", retries=0)
        c = EmptyOperator(task_id="c", default_args={"retries": 7})
        from statewright.sdk import BashOperator

        bash = BashOperator(task_id="bash", bash_command="true")
    assert (a.retries, a.retry_delay, a.pool, a.owner) == (3, timedelta(minutes=1), "small", "data")
    assert b.retries == 0
    assert c.retries == 7
    assert bash.env == {"A": "1"}
    assert dag.default_args["retries"] == 3


def test_default_args_start_date_and_params():
    from datetime import datetime

    dag = DAG(
        "d",
        params={"a": 1, "b": 2},
        default_args={"start_date": datetime(2024, 1, 1), "params": {"b": 3}},
    )
    assert dag.start_date is not None and dag.start_date.year == 2024
    assert dag.params == {"a": 1, "b": 3}


def test_dependency_operators():
    with DAG("d") as dag:
        a, b, c, d, e = (EmptyOperator(task_id=i) for i in "abcde")
        result = a >> [b, c]
        assert result == [b, c]
        [b, c] >> d
        e << d
        assert (a << EmptyOperator(task_id="f")).task_id == "f"
    assert a.downstream_task_ids == {"b", "c"}
    assert d.upstream_task_ids == {"b", "c"}
    assert _ids(e.upstream_list) == ["d"]
    assert a.upstream_task_ids == {"f"}
    assert _ids(dag.roots) == ["f"]
    assert _ids(dag.leaves) == ["e"]
    assert a.get_flat_relative_ids() == {"b", "c", "d", "e"}


def test_set_upstream_and_downstream():
    with DAG("d"):
        a, b, c = (EmptyOperator(task_id=i) for i in "abc")
        a.set_downstream(b)
        c.set_upstream([a, b])
    assert a.downstream_task_ids == {"b", "c"}
    assert c.upstream_task_ids == {"a", "b"}


def test_chain_pairs_equal_length_lists():
    with DAG("d"):
        t1, t2, t3, t4, t5, t6 = (EmptyOperator(task_id=f"t{i}") for i in range(1, 7))
        chain(t1, [t2, t3], [t4, t5], t6)
    assert t1.downstream_task_ids == {"t2", "t3"}
    assert t2.downstream_task_ids == {"t4"}
    assert t3.downstream_task_ids == {"t5"}
    assert t6.upstream_task_ids == {"t4", "t5"}


def test_chain_unequal_lists_is_an_error():
    with DAG("d"):
        a, b, c = (EmptyOperator(task_id=i) for i in "abc")
        with pytest.raises(DagDefinitionError, match="same length"):
            chain([a, b], [c])


def test_cross_downstream():
    with DAG("d"):
        a, b, c, d = (EmptyOperator(task_id=i) for i in "abcd")
        cross_downstream([a, b], [c, d])
    assert c.upstream_task_ids == {"a", "b"}
    assert d.upstream_task_ids == {"a", "b"}


def test_task_outside_dag_joins_the_dag_of_its_relative():
    with DAG("d") as dag:
        inside = EmptyOperator(task_id="inside")
    outside = EmptyOperator(task_id="outside")
    assert outside.dag is None
    inside >> outside
    assert outside.dag is dag and dag.has_task("outside")


def test_tasks_without_dag_cannot_be_linked():
    a = EmptyOperator(task_id="a")
    b = EmptyOperator(task_id="b")
    with pytest.raises(DagDefinitionError, match="no DAG"):
        a >> b


def test_tasks_of_two_dags_cannot_be_linked():
    with DAG("one"):
        a = EmptyOperator(task_id="a")
    with DAG("two"):
        b = EmptyOperator(task_id="b")
    with pytest.raises(DagDefinitionError, match="different DAGs"):
        a >> b


def test_dag_attributes_and_topological_sort():
    with DAG("d", description="x", tags=["t1", "t1", "t2"]) as dag:
        c = EmptyOperator(task_id="c")
        a = EmptyOperator(task_id="a")
        b = EmptyOperator(task_id="b")
        a >> b >> c
    assert dag.fileloc.endswith("test_dag_definition.py")
    assert [t.task_id for t in dag.topological_sort()] == ["a", "b", "c"]
    assert dag.tasks == [c, a, b]
    assert dag.tags == ["t1", "t2"]
    with pytest.raises(DagDefinitionError, match="no task 'zz'"):
        dag.get_task("zz")


def test_dag_test_delegates(monkeypatch):
    dag_module = importlib.import_module("statewright.sdk.dag")

    calls = []
    monkeypatch.setattr(dag_module, "_test_runner",
                        lambda dag, conf=None, **kw: calls.append((dag, conf, kw)) or "ran")
    dag = DAG("d")
    assert dag.test(conf={"a": 1}, echo=True) == "ran"
    assert calls == [(dag, {"a": 1}, {"echo": True})]


def test_dag_test_finds_its_runner_by_entry_point(monkeypatch):
    """The SDK names no service: the runner is the ``statewright.runners`` entry point."""
    dag_module = importlib.import_module("statewright.sdk.dag")
    from statewright.services.dag_test import run_dag_test

    monkeypatch.setattr(dag_module, "_test_runner", None)
    assert dag_module.dag_test_runner() is run_dag_test


def test_topological_sort_breaks_ties_by_definition_order():
    with DAG("ties") as dag:
        late, early, mid, last = (EmptyOperator(task_id=t) for t in ("z", "a", "m", "end"))
        root = EmptyOperator(task_id="root")
        root >> [mid, early, late]
        [late, early] >> last
    order = [t.task_id for t in dag.topological_sort()]
    assert order == ["root", "z", "a", "m", "end"]


def test_operator_arguments_are_checked_with_or_without_the_keyword_fast_path():
    from statewright.sdk import BaseOperator

    class Needs(BaseOperator):
        def __init__(self, *, path: str, mode: str = "r", **kwargs):
            super().__init__(**kwargs)
            self.path, self.mode = path, mode

        def execute(self, context):
            return self.path

    with DAG("args"):
        ok = Needs(task_id="ok", path="/x")
        assert (ok.path, ok.mode) == ("/x", "r")
        with pytest.raises(DagDefinitionError, match=r"Needs\(task_id='m'\).*'path'"):
            Needs(task_id="m")
        with pytest.raises(DagDefinitionError, match=r"unknown argument.*'colour'"):
            Needs(task_id="u", path="/x", colour="red")
        with pytest.raises(DagDefinitionError, match=r"unknown argument.*'nope'"):
            EmptyOperator(task_id="e", nope=1)
        with pytest.raises(DagDefinitionError, match="positional"):
            EmptyOperator("e2", "extra")
