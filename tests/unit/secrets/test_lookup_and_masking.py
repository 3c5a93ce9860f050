"""The lookup order (environment, backends, store), the cache, Variable, the template accessors
and masking."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest

from statewright.sdk import BaseHook, Variable, secrets
from statewright.sdk.connection import Connection
from statewright.sdk.masking import RedactingStream, mask_secret, redact, reset_masks
from statewright.sdk.variables import template_accessors


class FakeStore:
    def __init__(self) -> None:
        self.reads: list[str] = []
        self.vars: dict[str, str] = {"threshold": "5", "cfg": '{"a": {"b": 2}}',
                                     "api_token": "tok-123456", "broken": "{nope"}
        self.conns = {"db": Connection(conn_id="db", conn_type="postgres", host="store.host",
                                       password="store-password")}

    def get_connection(self, conn_id: str) -> Connection | None:
        self.reads.append(f"conn:{conn_id}")
        return self.conns.get(conn_id)

    def get_variable(self, key: str) -> str | None:
        self.reads.append(f"var:{key}")
        return self.vars.get(key)

    def set_variable(self, key: str, value: str, description: str | None) -> None:
        self.vars[key] = value


class DictBackend(secrets.SecretsBackend):
    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def get_conn_value(self, conn_id: str) -> str | None:
        return "mysql://b@backend.host/x" if conn_id == "db" else None

    def get_variable(self, key: str) -> str | None:
        return f"{self.prefix}from-backend" if key == "threshold" else None


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Any:
    s = FakeStore()
    secrets.clear_cache()
    secrets.install_store(s)
    reset_masks()
    yield s
    secrets.install_store(None)
    secrets.clear_cache()
    reset_masks()


def test_environment_then_backend_then_store(store: FakeStore,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    assert BaseHook.get_connection("db").host == "store.host"
    monkeypatch.setenv("STATEWRIGHT_SECRETS_BACKEND", f"{__name__}.DictBackend")
    monkeypatch.setenv("STATEWRIGHT_SECRETS_BACKEND_KWARGS", '{"prefix": "p-"}')
    monkeypatch.setenv("STATEWRIGHT_SECRETS_CACHE_TTL_SECONDS", "0")
    assert BaseHook.get_connection("db").host == "backend.host"
    assert Variable.get("threshold") == "p-from-backend"
    monkeypatch.setenv("STATEWRIGHT_CONN_DB", '{"conn_type": "sqlite", "host": "/env.db"}')
    monkeypatch.setenv("STATEWRIGHT_VAR_THRESHOLD", "from-env")
    assert BaseHook.get_connection("db").host == "/env.db"
    assert Variable.get("threshold") == "from-env"


def test_a_backend_that_cannot_load_is_named(store: FakeStore,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_SECRETS_BACKEND", "nowhere.Missing")
    with pytest.raises(Exception, match=r"cannot load .nowhere\.Missing."):
        Variable.get("threshold")


def test_the_cache_keeps_answers_for_its_ttl(store: FakeStore,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(secrets, "monotonic", lambda: now[0])
    for _ in range(5):
        Variable.get("threshold")
    assert store.reads == ["var:threshold"]
    now[0] += 11
    Variable.get("threshold")
    assert store.reads == ["var:threshold"] * 2
    Variable.set("threshold", 7)  # a write drops the cached value
    assert Variable.get("threshold") == "7"


def test_variable_get_default_and_json(store: FakeStore) -> None:
    assert Variable.get("threshold") == "5"
    assert Variable.get("cfg", deserialize_json=True) == {"a": {"b": 2}}
    assert Variable.get("missing", default="d") == "d"
    assert Variable.get("missing", default_var=None) is None
    with pytest.raises(KeyError, match="Variable missing does not exist"):
        Variable.get("missing")
    with pytest.raises(ValueError, match="'broken' is not valid JSON"):
        Variable.get("broken", deserialize_json=True)
    Variable.set("obj", {"x": [1]}, serialize_json=True)
    assert Variable.get("obj", deserialize_json=True) == {"x": [1]}


def test_unknown_conn_id_is_named(store: FakeStore) -> None:
    with pytest.raises(secrets.ConnectionNotFound, match="`nope` isn't defined"):
        BaseHook.get_connection("nope")


def test_without_a_store_set_variable_says_why() -> None:
    secrets.install_store(None)
    with pytest.raises(Exception, match="cannot be set here"):
        Variable.set("k", "v")


def test_template_accessors_are_lazy(store: FakeStore) -> None:
    ctx = template_accessors()
    assert store.reads == []
    assert ctx["var"].value.threshold == "5"
    assert ctx["var"].json.cfg["a"]["b"] == 2
    assert ctx["conn"].db.host == "store.host"
    assert ctx["var"].value.get("missing", "fallback") == "fallback"
    assert ctx["conn"].get("missing") is None


def test_secrets_read_are_masked(store: FakeStore) -> None:
    BaseHook.get_connection("db")
    Variable.get("api_token")
    Variable.get("threshold")  # not a sensitive key: not masked
    text = "pw=store-password token=tok-123456 threshold=5"
    assert redact(text) == "pw=*** token=*** threshold=5"


def test_redact_by_key_name_and_nested() -> None:
    reset_masks()
    mask_secret("hunter22")
    value = {"password": "anything", "nested": {"api_key": 1234, "ok": "hunter22 here"},
             "rows": [("a", "hunter22")], "n": 5}
    assert redact(value) == {"password": "***", "nested": {"api_key": "***",
                                                           "ok": "*** here"},
                             "rows": [("a", "***")], "n": 5}
    reset_masks()


def test_sensitive_names_are_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert redact({"dsn": "x"}) == {"dsn": "x"}
    monkeypatch.setenv("STATEWRIGHT_SENSITIVE_VAR_CONN_NAMES", "dsn, connstr")
    assert redact({"dsn": "x", "my_connstr": "y"}) == {"dsn": "***", "my_connstr": "***"}


def test_redacting_stream_masks_secrets_written_in_pieces() -> None:
    reset_masks()
    mask_secret("s3cr3t-value")
    out = io.StringIO()
    stream = RedactingStream(out)
    print("the password is", "s3cr3t", end="", file=stream)
    print("-value!", file=stream)
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test.masking")
    logger.addHandler(handler)
    try:
        logger.warning("logged s3cr3t-value")
    finally:
        logger.removeHandler(handler)
    stream.flush()
    assert "s3cr3t" not in out.getvalue()
    assert out.getvalue().count("***") == 2
    reset_masks()


def test_template_accessors_render_in_a_sandboxed_jinja_environment(store: FakeStore) -> None:
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment()
    template = env.from_string(
        "{{ var.value.threshold }} {{ var.json.cfg.a.b }} {{ conn.db.host }} "
        "{{ var.value.get('missing', 'dflt') }} {{ conn.db.extra_dejson }}")
    assert template.render(**template_accessors()) == "5 2 store.host dflt {}"
    assert store.reads == ["var:threshold", "var:cfg", "conn:db", "var:missing"]
    with pytest.raises(KeyError, match="absent"):
        env.from_string("{{ var.value.absent }}").render(**template_accessors())


def test_airflows_environment_names_work_after_statewrights(
        store: FakeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_SECRETS_CACHE_TTL_SECONDS", "0")
    monkeypatch.setenv("AIRFLOW_CONN_WAREHOUSE", "postgresql://etl:af-secret@db:5432/dw")
    monkeypatch.setenv("AIRFLOW_VAR_REGION", "eu")
    conn = secrets.get_connection("warehouse")
    assert (conn.host, conn.login, conn.schema) == ("db", "etl", "dw")
    assert secrets.get_variable("region") == "eu"
    assert redact("password af-secret") == "password ***"
    monkeypatch.setenv("STATEWRIGHT_VAR_REGION", "us")  # statewright's own name first
    assert secrets.get_variable("region") == "us"
