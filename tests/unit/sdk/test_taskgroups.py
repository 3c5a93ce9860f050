"""Task groups: ids, nesting, edges with groups, default_args, @task_group, bad input,
serialization."""

from __future__ import annotations

from datetime import datetime

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, EmptyOperator, TaskGroup, dag, task, task_group


def test_task_ids_carry_the_group_prefix_and_nested_groups_chain_it():
    with DAG("d") as d:
        start = EmptyOperator(task_id="start")
        with TaskGroup("outer", tooltip="the outer one") as outer:
            a = EmptyOperator(task_id="a")
            with TaskGroup("inner") as inner:
                b = EmptyOperator(task_id="b")
    assert d.task_ids == ["start", "outer.a", "outer.inner.b"]
    assert (outer.group_id, inner.group_id, inner.label) == ("outer", "outer.inner", "inner")
    assert a.task_group is outer and b.task_group is inner
    assert start.task_group is d.task_group and d.task_group.is_root
    assert inner.parent_group is outer and outer.tooltip == "the outer one"
    assert list(d.task_group_dict) == ["outer", "outer.inner"]


def test_prefix_group_id_false_leaves_ids_as_written():
    with DAG("d") as d:
        with TaskGroup("g", prefix_group_id=False):
            EmptyOperator(task_id="a")
            with TaskGroup("h"):
                EmptyOperator(task_id="b")
    assert d.task_ids == ["a", "h.b"]
    assert list(d.task_group_dict) == ["g", "h"]


def test_edges_between_tasks_groups_and_lists_use_roots_and_leaves():
    with DAG("d") as d:
        start = EmptyOperator(task_id="start")
        with TaskGroup("g") as g:
            a, b, c = (EmptyOperator(task_id=x) for x in "abc")
            a >> [b, c]
        with TaskGroup("h") as h:
            x = EmptyOperator(task_id="x")
        end = EmptyOperator(task_id="end")
        start >> g >> [h, end]
    assert [t.task_id for t in g.roots] == ["g.a"]
    assert [t.task_id for t in g.leaves] == ["g.b", "g.c"]
    assert a.upstream_task_ids == {"start"}
    assert b.downstream_task_ids == c.downstream_task_ids == {"h.x", "end"}
    assert x.upstream_task_ids == {"g.b", "g.c"}
    h << start
    assert x.upstream_task_ids == {"g.b", "g.c", "start"}
    assert start.downstream_task_ids == {"g.a", "h.x"}
    d.validate()


def test_default_args_merge_dag_then_outer_then_inner_then_task():
    with DAG("d", default_args={"retries": 1, "queue": "q0", "pool": "p0"}) as d:
        with TaskGroup("outer", default_args={"retries": 2, "queue": "q1"}):
            a = EmptyOperator(task_id="a")
            with TaskGroup("inner", default_args={"retries": 3}):
                b = EmptyOperator(task_id="b")
                c = EmptyOperator(task_id="c", retries=5)
        e = EmptyOperator(task_id="e")
    assert (a.retries, a.queue, a.pool) == (2, "q1", "p0")
    assert (b.retries, b.queue, b.pool) == (3, "q1", "p0")
    assert c.retries == 5
    assert (e.retries, e.queue) == (1, "q0")
    assert d.get_task("outer.inner.b") is b


def test_task_group_argument_and_group_dag_argument():
    d = DAG("d")
    g = TaskGroup("g", dag=d)
    a = EmptyOperator(task_id="a", task_group=g)
    assert a.dag is d and a.task_id == "g.a"


