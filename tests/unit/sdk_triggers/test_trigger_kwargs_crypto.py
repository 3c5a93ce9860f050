from __future__ import annotations

import os
import stat
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.fernet import Fernet, MultiFernet

from statewright.core.errors import ConfigurationError
from statewright.crypto import (
    FernetKeyError,
    decrypt_json,
    encrypt_json,
    ensure_key_file,
    generate_key,
    load_fernet,
)


def test_round_trip_of_trigger_kwargs():
    fernet = load_fernet(generate_key())
    kwargs = {"moment": datetime(2026, 1, 1, tzinfo=UTC), "delta": timedelta(seconds=5)}
    token = encrypt_json(fernet, kwargs)
    assert token.startswith("gAAAAA")
    assert "2026" not in token
    assert decrypt_json(fernet, token) == kwargs


def test_key_is_read_from_the_environment_mapping():
    key = generate_key()
    fernet = load_fernet(env={"STATEWRIGHT_FERNET_KEY": key})
    assert decrypt_json(Fernet(key.encode()), encrypt_json(fernet, [1])) == [1]


@pytest.mark.parametrize(
    "env", [{}, {"STATEWRIGHT_FERNET_KEY": ""}, {"STATEWRIGHT_FERNET_KEY": " , "}]
)
def test_missing_key_is_an_error_that_says_how_to_make_one(env):
    with pytest.raises(FernetKeyError) as info:
        load_fernet(env=env)
    message = str(info.value)
    assert "STATEWRIGHT_FERNET_KEY" in message
    assert "statewright config fernet-key" in message
    assert "Fernet.generate_key()" in message
    assert isinstance(info.value, ConfigurationError)


def test_malformed_key_is_an_error_that_names_its_position():
    with pytest.raises(FernetKeyError, match="key 2 of 2 is malformed") as info:
        load_fernet(f"{generate_key()},not-a-key")
    assert "not-a-key" not in str(info.value)  # the message never echoes key material
    assert "statewright config fernet-key" in str(info.value)


def test_wrong_key_cannot_decrypt():
    token = encrypt_json(load_fernet(generate_key()), {"secret": "x"})
    with pytest.raises(FernetKeyError, match="rotated without keeping the old one"):
        decrypt_json(load_fernet(generate_key()), token)


def test_garbage_token_is_reported_like_a_wrong_key():
    with pytest.raises(FernetKeyError, match="cannot be decrypted"):
        decrypt_json(load_fernet(generate_key()), "not a token")


def test_rotation_old_tokens_decrypt_and_new_key_encrypts():
    old, new = generate_key(), generate_key()
    old_token = encrypt_json(load_fernet(old), {"v": 1})

    rotated = load_fernet(f"{new}, {old}")
    assert isinstance(rotated, MultiFernet)
    assert decrypt_json(rotated, old_token) == {"v": 1}

    new_token = encrypt_json(rotated, {"v": 2})
    assert decrypt_json(load_fernet(new), new_token) == {"v": 2}
    with pytest.raises(FernetKeyError):
        decrypt_json(load_fernet(old), new_token)

    # MultiFernet.rotate re-encrypts an old token under the first key.
    rewrapped = rotated.rotate(old_token.encode()).decode()
    assert decrypt_json(load_fernet(new), rewrapped) == {"v": 1}


def test_key_file_is_created_private_and_reused(tmp_path):
    home = tmp_path / "home"
    key = ensure_key_file(home)
    path = home / "fernet.key"
    assert path.is_file()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    load_fernet(key)  # a valid key
    assert ensure_key_file(home) == key
    assert [p.name for p in home.iterdir()] == ["fernet.key"]


def test_corrupt_key_file_is_reported(tmp_path):
    (tmp_path / "fernet.key").write_text("garbage\n")
    with pytest.raises(FernetKeyError, match="does not hold a valid Fernet key"):
        ensure_key_file(tmp_path)


def test_key_file_made_by_threads_at_once_is_one_key(tmp_path):
    import threading

    start = threading.Barrier(8)
    keys: list[str] = []
    errors: list[BaseException] = []

    def make() -> None:
        start.wait()
        try:
            keys.append(ensure_key_file(tmp_path))
        except BaseException as exc:  # collected: the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(keys) == 8 and len(set(keys)) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["fernet.key"]
