"""Masking secrets: ``***`` in place of a secret wherever a task's output is shown.

What is masked:

- every value registered with :func:`mask_secret` (a task may register its own; the password of
  each connection a task looks up, and the value of each variable whose key looks sensitive, are
  registered when they are read);
- the value under any key whose name looks sensitive: it contains one of
  :data:`DEFAULT_SENSITIVE_NAMES` (``password``, ``secret``, ``token``, ``key``, …) or one of
  the comma-separated names in ``STATEWRIGHT_SENSITIVE_VAR_CONN_NAMES``, case-insensitively.

:func:`redact` masks any value (strings, dicts, lists, nested); :class:`RedactingStream` masks
what is written to a task's log. Values shorter than :data:`MIN_LENGTH` characters are not
registered (masking every ``a`` would ruin the log and hide nothing).
"""

from __future__ import annotations

import functools
import io
import os
import re
import threading
from collections.abc import Iterable
from typing import Any

__all__ = [
    "DEFAULT_SENSITIVE_NAMES",
    "MASK",
    "MIN_LENGTH",
    "SENSITIVE_NAMES_SETTING",
    "RedactingStream",
    "is_sensitive_name",
    "mask_secret",
    "redact",
    "registered_count",
    "registered_values",
    "reset_masks",
    "sensitive_names",
]

MASK = "***"
MIN_LENGTH = 3
SENSITIVE_NAMES_SETTING = "STATEWRIGHT_SENSITIVE_VAR_CONN_NAMES"
DEFAULT_SENSITIVE_NAMES: frozenset[str] = frozenset({
    "password", "passwd", "passphrase", "secret", "token", "key", "authorization",
    "private_key", "api_key", "apikey", "access_token", "credential",
})

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None


def sensitive_names() -> frozenset[str]:
    """The default names plus those of ``STATEWRIGHT_SENSITIVE_VAR_CONN_NAMES``."""
    return _names_of(os.environ.get(SENSITIVE_NAMES_SETTING, ""))


@functools.lru_cache(maxsize=8)
def _names_of(extra: str) -> frozenset[str]:
    return DEFAULT_SENSITIVE_NAMES | {n.strip().lower() for n in extra.split(",") if n.strip()}


def is_sensitive_name(name: str | None) -> bool:
    """Whether a variable key, a connection field or a dict key names a secret."""
    if not name:
        return False
    return _is_sensitive(str(name).lower(), sensitive_names())


@functools.lru_cache(maxsize=4096)
def _is_sensitive(lowered: str, names: frozenset[str]) -> bool:
    """Cached per name and setting: a worker asks it of the same few keys for every try."""
    return any(word in lowered for word in names)


def mask_secret(value: Any, name: str | None = None) -> None:
    """Register ``value`` (a string, or every string inside a dict or list) so that it is shown
    as ``***`` from now on in this process (Airflow's ``mask_secret``)."""
    del name  # accepted for Airflow's signature; a registered value is masked under any name
    global _pattern
    found = [s for s in _strings(value) if len(s) >= MIN_LENGTH]
    if not found:
        return
    with _lock:
        before = len(_secrets)
        for s in found:
            _secrets.add(s)
            if "\n" in s:  # also each line of a multi-line secret (a private key)
                _secrets.update(line for line in s.splitlines() if len(line) >= MIN_LENGTH)
        if len(_secrets) != before:
            _pattern = None


def reset_masks() -> None:
    """Forget every registered value (a new try in a reused task process)."""
    global _pattern
    with _lock:
        _secrets.clear()
        _pattern = None


def registered_count() -> int:
    with _lock:
        return len(_secrets)


def registered_values() -> list[str]:
    """The values registered in this process (a try's worker stores them, encrypted, so that
    the UI and the API can hide them too)."""
    with _lock:
        return sorted(_secrets)


def redact(value: Any, name: str | None = None, *, secrets: Iterable[str] = ()) -> Any:
    """``value`` with every secret masked: the whole value when ``name`` looks sensitive,
    registered values (and ``secrets``) inside strings, recursively inside dicts, lists and
    tuples."""
    extra = [s for s in secrets if isinstance(s, str) and len(s) >= MIN_LENGTH]
    pattern = _current_pattern() if not extra else _compile(set(extra) | set(registered_values()))
    return _redact(value, name, pattern)


def _redact(value: Any, name: str | None, pattern: re.Pattern[str] | None) -> Any:
    if name is not None and is_sensitive_name(name) and value not in (None, "", {}, []):
        if not isinstance(value, (dict, list, tuple)):
            return MASK
    if isinstance(value, str):
        return pattern.sub(MASK, value) if pattern is not None and value else value
    if isinstance(value, dict):
        return {k: _redact(v, k if isinstance(k, str) else None, pattern)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_redact(v, None, pattern) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _redact_text(text: str) -> str:
    pattern = _current_pattern()
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def _compile(values: set[str]) -> re.Pattern[str] | None:
    if not values:
        return None
    # longest first, so a secret that contains another is masked whole
    return re.compile("|".join(re.escape(s) for s in sorted(values, key=len, reverse=True)))


def _current_pattern() -> re.Pattern[str] | None:
    global _pattern
    with _lock:
        if _pattern is None and _secrets:
            _pattern = _compile(_secrets)
        return _pattern


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


class RedactingStream(io.TextIOBase):
    """A text stream that masks secrets in what goes through it to ``target``.

    Text is held until a line ends (or ``flush``), so a secret written in pieces — ``print``
    writes its arguments one by one — is still masked whole.
    """

    def __init__(self, target: Any) -> None:
        self.target = target
        self._buffer = ""
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        with self._lock:
            self._buffer += s
            if "\n" in self._buffer:
                done, _, self._buffer = self._buffer.rpartition("\n")
                self.target.write(_redact_text(done + "\n"))
        return len(s)

    def flush(self) -> None:
        with self._lock:
            if self._buffer:
                self.target.write(_redact_text(self._buffer))
                self._buffer = ""
        self.target.flush()
