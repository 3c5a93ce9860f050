"""Rendering of template fields: Jinja in a sandbox, recursive, files, native, errors."""

from __future__ import annotations

from collections import namedtuple
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import jinja2
import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, BaseOperator, BashOperator, PythonOperator, literal, macros
from statewright.sdk.runtime import build_context, execute_task
from statewright.sdk.templating import (
    MAX_RENDERED_CHARS,
    TemplateRenderError,
    rendered_for_storage,
    rendering,
)

LOGICAL_DATE = datetime(2024, 3, 5, 6, 0, tzinfo=UTC)


class Echo(BaseOperator):
    template_fields: ClassVar[tuple[str, ...]] = ("value", "other")
    template_ext: ClassVar[tuple[str, ...]] = (".sql", ".sh")

    def __init__(self, *, value: Any, other: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value = value
        self.other = other
        self.seen: list[Any] = []

    def execute(self, context: Any) -> Any:
        self.seen.append((self.value, self.other))
        return self.value if isinstance(self.value, (str, int, list, dict)) else str(self.value)


def _context(dag: DAG, task: BaseOperator, conf: dict[str, Any] | None = None) -> Any:
    return build_context(dag, task, run_id="manual__1", logical_date=LOGICAL_DATE,
                         data_interval_start=LOGICAL_DATE, data_interval_end=LOGICAL_DATE,
                         conf=conf, try_number=1, max_tries=0, xcoms={"up": {"rows": 3}})


def _run(dag: DAG, task_id: str = "t", conf: dict[str, Any] | None = None) -> Any:
    task = dag.get_task(task_id)
    return execute_task(task, _context(dag, task, conf))


def _render(value: Any, **dag_kwargs: Any) -> Any:
    with DAG("d", **dag_kwargs) as dag:
        task = Echo(task_id="t", value=value)
    with rendering(task, _context(dag, task)):
        return task.value


def test_context_values_render_in_strings() -> None:
    text = ("{{ ds }} {{ ds_nodash }} {{ ts }} {{ ts_nodash }} {{ run_id }} {{ dag.dag_id }} "
            "{{ task.task_id }} {{ ti.try_number }} {{ logical_date | ds }} "
            "{{ data_interval_end.year }}")
    assert _render(text) == ("2024-03-05 20240305 2024-03-05T06:00:00+00:00 20240305T060000 "
                             "manual__1 d t 1 2024-03-05 2024")


def test_containers_render_recursively_and_keep_their_types() -> None:
    pair = namedtuple("pair", "a b")
    value = {"list": ["{{ ds }}", 1], "tuple": ("{{ ds_nodash }}",), "set": {"{{ run_id }}"},
             "nested": {"deep": ["{{ params.x }}"]}, "named": pair("{{ ds }}", 2)}
    out = _render(value, params={"x": "X"})
    assert out == {"list": ["2024-03-05", 1], "tuple": ("20240305",), "set": {"manual__1"},
                   "nested": {"deep": ["X"]}, "named": pair("2024-03-05", 2)}
    assert isinstance(out["named"], pair)


def test_nested_objects_with_template_fields_render_on_a_copy() -> None:
    class Query:
        template_fields = ("sql",)

        def __init__(self, sql: str) -> None:
            self.sql = sql

    original = Query("select '{{ ds }}'")
    rendered = _render([original])
    assert rendered[0].sql == "select '2024-03-05'"
    assert original.sql == "select '{{ ds }}'"


def test_the_tutorial_loop_and_macros_render() -> None:
    text = '{% for i in range(2) %}echo "{{ ds }}" "{{ macros.ds_add(ds, 7) }}";{% endfor %}'
    assert _render(text) == 'echo "2024-03-05" "2024-03-12";' * 2


def test_airflow_macros() -> None:
    assert macros.ds_add("2015-01-01", 5) == "2015-01-06"
    assert macros.ds_add("2015-01-06", -5) == "2015-01-01"
    assert macros.ds_add("2015-01-06", 0) == "2015-01-06"
    assert macros.ds_format("2015-01-01", "%Y-%m-%d", "%m-%d-%y") == "01-01-15"
    text = ("{{ macros.datetime(2020, 1, 2).year }} {{ (macros.timedelta(days=1)).days }} "
            "{{ macros.json.dumps({'a': 1}) }} {{ macros.uuid.UUID(int=0) }} "
            "{{ macros.dateutil.relativedelta.relativedelta(months=1).months }} "
            "{{ macros.random() < 1 }} {{ macros.time.time() > 0 }}")
    assert _render(text) == ('2020 1 {"a": 1} 00000000-0000-0000-0000-000000000000 1 '
                             "True True")


def test_user_defined_macros_and_filters() -> None:
    out = _render("{{ shout(greeting) | exclaim }}",
                  user_defined_macros={"greeting": "hi", "shout": str.upper},
                  user_defined_filters={"exclaim": lambda s: s + "!"})
    assert out == "HI!"


def test_native_rendering_gives_python_objects() -> None:
    out = _render({"n": "{{ 1 + 2 }}", "rows": "{{ [1, 2] }}", "s": "{{ ds }}"},
                  render_template_as_native_obj=True)
    assert out == {"n": 3, "rows": [1, 2], "s": "2024-03-05"}
    assert _render("{{ 1 + 2 }}") == "3"


def test_template_files_come_from_the_dag_folder_and_searchpath(tmp_path: Path) -> None:
    (tmp_path / "q.sql").write_text("select * from t where day = '{{ ds }}'")
    extra = tmp_path / "more"
    extra.mkdir()
    (extra / "run.sh").write_text("echo {{ params.who }}")
    with DAG("d", template_searchpath=[str(extra)], params={"who": "me"}) as dag:
        dag.fileloc = str(tmp_path / "dag.py")
        Echo(task_id="t", value="q.sql", other=["run.sh", "plain.txt"])
    outcome = _run(dag)
    assert outcome.kind == "success", outcome.traceback
    assert dag.get_task("t").seen == [("select * from t where day = '2024-03-05'",
                                       ["echo me", "plain.txt"])]
    assert outcome.extra["rendered_fields"] == {
        "value": "select * from t where day = '2024-03-05'", "other": ["echo me", "plain.txt"]}


def test_a_missing_template_file_fails_the_try_naming_it(tmp_path: Path) -> None:
    with DAG("d") as dag:
        dag.fileloc = str(tmp_path / "dag.py")
        Echo(task_id="t", value="missing.sql")
    outcome = _run(dag)
    assert outcome.kind == "failed"
    assert "task 't', field 'value': template file 'missing.sql' was not found" in outcome.error
    assert str(tmp_path) in outcome.error
    assert dag.get_task("t").seen == []


def test_an_undefined_name_fails_the_try_naming_task_field_and_name() -> None:
    with DAG("d") as dag:
        Echo(task_id="t", value="{{ ds }}", other="echo {{ no_such_thing }}")
    outcome = _run(dag)
    assert outcome.kind == "failed"
    assert outcome.error.startswith("TemplateRenderError: task 't', field 'other': "
                                    "'no_such_thing' is undefined")
    task = dag.get_task("t")
    assert task.seen == []  # nothing ran half-rendered
    assert task.value == "{{ ds }}"  # and the task is left as defined
    assert "rendered_fields" not in outcome.extra


def test_an_undefined_attribute_names_it() -> None:
    with DAG("d", params={"a": 1}) as dag:
        Echo(task_id="t", value="{{ params.b }}")
    outcome = _run(dag)
    assert "field 'value'" in outcome.error and "no attribute 'b'" in outcome.error


def test_template_undefined_can_be_relaxed() -> None:
    assert _render("[{{ nothing }}]", template_undefined=jinja2.Undefined) == "[]"


def test_the_sandbox_blocks_python_internals() -> None:
    with DAG("d") as dag:
        Echo(task_id="t", value="{{ ''.__class__.__mro__[1].__subclasses__() }}")
    outcome = _run(dag)
    assert outcome.kind == "failed"
    assert "field 'value': blocked by the template sandbox" in outcome.error
    assert dag.get_task("t").seen == []


def test_syntax_errors_are_import_errors_with_file_and_line() -> None:
    with pytest.raises(DagDefinitionError) as info, DAG("d"):
        Echo(task_id="t", value="{% for x in y %}no end")
    message = str(info.value)
    assert "task 't', field 'value': template syntax error" in message
    assert "line 1" in message and f"{__file__}:" in message


def test_syntax_errors_in_template_files_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.sql").write_text("select\n{{ oops }\n")
    with pytest.raises(DagDefinitionError, match=r"bad\.sql, line 2"), DAG("d") as dag:
        dag.fileloc = str(tmp_path / "dag.py")
        Echo(task_id="t", value="bad.sql")


def test_literal_values_are_not_rendered() -> None:
    assert _render(literal("{{ ds }}")) == "{{ ds }}"
    assert _render(["{{ ds }}", literal({"k": "{{ ds }}"})]) == ["2024-03-05", {"k": "{{ ds }}"}]


def test_operators_render_their_fields() -> None:
    seen: list[Any] = []
    with DAG("d") as dag:
        PythonOperator(task_id="t", python_callable=lambda a, d: seen.append((d, a)),
                       op_args=["{{ ds_nodash }}"], op_kwargs={"d": "{{ ds }}"})
        BashOperator(task_id="b", bash_command='echo "{{ ds }}"')
    assert _run(dag).kind == "success"
    assert seen == [("2024-03-05", "20240305")]
    outcome = _run(dag, "b")
    assert outcome.return_value == "2024-03-05"
    assert outcome.extra["rendered_fields"]["bash_command"] == 'echo "2024-03-05"'


def test_the_task_keeps_its_templates_for_the_next_try() -> None:
    with DAG("d") as dag:
        Echo(task_id="t", value="{{ ds }}")
    _run(dag)
    assert dag.get_task("t").value == "{{ ds }}"


def test_xcom_pull_and_conf_in_templates() -> None:
    with DAG("d", params={"n": 1}) as dag:
        Echo(task_id="t", value="{{ ti.xcom_pull(task_ids='up')['rows'] }}/{{ params.n }}/"
             "{{ dag_run.conf.get('k') }}")
    outcome = _run(dag, conf={"n": 5, "k": "v"})
    assert outcome.return_value == "3/5/v"


def test_values_are_stored_as_plain_data() -> None:
    class Thing:
        def __str__(self) -> str:
            return "thing"

    assert rendered_for_storage({"a": (1, Thing()), "b": {2, 1}}) == {"a": [1, "thing"],
                                                                     "b": [1, 2]}
    long = rendered_for_storage("x" * (MAX_RENDERED_CHARS + 10))
    assert long.startswith("Truncated (4106 characters") and len(long) < 4200
    assert rendered_for_storage(None) is None


def test_what_is_stored_is_always_json() -> None:
    """The stored form is JSON a PostgreSQL json column takes, whatever the field held."""
    import enum
    import json
    from decimal import Decimal

    class Color(enum.IntEnum):
        RED = 1

    odd = {"nan": float("nan"), "inf": [float("-inf")], 3: {frozenset({1}), b"raw"},
           "enum": Color.RED, "dec": Decimal("1.5"), ("t", 1): None, "nested": [[{"k": ()}]]}
    stored = rendered_for_storage(odd)
    assert json.loads(json.dumps(stored, allow_nan=False)) == stored
    assert stored["nan"] == "nan" and stored["dec"] == "1.5" and stored["3"] == ["b'raw'", [1]]


def test_render_template_fields_is_airflows_method() -> None:
    with DAG("d") as dag:
        task = Echo(task_id="t", value="{{ ds }}")
    assert task.render_template(["{{ ds_nodash }}"], _context(dag, task)) == ["20240305"]
    task.render_template_fields(_context(dag, task))
    assert task.value == "2024-03-05"
    with pytest.raises(TemplateRenderError, match="field 'value'"):
        Echo(task_id="u", value="{{ nope }}", dag=dag).render_template_fields(
            _context(dag, task))


def test_bash_scripts_are_template_files(tmp_path: Path) -> None:
    (tmp_path / "hello.sh").write_text('echo "hello {{ ds }}"\n')
    with DAG("d") as dag:
        dag.fileloc = str(tmp_path / "dag.py")
        BashOperator(task_id="t", bash_command="hello.sh")
        BashOperator(task_id="as_is", bash_command=f"bash {tmp_path / 'hello.sh'} ")
    assert _run(dag).return_value == "hello 2024-03-05"
    assert _run(dag, "as_is").return_value == "hello {{ ds }}"


def test_a_dag_file_with_a_template_syntax_error_is_an_import_error(tmp_path: Path) -> None:
    from statewright.sdk.loader import load_dag_file

    path = tmp_path / "broken_template.py"
    path.write_text("from statewright.sdk import DAG, BashOperator\n"
                    "dag = DAG('broken')\n"
                    "BashOperator(task_id='b', dag=dag,\n"
                    "             bash_command='echo {{ ds }\\n{% if %}')\n")
    result = load_dag_file(path)
    assert result.dags == {}
    assert result.error is not None
    assert "task 'b', field 'bash_command': template syntax error" in result.error
    assert f"{path}:3" in result.error


def test_python_operator_templates_dict(tmp_path: Path) -> None:
    (tmp_path / "q.sql").write_text("select '{{ ds }}'")
    with DAG("d") as dag:
        dag.fileloc = str(tmp_path / "dag.py")
        PythonOperator(task_id="t", python_callable=lambda templates_dict: templates_dict,
                       templates_dict={"day": "{{ ds }}", "query": "q.sql"},
                       templates_exts=[".sql"])
    outcome = _run(dag)
    assert outcome.return_value == {"day": "2024-03-05", "query": "select '2024-03-05'"}
    assert outcome.extra["rendered_fields"]["templates_dict"] == outcome.return_value