def test_task_group_decorator_gives_each_call_a_unique_group():
    @task
    def one(value):
        return value

    @task
    def two(value):
        return value

    @task_group
    def pipeline(value):
        """Runs one, then two."""
        two(one(value))

    with DAG("d") as d:
        first = pipeline(1)
        second = pipeline(2)
        third = pipeline.override(group_id="custom")(3)
    assert isinstance(first, TaskGroup)
    assert [first.group_id, second.group_id, third.group_id] == [
        "pipeline", "pipeline__1", "custom"]
    assert first.tooltip == "Runs one, then two."
    assert "pipeline__1.one" in d.task_ids and "pipeline__1.two" in d.task_ids
    assert d.get_task("pipeline.two").upstream_task_ids == {"pipeline.one"}


def test_task_group_decorator_returns_what_the_function_returns():
    @task
    def produce():
        return 1

    @task
    def consume(value):
        return value

    @task_group(group_id="grp", tooltip="given")
    def make():
        return produce()

    with DAG("d") as d:
        out = make()
        consume(out)
    assert d.get_task("consume").upstream_task_ids == {"grp.produce"}
    assert d.task_group_dict["grp"].tooltip == "given"


def test_taskflow_ids_inside_a_group_are_made_unique_within_it():
    @task
    def step():
        return 1

    with DAG("d") as d:
        step()
        with TaskGroup("g"):
            step()
            step()
    assert d.task_ids == ["step", "g.step", "g.step__1"]


def test_task_group_inside_a_dag_decorator():
    @dag(start_date=datetime(2024, 1, 1), schedule=None)
    def grouped():
        @task_group
        def section():
            EmptyOperator(task_id="a")

        section()

    d = grouped()
    assert d.task_ids == ["section.a"]


@pytest.mark.parametrize("bad", ["a.b", "has space", "", 5])
def test_a_bad_group_id_is_refused_at_definition(bad):
    with DAG("d"), pytest.raises(DagDefinitionError, match="group_id") as info:
        TaskGroup(bad)
    if bad == "a.b":
        assert "dot" in str(info.value)


def test_a_duplicate_task_id_inside_a_group_is_refused():
    with DAG("d") as d, TaskGroup("g"):
        EmptyOperator(task_id="a")
        with pytest.raises(DagDefinitionError,
                           match=r"task id 'a' is used twice in task group 'g'"):
            EmptyOperator(task_id="a")
    assert d.task_ids == ["g.a"]


def test_a_duplicate_group_id_is_refused():
    with DAG("d"):
        TaskGroup("g")
        with pytest.raises(DagDefinitionError, match="task group id 'g' is used twice"):
            TaskGroup("g")


def test_a_group_outside_a_dag_is_refused():
    with pytest.raises(DagDefinitionError, match="belongs to no DAG"):
        TaskGroup("g")


def test_bad_group_arguments_are_refused():
    with DAG("d"):
        with pytest.raises(DagDefinitionError, match="default_args must be a dict"):
            TaskGroup("g", default_args=[1])
        with pytest.raises(DagDefinitionError, match="tooltip must be a string"):
            TaskGroup("h", tooltip=3)
        with pytest.raises(DagDefinitionError, match="ui_color must be a string"):
            TaskGroup("h", ui_color=None)
        with pytest.raises(DagDefinitionError, match="task_group= must be a TaskGroup"):
            EmptyOperator(task_id="a", task_group="g")


def test_a_group_of_another_dag_is_refused():
    other = DAG("other")
    g = TaskGroup("g", dag=other)
    with DAG("d"), pytest.raises(DagDefinitionError, match="belongs to DAG 'other'"):
        EmptyOperator(task_id="a", task_group=g)


def test_a_task_group_call_with_wrong_arguments_is_refused():
    @task_group
    def section(value):
        EmptyOperator(task_id="a")

    with DAG("d"), pytest.raises(DagDefinitionError, match="task group 'section'"):
        section(1, 2)


def test_a_task_group_object_is_not_mapped_directly():
    with DAG("d"):
        group = TaskGroup("g")
        for call in (lambda: group.expand(value=[1]), lambda: group.partial(value=1)):
            with pytest.raises(DagDefinitionError, match="@task_group"):
                call()


