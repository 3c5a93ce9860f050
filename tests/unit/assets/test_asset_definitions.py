"""Asset, AssetAlias and asset conditions: URI rules as in Airflow 3, and clear errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from statewright.core.asset_conditions import (
    AssetDefinitionError,
    describe_condition,
    evaluate,
    pending,
    sanitize_uri,
)
from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import CronTriggerTimetable
from statewright.sdk import DAG, Asset, AssetAlias, AssetAll, AssetAny, AssetOrTimeSchedule
from statewright.sdk.operators import EmptyOperator


@pytest.mark.parametrize(("given", "stored"), [
    ("s3://bucket/key", "s3://bucket/key"),
    ("S3://bucket/key/", "s3://bucket/key"),  # scheme lower-cased, trailing slash gone
    ("s3://bucket/key?b=2&a=1#frag", "s3://bucket/key?a=1&b=2"),  # query sorted, no fragment
    ("postgres://user:secret@host:5432/db/schema/t", "postgres://host:5432/db/schema/t"),
    ("file:///data/", "file:///data"),
    ("x-custom://What/ever/", "x-custom://What/ever/"),  # x- schemes kept verbatim
    ("just a name", "just a name"),  # no scheme: not a URI, kept
    ("s3://bucket", "s3://bucket/"),
])
def test_uri_normalisation_follows_airflow(given: str, stored: str) -> None:
    assert sanitize_uri(given) == stored
    assert Asset(given).uri == stored


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"uri": "airflow://x"}, "reserved"),
    ({"uri": ""}, "cannot be empty"),
    ({"uri": "   "}, "whitespace"),
    ({"uri": "s3://b/" + "k" * 1500}, "1500"),
    ({"name": "self"}, "prohibited name"),
    ({"name": "ok", "uri": 3}, "must be a string"),
    ({"name": "ok", "extra": {"x": object()}}, "extra"),
    ({"name": "ok", "extra": "not a dict"}, "extra must be a dict"),
])
def test_an_invalid_asset_is_refused_with_a_clear_error(kwargs: dict, message: str) -> None:
    with pytest.raises(AssetDefinitionError, match=message):
        Asset(**kwargs)


def test_an_asset_needs_a_name_or_a_uri() -> None:
    with pytest.raises(TypeError, match="either 'name' or 'uri'"):
        Asset()


def test_name_and_uri_default_to_each_other() -> None:
    a = Asset("s3://b/k")
    assert (a.name, a.uri, a.group, a.extra) == ("s3://b/k", "s3://b/k", "asset", {})
    b = Asset(name="orders")
    assert b.uri == "orders"
    assert Asset("s3://b/k") == Asset(uri="s3://b/k") and hash(a) == hash(Asset("s3://b/k"))


def test_conditions_combine_and_evaluate() -> None:
    a, b, c = Asset("a"), Asset("b"), Asset("c")
    cond = (a | (b & c)).as_condition()
    assert describe_condition(cond) == "a | (b & c)"
    assert evaluate(cond, {"a"}) and evaluate(cond, {"b", "c"})
    assert not evaluate(cond, {"b"}) and not evaluate(cond, set())
    assert (a & b & c).as_condition() == {"all": [x.as_condition() for x in (a, b, c)]}
    assert pending(cond, {"b"}) == {"any": [
        {"asset": {"name": "a", "uri": "a"}, "ready": False},
        {"all": [{"asset": {"name": "b", "uri": "b"}, "ready": True},
                 {"asset": {"name": "c", "uri": "c"}, "ready": False}], "ready": False}],
        "ready": False}
    alias = AssetAlias("x").as_condition()
    assert evaluate(alias, {"a"}, {"x": {"a"}}) and not evaluate(alias, {"a"}, {"x": set()})


def test_a_schedule_mixing_incompatible_types_is_refused() -> None:
    with pytest.raises(DagDefinitionError, match=r"assets and asset aliases only.*'@daily'"):
        DAG("mixed", schedule=[Asset("a"), "@daily"])
    with pytest.raises(DagDefinitionError, match="empty list"):
        DAG("empty", schedule=[])
    with pytest.raises(TypeError):
        Asset("a") & "@daily"  # type: ignore[operator]
    with pytest.raises(AssetDefinitionError, match="combines assets"):
        AssetAny(Asset("a"), "s3://b")  # type: ignore[arg-type]
    with pytest.raises(AssetDefinitionError, match="timetable must be a Timetable"):
        AssetOrTimeSchedule(timetable=3, assets=[Asset("a")])  # type: ignore[arg-type]


def test_outlets_hold_assets_only() -> None:
    with DAG("d", schedule=None), pytest.raises(DagDefinitionError, match="Wrap a URI in Asset"):
        EmptyOperator(task_id="t", outlets=["s3://b/k"])


def test_serialized_schedules() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with DAG("d", schedule=[Asset("a"), Asset("b")]) as d:
        EmptyOperator(task_id="t", outlets=[Asset("c"), AssetAlias("al")], inlets=Asset("a"))
    ser = d.serialize()
    assert ser["schedule"]["assets"] == AssetAll(Asset("a"), Asset("b")).as_condition()
    assert [o.get("alias") or o["asset"]["name"] for o in ser["tasks"][0]["outlets"]] == [
        "c", "al"]
    assert ser["tasks"][0]["inlets"][0]["asset"]["name"] == "a"
    with DAG("t", start_date=start, schedule=AssetOrTimeSchedule(
            timetable=CronTriggerTimetable("0 1 * * 3", timezone="UTC"),
            assets=Asset("a") & Asset("b"))) as t:
        EmptyOperator(task_id="x")
    sched = t.serialize()["schedule"]
    assert sched["timetable"]["type"] == "cron_trigger" or "cron" in sched["timetable"]["type"]
    assert sched["summary"] == "a & b or 0 1 * * 3"
