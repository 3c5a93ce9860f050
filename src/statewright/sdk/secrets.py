"""Where connections and variables are looked up, in Airflow's order.

1. the environment: ``STATEWRIGHT_CONN_<CONN_ID>`` (a URI or the JSON form) and
   ``STATEWRIGHT_VAR_<KEY>`` (the id or key upper-cased), then Airflow's names for them,
   ``AIRFLOW_CONN_<CONN_ID>`` and ``AIRFLOW_VAR_<KEY>``, which an Airflow deployment already sets;
2. the secrets backends named by ``STATEWRIGHT_SECRETS_BACKEND`` (comma-separated class paths of
   :class:`SecretsBackend` subclasses; ``STATEWRIGHT_SECRETS_BACKEND_KWARGS`` is a JSON object
   of keyword arguments for them);
3. the metadata store: the statewright database, reached through whatever store the process was
   handed (:func:`install_store`). A task's process holds no database session: its store sends
   each lookup to the worker supervising it. A process without a store (a plain script) sees
   the environment and the backends only.

Answers of the backends and the store are kept for ``STATEWRIGHT_SECRETS_CACHE_TTL_SECONDS``
(default 10; 0 turns the cache off), so a DAG file read many times does not hammer them. Every
connection password read here, and every variable whose key looks sensitive, is registered for
masking (:mod:`statewright.sdk.masking`).
"""

from __future__ import annotations

import importlib
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from statewright.core.errors import ConfigurationError, StatewrightError
from statewright.sdk import masking
from statewright.sdk.connection import Connection

__all__ = [
    "BACKENDS_SETTING",
    "CACHE_TTL_SETTING",
    "ConnectionNotFound",
    "EnvironmentVariablesBackend",
    "SecretStore",
    "SecretsBackend",
    "clear_cache",
    "get_connection",
    "get_variable",
    "install_store",
    "installed_store",
    "set_variable",
]

CONN_PREFIX = "STATEWRIGHT_CONN_"
VAR_PREFIX = "STATEWRIGHT_VAR_"
AIRFLOW_PREFIXES = {CONN_PREFIX: "AIRFLOW_CONN_", VAR_PREFIX: "AIRFLOW_VAR_"}
"""Airflow's names of the same variables: a deployment's environment works unchanged."""
BACKENDS_SETTING = "STATEWRIGHT_SECRETS_BACKEND"
BACKEND_KWARGS_SETTING = "STATEWRIGHT_SECRETS_BACKEND_KWARGS"
CACHE_TTL_SETTING = "STATEWRIGHT_SECRETS_CACHE_TTL_SECONDS"


class ConnectionNotFound(StatewrightError, LookupError):
    """No connection has the id asked for (Airflow's ``AirflowNotFoundException``)."""

    def __init__(self, conn_id: str) -> None:
        self.conn_id = conn_id
        super().__init__(
            f"The conn_id `{conn_id}` isn't defined: define it with `statewright connections "
            f"add {conn_id} --conn-uri ...`, in the environment as "
            f"{CONN_PREFIX}{conn_id.upper()}, or in a secrets backend")


class SecretsBackend:
    """A store of connections and variables (Airflow's ``BaseSecretsBackend``).

    Override ``get_conn_value`` (a URI or the JSON form, or None) or ``get_connection``, and
    ``get_variable`` (the value as text, or None). None means "not here: ask the next one".
    """

    def get_conn_value(self, conn_id: str) -> str | None:
        return None

    def get_connection(self, conn_id: str) -> Connection | None:
        value = self.get_conn_value(conn_id)
        return None if value is None else Connection.from_uri_or_json(conn_id, value)

    def get_variable(self, key: str) -> str | None:
        return None


class EnvironmentVariablesBackend(SecretsBackend):
    """``STATEWRIGHT_CONN_<CONN_ID>`` and ``STATEWRIGHT_VAR_<KEY>``, else Airflow's
    ``AIRFLOW_CONN_<CONN_ID>`` and ``AIRFLOW_VAR_<KEY>``."""

    def get_conn_value(self, conn_id: str) -> str | None:
        return _environment(CONN_PREFIX, conn_id)

    def get_variable(self, key: str) -> str | None:
        return _environment(VAR_PREFIX, key)


def _environment(prefix: str, name: str) -> str | None:
    value = os.environ.get(prefix + name.upper())
    return value if value is not None else os.environ.get(AIRFLOW_PREFIXES[prefix] + name.upper())


class SecretStore(Protocol):
    """The metadata store as the SDK sees it; the worker or the command hands one in."""

    def get_connection(self, conn_id: str) -> Connection | None: ...

    def get_variable(self, key: str) -> str | None: ...

    def set_variable(self, key: str, value: str, description: str | None) -> None: ...


