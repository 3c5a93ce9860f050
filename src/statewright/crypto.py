"""Fernet encryption of trigger kwargs (and any other secret-bearing JSON data).

The key comes from the ``STATEWRIGHT_FERNET_KEY`` setting: one key, or a comma-separated list
of keys for rotation. The first key encrypts; every key is tried when decrypting, so a new
key can be put first while the old one stays in the list until the stored values have been
re-encrypted. A missing or malformed key is an error: values are never stored in plaintext.

The embedded default keeps its key in ``$STATEWRIGHT_HOME/fernet.key`` (see
:func:`ensure_key_file`).
"""

from __future__ import annotations

import binascii
import contextlib
import hmac
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from statewright.core.errors import ConfigurationError
from statewright.sdk import serde

__all__ = [
    "FERNET_KEY_SETTING",
    "KEY_FILE_NAME",
    "FernetKeyError",
    "decrypt_json",
    "decrypt_many",
    "encrypt_json",
    "encrypt_serialized",
    "ensure_key_file",
    "generate_key",
    "load_fernet",
    "value_of_plaintext",
]

FERNET_KEY_SETTING = "STATEWRIGHT_FERNET_KEY"
KEY_FILE_NAME = "fernet.key"

_HOW_TO_MAKE_ONE = (
    "Make a key with `statewright config fernet-key`, or with "
    '`python -c "from cryptography.fernet import Fernet; '
    'print(Fernet.generate_key().decode())"`, '
    f"and set it in {FERNET_KEY_SETTING} (comma-separate several keys to rotate: "
    "the first one encrypts, all of them decrypt)."
)


class FernetKeyError(ConfigurationError):
    """The Fernet key is missing or malformed, or cannot decrypt a stored value."""


def generate_key() -> str:
    """Return a new random Fernet key (url-safe base64 text)."""
    return Fernet.generate_key().decode("ascii")


def load_fernet(key: str | None = None, *, env: Mapping[str, str] | None = None) -> MultiFernet:
    """Build the cipher from ``key``, or from ``STATEWRIGHT_FERNET_KEY`` in ``env``.

    ``env`` defaults to the process environment. Raises :class:`FernetKeyError` when no key is
    set or when any key in the list is malformed.
    """
    if key is None:
        source = os.environ if env is None else env
        key = source.get(FERNET_KEY_SETTING)
    keys = [part.strip() for part in (key or "").split(",") if part.strip()]
    if not keys:
        raise FernetKeyError(
            f"No Fernet key is configured: {FERNET_KEY_SETTING} is not set or is empty. "
            "Trigger kwargs are always stored encrypted. " + _HOW_TO_MAKE_ONE
        )
    ciphers: list[Fernet] = []
    for position, part in enumerate(keys, start=1):
        try:
            ciphers.append(Fernet(part.encode("ascii")))
        except (ValueError, UnicodeEncodeError) as exc:
            raise FernetKeyError(
                f"Fernet key {position} of {len(keys)} is malformed "
                "(a key is 32 random bytes in url-safe base64, 44 characters ending in '='): "
                f"{str(exc).rstrip('.')}. " + _HOW_TO_MAKE_ONE
            ) from exc
    return MultiFernet(ciphers)


def encrypt_json(fernet: Fernet | MultiFernet, value: Any) -> str:
    """Serialize ``value`` (see :mod:`statewright.sdk.serde`) and encrypt it to a token."""
    return fernet.encrypt(serde.dumps(value).encode("utf-8")).decode("ascii")


_SERIALIZED = "serialized"
"""The tag of :func:`encrypt_serialized`'s envelope. ``serde.serialize`` never writes it (a
real dict with a ``__type`` key is wrapped as a ``dict`` tag), so it tells the two forms
apart; a reader older than the envelope fails on it with serde's "unknown tag" error."""


def encrypt_serialized(fernet: Fernet | MultiFernet, data: Any) -> str:
    """Encrypt ``data`` that is already serialized (what ``serde.serialize`` returned, such as
    trigger kwargs) as it is, in an envelope ``{"__type": "serialized", "value": data}``.

    :func:`decrypt_json` returns ``data`` from it, as it returns what was passed to
    :func:`encrypt_json`; but ``encrypt_json(data)`` would serialize ``data`` a second time, so
    that every reader had to deserialize it twice.
    """
    envelope = {serde.TYPE_KEY: _SERIALIZED, "value": data}
    text = json.dumps(envelope, separators=(",", ":"), sort_keys=True)
    return fernet.encrypt(text.encode("utf-8")).decode("ascii")


def decrypt_json(fernet: Fernet | MultiFernet, token: str) -> Any:
    """Decrypt a token made by :func:`encrypt_json` and return the value it holds; from a
    token made by :func:`encrypt_serialized`, the serialized data it holds."""
    try:
        plaintext = fernet.decrypt(token.encode("ascii") if isinstance(token, str) else token)
    except (InvalidToken, UnicodeEncodeError) as exc:
        raise FernetKeyError(
            "A stored encrypted value cannot be decrypted with the configured key(s); "
            "was the key rotated without keeping the old one? Put the new key first and "
            f"keep the old key after it in {FERNET_KEY_SETTING} "
            "(for example NEW_KEY,OLD_KEY) until every value has been re-encrypted."
        ) from exc
    return value_of_plaintext(plaintext)


