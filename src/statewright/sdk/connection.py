"""``Connection``: how a task reaches an external system, in Airflow's shape.

A connection has a ``conn_id``, a ``conn_type``, ``host``, ``schema``, ``login``, ``password``,
``port`` and ``extra`` (a JSON object kept as text; ``extra_dejson`` is the parsed dict). It can
be written as a URI (``postgresql://user:pass@host:5432/db?sslmode=require``) or as a JSON object
(``{"conn_type": "postgres", "host": ..., "extra": {...}}``), both exactly as Airflow reads
them: the scheme is the type (``postgresql`` is ``postgres``, ``-`` is ``_``), every part is
percent-decoded, the query is the extra (or the JSON held by its ``__extra__`` parameter), and a
second ``://`` keeps a protocol in the host (``http://https://example.org`` has the host
``https://example.org``). ``get_uri()`` writes the URI back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from statewright.core.errors import StatewrightError

__all__ = ["EXTRA_KEY", "Connection", "InvalidConnection"]

EXTRA_KEY = "__extra__"
_FIELDS = ("conn_type", "description", "host", "schema", "login", "password", "port", "extra")


class InvalidConnection(StatewrightError, ValueError):
    """A connection's URI or JSON form, or its extra, is malformed."""



@dataclass
class Connection:
    conn_id: str | None = None
    conn_type: str | None = None
    description: str | None = None
    host: str | None = None
    login: str | None = None
    password: str | None = field(default=None, repr=False)
    schema: str | None = None
    port: int | None = None
    extra: str | None = None
    uri: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.extra, dict):
            self.extra = json.dumps(self.extra)
        if self.uri is not None:
            if any(getattr(self, f) is not None for f in _FIELDS if f != "description"):
                raise InvalidConnection(
                    f"connection {self.conn_id!r}: give either uri or the separate fields "
                    "(conn_type, host, login, ...), not both")
            self._parse_uri(self.uri)
            self.uri = None
        if self.port is not None:
            self.port = _port(self.port, self.conn_id)
        if self.conn_type:
            self.conn_type = _normalize_type(self.conn_type)
        self._check_extra()

    # -- forms ------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, value: str | dict[str, Any], conn_id: str | None = None) -> Connection:
        """The JSON form: an object with any of conn_type, description, host, schema, login,
        password, port and extra (an object or its JSON text)."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise InvalidConnection(
                    f"connection {conn_id!r}: the JSON form is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise InvalidConnection(
                f"connection {conn_id!r}: the JSON form must be an object, got "
                f"{type(value).__name__}")
        data = dict(value)
        if "extra_dejson" in data:
            if "extra" in data:
                raise InvalidConnection(f"connection {conn_id!r}: give extra or extra_dejson, "
                                        "not both")
            data["extra"] = data.pop("extra_dejson")
        given_id = data.pop("conn_id", None)
        if given_id is not None and conn_id is not None and given_id != conn_id:
            raise InvalidConnection(f"connection {conn_id!r}: its JSON names another conn_id "
                                    f"({given_id!r})")
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise InvalidConnection(
                f"connection {conn_id!r}: unknown field(s) {', '.join(unknown)}; a connection has "
                f"{', '.join(_FIELDS)}")
        return cls(conn_id=conn_id or given_id, **data)

    @classmethod
    def from_uri_or_json(cls, conn_id: str, value: str) -> Connection:
        """An environment variable's or a file's value: JSON when it starts with ``{``."""
        text = value.strip()
        if text.startswith("{"):
            return cls.from_json(text, conn_id=conn_id)
        return cls(conn_id=conn_id, uri=text)

    def _parse_uri(self, uri: str) -> None:
        where = f"connection {self.conn_id!r}: URI {_hide_password(uri)!r}"
        schemes = uri.count("://")
        if schemes == 0 or schemes > 2:
            raise InvalidConnection(f"{where} is malformed: a connection URI looks like "
                                    "TYPE://LOGIN:PASSWORD@HOST:PORT/SCHEMA?EXTRA=VALUE")
        scheme = uri.split("://", 1)[0]
        if not scheme or not all(ch.isalnum() or ch in "+-._" for ch in scheme):
            raise InvalidConnection(f"{where} is malformed: {scheme!r} is not a connection type")
        self.conn_type = _normalize_type(scheme)
        with_protocol = schemes == 2
        rest = uri[len(scheme) + 3:] if with_protocol else "//" + uri[len(scheme) + 3:]
        if with_protocol:
            protocol_part = rest.split("://", 1)[0]
            if "@" in protocol_part or ":" in protocol_part:
                raise InvalidConnection(f"{where} is malformed: two schemes but no protocol")
        parts = urlsplit(rest)
        try:
            port = parts.port
        except ValueError as exc:
            raise InvalidConnection(f"{where} is malformed: {exc}") from None
        host = unquote(parts.hostname or "") if parts.hostname else ""
        if with_protocol and parts.scheme:
            host = f"{parts.scheme}://{host}"
        self.host = host or None
        self.schema = unquote(parts.path[1:]) if parts.path[1:] else None
        self.login = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.port = port
        if parts.query:
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            self.extra = query[EXTRA_KEY] if EXTRA_KEY in query else json.dumps(query)

    def _check_extra(self) -> None:
        if self.extra in (None, ""):
            return
        try:
            parsed = json.loads(str(self.extra))
        except json.JSONDecodeError as exc:
            raise InvalidConnection(
                f"connection {self.conn_id!r}: extra is not valid JSON ({exc}); extra is a JSON "
                'object such as {"sslmode": "require"}') from None
        if not isinstance(parsed, dict):
            raise InvalidConnection(f"connection {self.conn_id!r}: extra must be a JSON object, "
                                    f"got {type(parsed).__name__}")

    def get_uri(self) -> str:
        """The URI form (Airflow's ``Connection.get_uri``)."""
        uri = f"{self.conn_type.lower().replace('_', '-')}://" if self.conn_type else "//"
        protocol, host = (self.host.split("://", 1) if self.host and "://" in self.host
                          else (None, self.host))
        if protocol:
            uri += f"{protocol}://"
        authority = ""
        if self.login is not None:
            authority += quote(self.login, safe="")
        if self.password is not None:
            authority += ":" + quote(self.password, safe="")
        if authority:
            uri += authority + "@"
        host_block = quote(host, safe="") if host else ""
        if self.port:
            host_block += f"@:{self.port}" if not host_block and not authority else f":{self.port}"
        if self.schema:
            host_block += f"/{quote(self.schema, safe='')}"
        uri += host_block
        if self.extra:
            extra = self.extra_dejson
            query: str | None
            try:
                query = urlencode(extra)
            except TypeError:
                query = None
            if not (query and extra == dict(parse_qsl(query, keep_blank_values=True))):
                query = urlencode({EXTRA_KEY: self.extra})
            uri += ("?" if self.schema else "/?") + query
        return uri

    @property
    def extra_dejson(self) -> dict[str, Any]:
        """The extra as a dict (empty when there is none)."""
        if not self.extra:
            return {}
        value = json.loads(self.extra)
        return value if isinstance(value, dict) else {}

    def to_dict(self) -> dict[str, Any]:
        """The fields as Airflow's ``connections export`` writes them (extra as text)."""
        return {"conn_type": self.conn_type, "description": self.description,
                "login": self.login, "password": self.password, "host": self.host,
                "port": self.port, "schema": self.schema, "extra": self.extra}

    def to_json(self) -> str:
        data = {k: v for k, v in self.to_dict().items() if v is not None}
        if self.extra:
            data["extra"] = self.extra_dejson
        return json.dumps(data)

    def get_hook(self, *, hook_params: dict[str, Any] | None = None) -> Any:
        """The hook for this connection's type (Airflow's ``Connection.get_hook``)."""
        from statewright.sdk.basehook import hook_for_type

        hook_cls = hook_for_type(self.conn_type)
        if hook_cls is None:
            raise ValueError(f"connection {self.conn_id!r}: no hook is loaded for the type "
                             f"{self.conn_type!r}")
        params = dict(hook_params or {})
        params[hook_cls.conn_name_attr] = self.conn_id
        hook = hook_cls(**params)
        hook.get_connection = lambda _conn_id: self  # type: ignore[method-assign]
        return hook


def _normalize_type(conn_type: str) -> str:
    conn_type = conn_type.replace("-", "_")
    return "postgres" if conn_type == "postgresql" else conn_type


def _port(value: Any, conn_id: str | None) -> int:
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise InvalidConnection(f"connection {conn_id!r}: port {value!r} is not a number") from None
    if not 0 < port < 65536:
        raise InvalidConnection(f"connection {conn_id!r}: port {port} is out of range 1-65535")
    return port


def _hide_password(uri: str) -> str:
    """The URI with the password part replaced by ``***`` (for error messages)."""
    try:
        parts = urlsplit(uri if uri.count("://") < 2 else uri.split("://", 1)[1])
        if parts.password:
            return uri.replace(f":{parts.password}@", ":***@")
    except ValueError:
        pass
    return uri