_store: SecretStore | None = None
_lock = threading.Lock()
_cache: dict[tuple[str, str], tuple[float, Any]] = {}
_backends: tuple[str, list[SecretsBackend]] | None = None
_MISSING = object()
monotonic: Callable[[], float] = time.monotonic
"""The cache's clock (tests replace it)."""


def install_store(store: SecretStore | None) -> None:
    """Use ``store`` as this process's metadata store (None: no store)."""
    global _store
    with _lock:
        _store = store
        _cache.clear()


def installed_store() -> SecretStore | None:
    return _store


def clear_cache() -> None:
    global _backends
    with _lock:
        _cache.clear()
        _backends = None


def get_connection(conn_id: str) -> Connection:
    """The connection ``conn_id``; raises :class:`ConnectionNotFound` naming it."""
    if not isinstance(conn_id, str) or not conn_id:
        raise ConnectionNotFound(str(conn_id))
    conn = _lookup("conn", conn_id)
    if conn is None:
        raise ConnectionNotFound(conn_id)
    masking.mask_secret(conn.password)
    for name, value in conn.extra_dejson.items():
        if masking.is_sensitive_name(name):
            masking.mask_secret(value)
    return conn  # type: ignore[no-any-return]


def get_variable(key: str) -> str | None:
    """The value of variable ``key`` as text, or None when no store has it."""
    value = _lookup("var", key)
    if value is not None and masking.is_sensitive_name(key):
        masking.mask_secret(value)
    return value  # type: ignore[no-any-return]


def set_variable(key: str, value: str, description: str | None = None) -> None:
    store = _store
    if store is None:
        raise ConfigurationError(
            f"Variable {key!r} cannot be set here: this process has no statewright database "
            "(set variables from a task, with `statewright variables set`, or in the API)")
    store.set_variable(key, value, description)
    with _lock:
        _cache.pop(("var", key), None)


def _lookup(kind: str, key: str) -> Any:
    env = EnvironmentVariablesBackend()
    found = env.get_connection(key) if kind == "conn" else env.get_variable(key)
    if found is not None:
        return found
    ttl = _ttl()
    now = monotonic()
    with _lock:
        cached = _cache.get((kind, key))
    if cached is not None and now - cached[0] < ttl:
        return None if cached[1] is _MISSING else cached[1]
    found = _from_backends_and_store(kind, key)
    if ttl > 0:
        with _lock:
            _cache[(kind, key)] = (now, _MISSING if found is None else found)
    return found


def _from_backends_and_store(kind: str, key: str) -> Any:
    sources: list[Any] = list(_configured_backends())
    if _store is not None:
        sources.append(_store)
    for source in sources:
        found = source.get_connection(key) if kind == "conn" else source.get_variable(key)
        if found is not None:
            return found
    return None


def _ttl() -> float:
    raw = os.environ.get(CACHE_TTL_SETTING, "")
    try:
        return max(0.0, float(raw)) if raw.strip() else 10.0
    except ValueError:
        raise ConfigurationError(f"{CACHE_TTL_SETTING}={raw!r} is not a number of seconds; "
                                 "set it to e.g. 10 (0 turns the cache off)") from None


def _configured_backends() -> list[SecretsBackend]:
    global _backends
    spec = os.environ.get(BACKENDS_SETTING, "").strip()
    kwargs_text = os.environ.get(BACKEND_KWARGS_SETTING, "").strip()
    signature = f"{spec}|{kwargs_text}"
    with _lock:
        if _backends is not None and _backends[0] == signature:
            return _backends[1]
    backends = [load_backend(path, kwargs_text) for path in spec.split(",") if path.strip()]
    with _lock:
        _backends = (signature, backends)
    return backends


def load_backend(path: str, kwargs_text: str = "") -> SecretsBackend:
    """An instance of the backend class at ``path`` (``package.module.Class``)."""
    path = path.strip()
    module_name, _, class_name = path.rpartition(".")
    try:
        kwargs = json.loads(kwargs_text) if kwargs_text else {}
        if not isinstance(kwargs, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        raise ConfigurationError(f"{BACKEND_KWARGS_SETTING} must be a JSON object of keyword "
                                 f"arguments: {exc}") from None
    try:
        cls = getattr(importlib.import_module(module_name), class_name) if module_name else None
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"{BACKENDS_SETTING}: cannot load {path!r}: {exc}") from None
    if not (isinstance(cls, type) and all(hasattr(cls, m)
                                          for m in ("get_connection", "get_variable"))):
        raise ConfigurationError(f"{BACKENDS_SETTING}: {path!r} is not a secrets backend class "
                                 "(subclass statewright.sdk.secrets.SecretsBackend)")
    return cls(**kwargs)  # type: ignore[no-any-return]
