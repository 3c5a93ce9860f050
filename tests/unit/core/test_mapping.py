"""The pure rules of task mapping: lengths of sources, the cross product, the decision to
expand, skip or fail."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from statewright.core.mapping import (
    ExpansionOutcome,
    decide_expansion,
    expand_input_upstreams,
    index_in_product,
    source_length,
    ti_label,
)


def _xcom(task_id: str, key: str | None = None) -> dict[str, Any]:
    return {"kind": "xcom", "task_id": task_id, "key": key}


def _dict(**sources: Any) -> dict[str, Any]:
    return {"type": "dict", "value": sources}


def test_labels() -> None:
    assert ti_label("t", -1) == "t" and ti_label("t", 3) == "t[3]"


@pytest.mark.parametrize(("spec", "values", "length"), [
    ({"kind": "literal", "length": 4}, {}, 4),
    (_xcom("a"), {"a": [1, 2, 3]}, 3),
    (_xcom("a"), {"a": {"x": 1}}, 1),
    (_xcom("a"), {}, 0),  # stored nothing
    (_xcom("a", "k"), {"a": {"k": [1, 2]}}, 2),
    ({"kind": "map", "arg": _xcom("a")}, {"a": [1, 2]}, 2),
    ({"kind": "zip", "args": [_xcom("a"), _xcom("b")], "fill": False},
     {"a": [1, 2, 3], "b": [1]}, 1),
    ({"kind": "zip", "args": [_xcom("a"), _xcom("b")], "fill": True},
     {"a": [1, 2, 3], "b": [1]}, 3),
    ({"kind": "concat", "args": [_xcom("a"), _xcom("b")]}, {"a": [1, 2, 3], "b": [1]}, 4),
])
def test_source_lengths(spec: dict[str, Any], values: dict[str, Any], length: int) -> None:
    assert source_length(spec, values) == length


def test_the_cross_product_multiplies_and_the_last_argument_varies_fastest() -> None:
    spec = _dict(x={"kind": "literal", "length": 2}, y=_xcom("a"))
    assert decide_expansion("t", spec, {"a": [1, 2, 3]}).length == 6
    lengths = [2, 3, 4]
    expected = list(itertools.product(*(range(n) for n in lengths)))
    assert [tuple(index_in_product(i, lengths)) for i in range(24)] == expected


def test_zero_skips_too_long_fails_and_not_a_list_fails_naming_upstream_and_type() -> None:
    spec = _dict(x=_xcom("producer"))
    assert decide_expansion("t", spec, {"producer": []}).outcome is ExpansionOutcome.SKIP
    long = decide_expansion("t", spec, {"producer": list(range(11))}, max_map_length=10)
    assert long.outcome is ExpansionOutcome.FAIL
    assert "11" in long.message and "max_map_length (10)" in long.message
    bad = decide_expansion("t", spec, {"producer": "abc"})
    assert bad.outcome is ExpansionOutcome.FAIL
    assert "'producer'" in bad.message and "str" in bad.message
    keyed = decide_expansion("t", _dict(x=_xcom("producer", "k")), {"producer": 5})
    assert keyed.outcome is ExpansionOutcome.FAIL and "int" in keyed.message


def test_expand_kwargs_counts_its_list() -> None:
    spec = {"type": "list", "value": _xcom("a")}
    assert decide_expansion("t", spec, {"a": [{"x": 1}, {"x": 2}]}).length == 2
    assert expand_input_upstreams(spec) == ["a"]
    assert expand_input_upstreams(_dict(
        x={"kind": "zip", "args": [_xcom("b"), _xcom("a")], "fill": False},
        y={"kind": "literal", "length": 1})) == ["b", "a"]