def value_of_plaintext(plaintext: bytes) -> Any:
    """What :func:`decrypt_json` returns for a token whose decrypted bytes are ``plaintext``
    (the value, or the serialized data of an :func:`encrypt_serialized` envelope)."""
    data = _loads(plaintext.decode("utf-8", "surrogatepass"))
    if type(data) is dict and data.get(serde.TYPE_KEY) == _SERIALIZED:
        return data.get("value")
    return serde.deserialize(data)


def decrypt_many(fernet: Fernet | MultiFernet, tokens: Sequence[str | bytes]
                 ) -> list[bytes | None]:
    """The decrypted bytes of each token, as ``fernet.decrypt`` gives them, or None for a token
    to pass to :func:`decrypt_json` one by one (it does not decrypt: its error is raised there).

    For the triggerer's claims (thousands of tokens at once, a third of a claim's CPU spent in
    ``Fernet.decrypt``): each token's signature is checked with ``hmac.digest`` and all the
    tokens of one key are decrypted by one AES-CBC call. Each token's IV followed by its
    ciphertext, laid end to end, is one CBC stream whose every ciphertext block is chained to
    the block before it: the IV for a token's first block, as in its own decryption; only the
    blocks decrypted from the IVs themselves are dropped."""
    keys = _raw_keys(fernet)
    out: list[bytes | None] = [None] * len(tokens)
    if keys is None:
        return out
    groups: list[list[tuple[int, bytes]]] = [[] for _ in keys]
    digest, same, a2b = hmac.digest, hmac.compare_digest, binascii.a2b_base64
    for i, token in enumerate(tokens):
        try:  # ``base64.urlsafe_b64decode`` without its Python layers
            raw = a2b((token.encode("ascii") if isinstance(token, str) else token)
                      .translate(_URLSAFE))
        except (ValueError, TypeError):
            continue
        n = len(raw) - _OVERHEAD
        if n <= 0 or n % 16 or raw[0] != 0x80:
            continue
        signed, mac = raw[:-32], raw[-32:]
        for k, (signing_key, _) in enumerate(keys):
            if same(digest(signing_key, signed, "sha256"), mac):
                groups[k].append((i, raw[9:-32]))
                break
    for (_, encryption_key), group in zip(keys, groups, strict=True):
        if group:
            _decrypt_chained(encryption_key, group, out)
    return out


_URLSAFE = bytes.maketrans(b"-_", b"+/")
_OVERHEAD = 1 + 8 + 16 + 32
"""A Fernet token's bytes besides its ciphertext: version, timestamp, IV, HMAC-SHA256."""


def _raw_keys(fernet: Fernet | MultiFernet) -> list[tuple[bytes, bytes]] | None:
    """(signing key, encryption key) of each key in order; None when ``cryptography`` keeps
    them otherwise than its releases since 2.x do (every token is then decrypted alone)."""
    ciphers = getattr(fernet, "_fernets", None) if isinstance(fernet, MultiFernet) else [fernet]
    try:
        keys = [(f._signing_key, f._encryption_key) for f in ciphers or ()]
    except AttributeError:
        return None
    ok = keys and all(type(s) is bytes and type(e) is bytes and len(s) == len(e) == 16
                      for s, e in keys)
    return keys if ok else None


def _decrypt_chained(key: bytes, group: Sequence[tuple[int, bytes]],
                     out: list[bytes | None]) -> None:
    decryptor = Cipher(algorithms.AES(key), modes.CBC(bytes(16))).decryptor()
    padded = decryptor.update(b"".join(seg for _, seg in group)) + decryptor.finalize()
    pos = 0
    for i, seg in group:
        end = pos + len(seg)
        block = padded[pos + 16:end]  # (the IV's own block dropped)
        pos = end
        pad = block[-1]
        if 1 <= pad <= 16 and block[-pad:] == bytes((pad,)) * pad:
            out[i] = block[:-pad]


_DECODER = json.JSONDecoder()


def _loads(text: str) -> Any:
    """``json.loads(text)``. What ``encrypt_json`` and ``encrypt_serialized`` write is compact
    UTF-8 JSON (decoded by the caller, so that the encoding is not guessed): read without
    ``json.loads``'s whitespace checks, falling back to it when they would matter (its value,
    or its error)."""
    try:
        data, end = _DECODER.raw_decode(text)
    except ValueError:
        end = -1
    return data if end == len(text) else json.loads(text)


def ensure_key_file(home: Path) -> str:
    """Return the key kept in ``home/fernet.key``, creating the file (mode 0600) if needed.

    Several processes may start at once: the file is written under a temporary name and
    linked into place, so a reader never sees a half-written key and all of them end up
    with the same one.
    """
    path = Path(home) / KEY_FILE_NAME
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _create_key_file(path)
    key = path.read_text(encoding="ascii").strip()
    try:
        load_fernet(key)
    except FernetKeyError as exc:
        raise FernetKeyError(
            f"The key file {path} does not hold a valid Fernet key. Delete it to have a new "
            f"one made (values encrypted with the old key become unreadable), or put a valid "
            f"key in it. {exc}"
        ) from exc
    return key


def _create_key_file(path: Path) -> None:
    # one temporary name per thread: two requests of one server may make the key at once
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (generate_key() + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)
    except FileExistsError:
        pass  # another process made the key first; use theirs
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
