"""``load_triggers`` decodes a trigger's kwargs once: stored serialized once
(``encrypt_serialized``, what the worker writes now) or twice (``encrypt_json``, rows stored
before), both load, and errors name the trigger and the key either way."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from cryptography.fernet import Fernet, MultiFernet

from statewright.crypto import encrypt_json, encrypt_serialized, generate_key, load_fernet
from statewright.sdk import serde
from statewright.sdk.triggers import DateTimeTrigger
from statewright.services.triggerer.loading import load_triggers

DT = "statewright.sdk.triggers.temporal.DateTimeTrigger"
MOMENT = datetime(2030, 1, 1, tzinfo=UTC)


def _row(trigger_id: int, token: str, classpath: str = DT) -> Any:
    return SimpleNamespace(id=trigger_id, classpath=classpath, kwargs=token, triggerer_id=None)


@pytest.fixture(params=["load_fernet", "MultiFernet"])
def cipher(request: pytest.FixtureRequest) -> MultiFernet:
    key = generate_key()
    return load_fernet(key) if request.param == "load_fernet" else MultiFernet([Fernet(key)])


def test_rows_of_both_forms_load(cipher: MultiFernet) -> None:
    data = serde.serialize(DateTimeTrigger(MOMENT).serialize()[1])
    rows = [_row(1, encrypt_serialized(cipher, data)), _row(2, encrypt_json(cipher, data))]
    loaded = load_triggers(rows, cipher, state_reader=None)
    assert loaded.failures == []
    assert [(i, type(t), cp) for i, t, cp in loaded.ok] == [(1, DateTimeTrigger, DT),
                                                             (2, DateTimeTrigger, DT)]
    assert all(t.moment == MOMENT and t.trigger_id == i for i, t, _ in loaded.ok)


@pytest.mark.parametrize("encrypt", [encrypt_serialized, encrypt_json], ids=["once", "twice"])
def test_unreadable_kwargs_name_the_trigger_and_the_key(cipher: MultiFernet, encrypt: Any) -> None:
    bad = {"moment": {"__type": "datetime", "value": "yesterday"}}
    unknown = {"moment": [{"__type": "mystery"}]}
    loaded = load_triggers([_row(7, encrypt(cipher, bad)), _row(8, encrypt(cipher, unknown))],
                           cipher, state_reader=None)
    assert loaded.ok == []
    first, second = loaded.failures
    assert first.trigger_id == 7 and first.reason == "trigger_load"
    assert first.error == (
        "Trigger 7 could not be loaded: kwargs of trigger 7['moment']: malformed 'datetime' "
        "value 'yesterday': Invalid isoformat string: 'yesterday'")
    assert second.error.startswith(
        "Trigger 8 could not be loaded: kwargs of trigger 8['moment'][0]: unknown tag "
        "__type='mystery'")


def test_a_wrong_key_and_a_bad_class_are_failures(cipher: MultiFernet) -> None:
    data = serde.serialize({"moment": MOMENT})
    other = load_fernet(generate_key())
    loaded = load_triggers([_row(1, encrypt_serialized(other, data)),
                            _row(2, encrypt_serialized(cipher, {"when": 1})),
                            _row(3, encrypt_serialized(cipher, data))], cipher, None)
    assert [f.trigger_id for f in loaded.failures] == [1, 2]
    assert "cannot be decrypted" in loaded.failures[0].error
    assert "cannot be built from its stored kwargs ['when']" in loaded.failures[1].error
    assert [i for i, _, _ in loaded.ok] == [3]