def test_an_open_group_is_closed_when_its_block_fails():
    with DAG("d") as d:
        with pytest.raises(RuntimeError), TaskGroup("g"):
            raise RuntimeError("boom")
        EmptyOperator(task_id="after")
    assert d.task_ids == ["after"]


def test_the_serialized_dag_carries_groups_and_each_tasks_group():
    with DAG("d") as d:
        EmptyOperator(task_id="start")
        with TaskGroup("outer", tooltip="tip", ui_color="#fff"):
            with TaskGroup("inner"):
                EmptyOperator(task_id="b")
    data = d.serialize()
    groups = {t["task_id"]: t["task_group"] for t in data["tasks"]}
    assert groups == {"start": None, "outer.inner.b": "outer.inner"}
    assert data["task_groups"] == [
        {"group_id": "outer", "label": "outer", "parent": None, "tooltip": "tip",
         "prefix_group_id": True, "ui_color": "#fff", "ui_fgcolor": "#000"},
        {"group_id": "outer.inner", "label": "inner", "parent": "outer", "tooltip": "",
         "prefix_group_id": True, "ui_color": "CornflowerBlue", "ui_fgcolor": "#000"},
    ]


def test_a_teardown_at_the_end_of_a_group_is_not_one_of_its_leaves():
    with DAG("d") as d:
        with TaskGroup("g") as g:
            create = EmptyOperator(task_id="create").as_setup()
            work = EmptyOperator(task_id="work")
            other = EmptyOperator(task_id="other")
            delete = EmptyOperator(task_id="delete").as_teardown(setups=create)
            create >> [work, other] >> delete
        after = EmptyOperator(task_id="after")
        g >> after
    assert [t.task_id for t in g.leaves] == ["g.other", "g.work"]
    assert after.upstream_task_ids == {"g.work", "g.other"}
    assert [t.task_id for t in g.roots] == ["g.create"]
    d.validate()


def test_a_failed_dag_file_import_leaves_no_group_open(tmp_path):
    from statewright.sdk import _dag_context
    from statewright.sdk.loader import load_dag_file

    bad = tmp_path / "bad.py"
    bad.write_text(
        "from statewright.sdk import DAG, EmptyOperator, TaskGroup\n"
        "dag = DAG('bad')\n"
        "dag.__enter__()\n"
        "TaskGroup('g').__enter__()\n"
        "raise RuntimeError('broken file')\n")
    result = load_dag_file(bad)
    assert result.error is not None and "broken file" in result.error
    assert _dag_context.open_task_groups() == []
    with DAG("after") as d:
        EmptyOperator(task_id="a")
    assert d.task_ids == ["a"]


def test_a_task_group_function_returning_a_list_binds_edges_to_it():
    @task_group
    def fan():
        return [EmptyOperator(task_id="x"), EmptyOperator(task_id="y")]

    with DAG("d") as d:
        EmptyOperator(task_id="hidden_in_group", task_group=TaskGroup("other"))
        start = EmptyOperator(task_id="start")
        start >> fan()
    assert start.downstream_task_ids == {"fan.x", "fan.y"}
    assert d.task_group_dict["fan"].group_id == "fan"


def test_an_unknown_task_group_argument_is_refused():
    @task_group(colour="red")
    def section():
        EmptyOperator(task_id="a")

    with DAG("d"), pytest.raises(DagDefinitionError, match=r"@task_group 'section'.*colour"):
        section()


def test_a_task_id_clash_across_an_unprefixed_group_is_refused_and_leaves_the_group_clean():
    with DAG("d") as d:
        EmptyOperator(task_id="a")
        with TaskGroup("g", prefix_group_id=False) as g:
            with pytest.raises(DagDefinitionError, match=r"task id 'a' .*task group 'g'"):
                EmptyOperator(task_id="a")
            EmptyOperator(task_id="b")
    assert d.task_ids == ["a", "b"]
    assert [t.task_id for t in g.iter_tasks()] == ["b"]
