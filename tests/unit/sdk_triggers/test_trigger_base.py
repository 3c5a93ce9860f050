from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from statewright.sdk import serde
from statewright.sdk.serde import SerializationError
from statewright.sdk.triggers import (
    BaseTrigger,
    DateTimeTrigger,
    FileTrigger,
    HttpTrigger,
    TimeDeltaTrigger,
    TriggerEvent,
    TriggerImportError,
    classpath_of,
    import_trigger,
)


class Outer:
    class NestedTrigger(BaseTrigger):
        def serialize(self):
            return classpath_of(self), {}

        async def run(self):
            yield TriggerEvent(None)


class NotATrigger:
    pass


def _stored_round_trip(trigger: BaseTrigger) -> BaseTrigger:
    """What the database does to a trigger: serialize, JSON, deserialize, import."""
    classpath, kwargs = trigger.serialize()
    stored = serde.loads(serde.dumps(kwargs))
    return import_trigger(classpath, stored)


@pytest.mark.parametrize(
    "trigger",
    [
        DateTimeTrigger(datetime(2026, 5, 1, 12, tzinfo=UTC)),
        DateTimeTrigger(datetime(2026, 5, 1, 12, tzinfo=UTC), end_from_trigger=True),
        FileTrigger("/data/*.csv", recursive=True, poke_interval=2),
        HttpTrigger(
            "https://example.com/ready",
            method="post",
            headers={"Authorization": "Bearer x"},
            data={"a": "1"},
            success_status_codes=[200, 202],
            fail_on_status=[404],
            poke_interval=1.5,
            timeout_seconds=10,
        ),
        HttpTrigger("http://127.0.0.1:8080/"),
        Outer.NestedTrigger(),
    ],
    ids=lambda t: type(t).__name__,
)
def test_serialize_then_import_gives_an_equal_config(trigger):
    rebuilt = _stored_round_trip(trigger)
    assert type(rebuilt) is type(trigger)
    assert rebuilt.serialize() == trigger.serialize()
    assert rebuilt.trigger_id is None


def test_time_delta_trigger_is_stored_as_its_absolute_moment():
    trigger = TimeDeltaTrigger(timedelta(hours=1))
    classpath, kwargs = trigger.serialize()
    assert classpath == "statewright.sdk.triggers.temporal.DateTimeTrigger"
    assert kwargs == {"moment": trigger.moment, "end_from_trigger": False}
    rebuilt = _stored_round_trip(trigger)
    assert isinstance(rebuilt, DateTimeTrigger)
    assert rebuilt.serialize() == trigger.serialize()
    assert rebuilt.moment == trigger.moment


def test_missing_class_is_a_trigger_import_error():
    with pytest.raises(TriggerImportError) as info:
        import_trigger("statewright.sdk.triggers.temporal.NoSuchTrigger", {})
    message = str(info.value)
    assert "statewright.sdk.triggers.temporal.NoSuchTrigger" in message
    assert "has no attribute 'NoSuchTrigger'" in message


def test_missing_module_is_a_trigger_import_error():
    with pytest.raises(TriggerImportError, match="No module named 'no_such_pkg'"):
        import_trigger("no_such_pkg.triggers.Waiter", {})


def test_malformed_classpath_is_a_trigger_import_error():
    with pytest.raises(TriggerImportError, match="not a dotted path"):
        import_trigger("JustAName", {})


def test_a_class_that_is_not_a_trigger_is_rejected():
    with pytest.raises(TriggerImportError, match="not a subclass of"):
        import_trigger(classpath_of(NotATrigger), {})


def test_kwargs_the_class_does_not_accept_are_reported():
    with pytest.raises(TriggerImportError, match="cannot be built from its stored kwargs"):
        import_trigger(classpath_of(FileTrigger), {"filepath": "/x", "colour": "red"})


def test_trigger_event_equality_and_repr():
    assert TriggerEvent({"a": 1}) == TriggerEvent({"a": 1})
    assert TriggerEvent({"a": 1}) != TriggerEvent({"a": 2})
    assert TriggerEvent(None) == TriggerEvent()
    assert repr(TriggerEvent("x")) == "TriggerEvent<'x'>"


def test_trigger_event_round_trips_through_data():
    event = TriggerEvent({"at": datetime(2026, 1, 1, tzinfo=UTC), "n": (1, 2)})
    assert TriggerEvent.from_data(event.to_data()) == event


def test_trigger_event_rejects_unserializable_payload():
    with pytest.raises(SerializationError, match=r"TriggerEvent.payload\['f'\]"):
        TriggerEvent({"f": object()})


def test_cleanup_defaults_to_nothing_and_repr_shows_kwargs():
    trigger = FileTrigger("/tmp/x")
    assert asyncio.run(trigger.cleanup()) is None
    assert repr(trigger).startswith("<FileTrigger filepath='/tmp/x'")
