"""Trigger kwargs stored serialized once (``encrypt_serialized``) or twice (``encrypt_json``,
before) both come back from ``decrypt_json`` as the serialized data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography.fernet import Fernet, MultiFernet

from statewright.crypto import (
    FernetKeyError,
    decrypt_json,
    encrypt_json,
    encrypt_serialized,
    generate_key,
    load_fernet,
)
from statewright.sdk import serde

KWARGS = {"moment": datetime(2026, 5, 1, 12, tzinfo=UTC), "delta": timedelta(seconds=5),
          "items": [1, "two", {"three": 3}], "__type": "looks like a tag"}


@pytest.mark.parametrize("cipher", [load_fernet(generate_key()),
                                    MultiFernet([Fernet(generate_key())])],
                         ids=["load_fernet", "plain MultiFernet"])
def test_trigger_kwargs_stored_once_or_twice_read_the_same(cipher: MultiFernet) -> None:
    data = serde.serialize(KWARGS)
    once = encrypt_serialized(cipher, data)
    twice = encrypt_json(cipher, data)  # how they were stored before
    assert b'{"__type":"serialized","value":' in cipher.decrypt(once)
    assert b'"__type":"dict"' in cipher.decrypt(twice)
    assert decrypt_json(cipher, once) == data == decrypt_json(cipher, twice)
    assert serde.deserialize(decrypt_json(cipher, once)) == KWARGS
    # other values round-trip through encrypt_json as before, a lone tag-like dict included
    for value in (KWARGS, [1, "x"], {"__type": "serialized", "value": 1}, None, "s"):
        assert decrypt_json(cipher, encrypt_json(cipher, value)) == value


def test_a_reader_without_the_envelope_fails_clearly() -> None:
    """A triggerer older than ``encrypt_serialized`` reads the token with ``serde.loads``."""
    cipher = load_fernet(generate_key())
    token = encrypt_serialized(cipher, {"x": 1})
    with pytest.raises(serde.SerializationError, match="unknown tag __type='serialized'"):
        serde.loads(cipher.decrypt(token))


def test_a_wrong_key_is_still_a_fernet_key_error() -> None:
    token = encrypt_serialized(load_fernet(generate_key()), {"x": 1})
    with pytest.raises(FernetKeyError, match="cannot be decrypted"):
        decrypt_json(load_fernet(generate_key()), token)
