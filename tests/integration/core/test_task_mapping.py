"""Dynamic task mapping end to end (scheduler, door, worker, results) on SQLite and PostgreSQL:
``.expand()``, ``.expand_kwargs()``, ``.partial()``, ``XComArg.map/zip/concat``, the cross
product, zero-length and over-long expansions, values that cannot be mapped over, and reading a
mapped task's results downstream."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import Engine, select

from statewright.db.tables import state_transition, task_instance, task_instance_history
from statewright.sdk import DAG, BaseOperator, PythonOperator, task


def _mapped(result: Any, task_id: str) -> dict[int, Any]:
    return {ti.map_index: ti for ti in result.task_instances.values() if ti.task_id == task_id}


def test_a_literal_list_expands_and_the_downstream_gets_the_results_in_order(
        engine: Engine) -> None:
    with DAG("map_literal") as dag:
        @task
        def add_one(x: int) -> int:
            return x + 1

        @task
        def sum_it(values: Any) -> dict[str, Any]:
            return {"list": list(values), "total": sum(values), "len": len(values)}

        sum_it(add_one.expand(x=[1, 2, 3]))
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    instances = _mapped(result, "add_one")
    assert sorted(instances) == [0, 1, 2]
    assert [instances[i].return_value for i in range(3)] == [2, 3, 4]
    assert result.ti("sum_it").return_value == {"list": [2, 3, 4], "total": 9, "len": 3}
    with engine.connect() as conn:
        rows = conn.execute(select(state_transition.c.map_index, state_transition.c.from_state,
                                   state_transition.c.to_state)
                            .where(state_transition.c.task_id == "add_one",
                                   state_transition.c.run_id == result.run_id)).all()
        history = conn.execute(select(task_instance_history.c.map_index)
                               .where(task_instance_history.c.task_id == "add_one",
                                      task_instance_history.c.run_id == result.run_id)).all()
    # Created unexpanded (-1, none); expanded: index 0 from the same row, 1 and 2 created.
    assert (-1, None, "none") in rows
    assert (0, "none", "scheduled") in rows
    assert {(1, None, "scheduled"), (2, None, "scheduled")} <= set(rows)
    assert sorted(m for (m,) in history) == [0, 1, 2]


def test_a_mapped_task_maps_over_an_upstream_list_and_a_mapped_one_over_a_mapped_one(
        engine: Engine) -> None:
    with DAG("map_second_order") as dag:
        @task
        def get_nums() -> list[int]:
            return [1, 2, 3]

        @task
        def times_2(num: int) -> int:
            return num * 2

        @task
        def add_10(num: int) -> int:
            return num + 10

        add_10.expand(num=times_2.expand(num=get_nums()))
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    assert [t.return_value for _, t in sorted(_mapped(result, "add_10").items())] == [12, 14, 16]


def test_several_mapped_arguments_give_the_cross_product_last_one_fastest(
        engine: Engine) -> None:
    with DAG("map_cross") as dag:
        @task
        def pair(x: int, y: str, sep: str) -> str:
            return f"{x}{sep}{y}"

        pair.partial(sep="-").expand(x=[1, 2], y=["a", "b", "c"])
    result = dag.test(engine=engine)
    values = [t.return_value for _, t in sorted(_mapped(result, "pair").items())]
    assert values == ["1-a", "1-b", "1-c", "2-a", "2-b", "2-c"]


def test_mapping_over_a_dict_gives_key_value_pairs(engine: Engine) -> None:
    with DAG("map_dict") as dag:
        @task
        def show(item: Any) -> str:
            key, value = item
            return f"{key}={value}"

        show.expand(item={"a": 1, "b": 2})
    result = dag.test(engine=engine)
    assert [t.return_value for _, t in sorted(_mapped(result, "show").items())] == ["a=1", "b=2"]


def test_zero_items_skip_the_mapped_task_and_its_downstream(engine: Engine) -> None:
    with DAG("map_empty") as dag:
        @task
        def nothing() -> list[int]:
            return []

        @task
        def work(x: int) -> int:
            return x

        @task
        def after(values: Any) -> int:
            return len(values)

        @task(trigger_rule="all_done")
        def count(values: Any) -> int:
            return len(values)

        out = work.expand(x=nothing())
        after(out)
        count(out)
    result = dag.test(engine=engine)
    assert result.ti("work").state.value == "skipped"
    assert result.ti("work").map_index == -1
    assert "empty" in (result.ti("work").state_message or "")
    assert result.ti("after").state.value == "skipped"
    assert result.ti("count").return_value == 0
    assert result.state.value == "success"


def test_more_items_than_max_map_length_fail_the_mapped_task(engine: Engine) -> None:
    with DAG("map_too_long") as dag:
        @task
        def work(x: int) -> int:
            return x

        work.expand(x=list(range(1025)))
    result = dag.test(engine=engine)
    assert result.ti("work").state.value == "failed"
    assert "1025" in result.ti("work").state_message
    assert "max_map_length (1024)" in result.ti("work").state_message
    assert result.state.value == "failed"


def test_mapping_over_a_value_that_is_no_list_names_the_upstream_and_the_type(
        engine: Engine) -> None:
    with DAG("map_not_a_list") as dag:
        @task
        def number() -> int:
            return 5

        @task
        def work(x: int) -> int:
            return x

        work.expand(x=number())
    result = dag.test(engine=engine)
    ti = result.ti("work")
    assert ti.state.value == "failed"
    assert "'number'" in ti.state_message and "int" in ti.state_message
    assert "not a list or a dict" in ti.state_message


def test_expand_kwargs_from_a_literal_list_and_from_an_upstream(engine: Engine) -> None:
    with DAG("map_kwargs") as dag:
        @task
        def configs() -> list[dict[str, Any]]:
            return [{"a": 1, "b": 2}, {"a": 10, "b": 20}]

        @task
        def add(a: int, b: int) -> int:
            return a + b

        add.expand_kwargs(configs())
        add.expand_kwargs([{"a": 100, "b": 1}])
    result = dag.test(engine=engine)
    assert [t.return_value for _, t in sorted(_mapped(result, "add").items())] == [3, 30]
    assert _mapped(result, "add__1")[0].return_value == 101


def test_map_zip_and_concat_of_outputs(engine: Engine) -> None:
    with DAG("map_transform") as dag:
        @task
        def letters() -> list[str]:
            return ["a", "b", "c"]

        @task
        def numbers() -> list[int]:
            return [1, 2]

        @task
        def show(value: Any) -> str:
            return repr(value)

        lt, nb = letters(), numbers()
        show.override(task_id="mapped")(lt.map(str.upper))
        show.override(task_id="upper").expand(value=lt.map(str.upper))
        show.override(task_id="zipped").expand(value=lt.zip(nb))
        show.override(task_id="zipped_fill").expand(value=lt.zip(nb, fillvalue=0))
        show.override(task_id="joined").expand(value=lt.concat(nb))
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states

    def values(task_id: str) -> list[Any]:
        return [t.return_value for _, t in sorted(_mapped(result, task_id).items())]

    assert result.ti("mapped").return_value == "['A', 'B', 'C']"
    assert values("upper") == ["'A'", "'B'", "'C'"]
    assert values("zipped") == ["('a', 1)", "('b', 2)"]
    assert values("zipped_fill") == ["('a', 1)", "('b', 2)", "('c', 0)"]
    assert values("joined") == ["'a'", "'b'", "'c'", "1", "2"]


class AddOneOperator(BaseOperator):
    def __init__(self, value: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value = value

    def execute(self, context: Any) -> int:
        return self.value + 1


class SumItOperator(BaseOperator):
    template_fields = ("values",)

    def __init__(self, values: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.values = values

    def execute(self, context: Any) -> int:
        return sum(self.values)


def _double(x: int) -> int:
    return 2 * x


def test_classic_operators_map_with_partial_and_expand(engine: Engine) -> None:
    with DAG("map_classic") as dag:
        added = AddOneOperator.partial(task_id="add_one", retries=1).expand(value=[1, 2, 3])
        SumItOperator(task_id="sum_it", values=added.output)
        PythonOperator.partial(task_id="py", python_callable=_double).expand(
            op_args=[[1], [2]])
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    assert result.ti("sum_it").return_value == 9
    assert [t.return_value for _, t in sorted(_mapped(result, "py").items())] == [2, 4]
    assert dag.task_dict["add_one"].retries == 1


def _pull(ti: Any) -> dict[str, Any]:
    return {"one": ti.xcom_pull(task_ids="square", map_indexes=1),
            "some": ti.xcom_pull(task_ids="square", map_indexes=[2, 0]),
            "all": list(ti.xcom_pull(task_ids="square"))}


def test_xcom_pull_with_map_indexes(engine: Engine) -> None:
    with DAG("map_pull") as dag:
        @task
        def square(x: int) -> int:
            return x * x

        square.expand(x=[1, 2, 3]) >> PythonOperator(task_id="pull", python_callable=_pull)
    result = dag.test(engine=engine)
    assert result.ti("pull").return_value == {"one": 4, "some": [9, 1], "all": [1, 4, 9]}


ATTEMPTS: dict[int, int] = {}


def test_retries_and_trigger_rules_work_per_map_index(engine: Engine) -> None:
    ATTEMPTS.clear()
    with DAG("map_retry") as dag:
        @task(retries=1, retry_delay=timedelta(seconds=0))
        def flaky(x: int, ti: Any = None) -> int:
            ATTEMPTS[ti.map_index] = ti.try_number
            if x == 2 and ti.try_number == 1:
                raise ConnectionError("first try of item 2 fails")
            if x == 3:
                raise ValueError("item 3 always fails")
            return x

        @task
        def strict(values: Any) -> int:
            return len(values)

        @task(trigger_rule="all_done")
        def lenient(values: Any) -> list[int]:
            return list(values)

        out = flaky.expand(x=[1, 2, 3])
        strict(out)
        lenient(out)
    result = dag.test(engine=engine)
    tis = _mapped(result, "flaky")
    assert [tis[i].state.value for i in range(3)] == ["success", "success", "failed"]
    assert [tis[i].try_number for i in range(3)] == [1, 2, 2]
    assert result.ti("strict").state.value == "upstream_failed"
    assert result.ti("lenient").return_value == [1, 2]
    with engine.connect() as conn:
        rows = conn.execute(select(task_instance.c.map_index, task_instance.c.try_number)
                            .where(task_instance.c.task_id == "flaky",
                                   task_instance.c.run_id == result.run_id)).all()
    assert sorted(rows) == [(0, 1), (1, 2), (2, 2)]


def test_map_index_template_names_each_instance(engine: Engine) -> None:
    with DAG("map_names") as dag:
        @task(map_index_template="{{ task.op_kwargs['city'] | upper }}")
        def forecast(city: str) -> str:
            return f"sunny in {city}"

        forecast.expand(city=["paris", "lima"])
    result = dag.test(engine=engine)
    names = {t.map_index: t.rendered_map_index for t in _mapped(result, "forecast").values()}
    assert names == {0: "PARIS", 1: "LIMA"}


def test_max_map_length_is_configurable(engine: Engine) -> None:
    with DAG("map_limit") as dag:
        @task
        def work(x: int) -> int:
            return x

        work.expand(x=[1, 2, 3])
    result = dag.test(engine=engine, max_map_length=2)
    assert result.ti("work").state.value == "failed"
    assert "max_map_length (2)" in result.ti("work").state_message


def test_the_max_map_length_setting_is_read_from_the_environment() -> None:
    from statewright.config import load_settings

    assert load_settings({}).max_map_length == 1024
    assert load_settings({"STATEWRIGHT_MAX_MAP_LENGTH": "5000"}).max_map_length == 5000


FAILED_INDEXES: list[int] = []


def _record_failure(context: Any) -> None:
    FAILED_INDEXES.append(context["ti"].map_index)


def test_callbacks_run_per_map_index(engine: Engine) -> None:
    FAILED_INDEXES.clear()
    with DAG("map_callbacks") as dag:
        @task(on_failure_callback=_record_failure)
        def check(x: int) -> int:
            if x % 2:
                raise ValueError(f"{x} is odd")
            return x

        check.expand(x=[1, 2, 3, 4])
    result = dag.test(engine=engine)
    assert [t.state.value for _, t in sorted(_mapped(result, "check").items())] == [
        "failed", "success", "failed", "success"]
    assert sorted(FAILED_INDEXES) == [0, 2]
