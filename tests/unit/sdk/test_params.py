"""Param and ParamsDict: JSON Schema validation, the DAG -> task -> conf merge, parse checks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.core.params import ParamValidationError, merge_params, validate_run_conf
from statewright.sdk import DAG, EmptyOperator, Param, ParamsDict, PythonOperator
from statewright.sdk.context_extras import PREV_KEYS
from statewright.sdk.runtime import build_context
from statewright.sdk.templating import render_task_fields

WHEN = datetime(2024, 3, 5, tzinfo=UTC)


def test_param_validates_against_its_schema() -> None:
    p = Param(5, type="integer", minimum=1, maximum=10, description="how many")
    assert p.resolve() == 5
    assert p.resolve(7) == 7
    with pytest.raises(ParamValidationError, match="11 is greater than the maximum of 10"):
        p.resolve(11)
    with pytest.raises(ParamValidationError, match="'x' is not of type 'integer'"):
        p.resolve("x")
    assert p.resolve("x", suppress_exception=True) is None
    assert p.dump() == {"value": 5, "description": "how many",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 10}}


def test_enum_format_and_a_whole_schema() -> None:
    assert Param("a", enum=["a", "b"]).problem("c") == "'c' is not one of ['a', 'b']"
    assert "is not a 'date'" in (Param("2024-01-01", type="string", format="date")
                                 .problem("2024-13-45") or "")
    whole = Param({"k": 1}, schema={"type": "object", "required": ["k"]})
    assert "'k' is a required property" in (whole.problem({}) or "")


def test_a_param_with_no_default_needs_a_value() -> None:
    p = Param(type="string")
    assert not p.has_value
    with pytest.raises(ParamValidationError, match="no default value"):
        p.resolve()
    assert p.resolve("given") == "given"


def test_params_dict_reads_values_and_validates_what_is_set() -> None:
    params = ParamsDict({"n": Param(1, type="integer"), "plain": "x"})
    assert params["n"] == 1 and params["plain"] == "x"
    assert dict(params) == {"n": 1, "plain": "x"}
    assert params.get_param("n").schema == {"type": "integer"}
    params["n"] = 3
    assert params["n"] == 3
    with pytest.raises(ParamValidationError, match="param 'n'"):
        params["n"] = "three"
    assert params["n"] == 3  # nothing changed
    params["new"] = [1]
    assert params.validate() == {"n": 3, "plain": "x", "new": [1]}
    merged = params.deep_merge({"n": 9})
    assert merged["n"] == 9 and params["n"] == 3


def test_a_default_that_violates_its_schema_is_an_import_error() -> None:
    with pytest.raises(DagDefinitionError,
                       match=r"DAG 'd': the default of param 'n' \('x'\) does not satisfy"):
        DAG("d", params={"n": Param("x", type="integer")})
    with pytest.raises(DagDefinitionError, match=r"task 't'.*param 'k'"):
        EmptyOperator(task_id="t", params={"k": Param(0, minimum=1)})


def test_an_invalid_schema_is_an_import_error() -> None:
    with pytest.raises(DagDefinitionError, match="param 'n' has an invalid JSON Schema"):
        DAG("d", params={"n": Param(1, type="no-such-type")})


def test_a_scheduled_dag_needs_defaults_for_every_param() -> None:
    with pytest.raises(DagDefinitionError, match="'who' have no default value"):
        DAG("d", schedule="@daily", start_date=WHEN, params={"who": Param(type="string")})
    DAG("d", schedule=None, params={"who": Param(type="string")})


def test_run_conf_is_validated_naming_each_field() -> None:
    spec = ParamsDict({"n": Param(1, type="integer"), "who": Param(type="string"),
                       "free": 1}).serialize()
    assert validate_run_conf(spec, {"who": "me", "other": True}, where="DAG 'd'") == {
        "n": 1, "who": "me", "free": 1, "other": True}
    with pytest.raises(ParamValidationError) as info:
        validate_run_conf(spec, {"n": "not a number"}, where="DAG 'd'")
    assert [p.param for p in info.value.problems] == ["n", "who"]
    assert "param 'n': 'not a number' is not of type 'integer'" in str(info.value)
    assert "param 'who': no value was passed" in str(info.value)
    with pytest.raises(ParamValidationError, match="conf must be a JSON object"):
        validate_run_conf(spec, ["x"], where="DAG 'd'")  # type: ignore[arg-type]


def test_conf_does_not_override_params_when_switched_off(monkeypatch: Any) -> None:
    spec = ParamsDict({"n": Param(1, type="integer")}).serialize()
    values, problems = merge_params(spec, {"n": "bad"}, conf_overrides_params=False)
    assert values == {"n": 1} and problems == []
    with DAG("d", params={"n": 1}) as dag:
        task = EmptyOperator(task_id="t")
    monkeypatch.setenv("STATEWRIGHT_DAG_RUN_CONF_OVERRIDES_PARAMS", "false")
    assert _context(dag, task, {"n": 2})["params"] == {"n": 1}
    monkeypatch.setenv("STATEWRIGHT_DAG_RUN_CONF_OVERRIDES_PARAMS", "true")
    assert _context(dag, task, {"n": 2})["params"] == {"n": 2}


def _context(dag: DAG, task: Any, conf: dict[str, Any] | None = None, **kw: Any) -> Any:
    return build_context(dag, task, run_id="manual__1", logical_date=WHEN,
                         data_interval_start=WHEN, data_interval_end=WHEN, conf=conf,
                         try_number=1, max_tries=0, xcoms={}, **kw)


def test_params_merge_dag_then_task_then_conf() -> None:
    with DAG("d", params={"a": "dag", "b": "dag", "c": Param("dag", type="string")}) as dag:
        task = PythonOperator(task_id="t", python_callable=print,
                              params={"b": "task", "c": "task"})
    assert _context(dag, task, {"c": "conf"})["params"] == {"a": "dag", "b": "task", "c": "conf"}
    assert render_task_fields(task, _context(dag, task)) == {
        "templates_dict": None, "op_args": [], "op_kwargs": {}}


def test_the_context_has_airflows_keys_and_lazy_entries() -> None:
    with DAG("d") as dag:
        task = EmptyOperator(task_id="t")
    calls: list[str] = []

    def variables() -> dict[str, str]:
        calls.append("var")
        return {"k": "v"}

    prev = {"prev_start_date_success": WHEN}
    context = _context(dag, task, lazy={"var": variables}, prev=prev)
    assert set(PREV_KEYS) <= set(context)
    assert context["prev_start_date_success"] == WHEN
    assert context["prev_end_date_success"] is None
    assert context["macros"].ds_add("2024-01-01", 1) == "2024-01-02"
    assert calls == []  # not computed until read
    assert context["var"]["k"] == "v"
    assert calls == ["var"]

