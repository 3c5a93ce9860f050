"""``crypto.decrypt_many``: what ``Fernet.decrypt`` gives for each token, many at once."""

from __future__ import annotations

import base64

import pytest
from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from statewright.crypto import (
    FernetKeyError,
    decrypt_json,
    decrypt_many,
    encrypt_serialized,
    generate_key,
    load_fernet,
    value_of_plaintext,
)


def _tampered(token: str, at: int) -> str:
    raw = bytearray(base64.urlsafe_b64decode(token))
    raw[at] ^= 0x01
    return base64.urlsafe_b64encode(bytes(raw)).decode("ascii")


def test_every_length_of_plaintext_comes_out_as_fernet_decrypts_it():
    fernet = Fernet(generate_key())
    # 0 to 48 bytes: every padding, a whole block of padding after 16, 32, 48 bytes.
    plaintexts = [bytes(range(65, 65 + n % 26)) * (n // 26 + 1) for n in range(49)]
    plaintexts = [p[:n] for n, p in enumerate(plaintexts)]
    tokens = [fernet.encrypt(p) for p in plaintexts]
    assert decrypt_many(fernet, tokens) == plaintexts
    assert decrypt_many(fernet, [t.decode("ascii") for t in tokens]) == plaintexts


def test_rotated_keys_decrypt_tokens_of_each_key_interleaved():
    new, old = generate_key(), generate_key()
    both = load_fernet(f"{new},{old}")
    tokens = [Fernet(key).encrypt(f"value {i}".encode()) for i, key in
              enumerate([old, new, old, old, new])]
    assert decrypt_many(both, tokens) == [f"value {i}".encode() for i in range(5)]


def test_tokens_that_do_not_decrypt_are_left_to_decrypt_json_and_its_error():
    fernet = load_fernet(generate_key())
    good = encrypt_serialized(fernet, {"n": 1})
    foreign = encrypt_serialized(load_fernet(generate_key()), {"n": 2})
    bad = [foreign, _tampered(good, 30), _tampered(good, -1), _tampered(good, 0), "not a token",
           "gAAAAA", "", "é" + good, good[:-8]]
    out = decrypt_many(fernet, [good, *bad, good])
    assert out[0] == out[-1] is not None
    assert value_of_plaintext(out[0]) == decrypt_json(fernet, good) == {"n": 1}
    assert out[1:-1] == [None] * len(bad)
    for token in bad:
        with pytest.raises((FernetKeyError, InvalidToken)):
            decrypt_json(fernet, token)


def test_a_cipher_whose_keys_are_not_where_cryptography_keeps_them_decrypts_nothing_at_once():
    class Opaque(MultiFernet):
        def __init__(self, fernets):
            super().__init__(fernets)
            self._fernets = [object()]

    fernet = Fernet(generate_key())
    token = fernet.encrypt(b"x")
    assert decrypt_many(Opaque([fernet]), [token]) == [None]
    assert decrypt_many(fernet, []) == []
