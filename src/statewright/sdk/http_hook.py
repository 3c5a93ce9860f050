"""``HttpHook``: HTTP requests to the base URL of an ``http`` connection (httpx).

As Airflow's: the base URL is the connection's host when it carries a scheme, else
``{schema or "http"}://{host}``, with ``:{port}`` when set; a login and password become basic
authentication (or ``auth_type(login, password)``); the extra's keys are sent as headers, but
for the session settings Airflow reads from it (``timeout``, ``verify``, ``cert``, ``proxies``,
``allow_redirects``, ``max_redirects``, ``trust_env``, ``stream``, ``check_response``).
``run`` returns httpx's response, which also answers to the names of a ``requests`` response
that DAG code uses (``ok``, ``reason``); an error status raises :class:`HttpResponseError`
(``"404:Not Found ..."``, an ``AirflowException`` to DAG code).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from statewright.core.errors import StatewrightError
from statewright.sdk.basehook import BaseHook

__all__ = ["HttpHook", "HttpResponse", "HttpResponseError", "HttpTarget"]

SESSION_SETTINGS = frozenset({"timeout", "verify", "cert", "proxies", "allow_redirects",
                              "max_redirects", "trust_env", "stream", "check_response"})
"""Keys of an http connection's extra (and of ``extra_options``) that are not headers."""


class HttpResponseError(StatewrightError, RuntimeError):
    """The server answered with an error status (4xx, 5xx)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status_code = response.status_code
        super().__init__(
            f"{response.status_code}:{response.reason_phrase} ({response.request.method} "
            f"{response.request.url} answered HTTP {response.status_code}: "
            f"{response.text[:200]})")


class HttpResponse(httpx.Response):
    """httpx's response with the ``requests`` names DAG code reads."""

    @property
    def ok(self) -> bool:
        return not self.is_error

    @property
    def reason(self) -> str:
        return self.reason_phrase


@dataclass(frozen=True)
class HttpTarget:
    """What a request needs from the connection: its URL, headers and auth, and the session
    settings of its extra."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    auth: Any = None
    options: dict[str, Any] = field(default_factory=dict)


class HttpHook(BaseHook):
    conn_name_attr = "http_conn_id"
    default_conn_name = "http_default"
    conn_type = "http"
    conn_types = ("http", "https")
    hook_name = "HTTP"

    def __init__(self, method: str = "POST", http_conn_id: str = default_conn_name,
                 timeout: float = 30.0, auth_type: Any = None, **ignored: Any) -> None:
        """``ignored``: Airflow's ``tcp_keep_alive*`` and ``adapter`` (requests' transport
        settings), accepted and not used."""
        super().__init__()
        self.method = method.upper()
        self.http_conn_id = http_conn_id
        self.timeout = timeout
        self.auth_type = auth_type
        self.base_url = ""

    def target(self, endpoint: str | None = None,
               headers: dict[str, str] | None = None) -> HttpTarget:
        """The URL of ``endpoint`` under the connection's base URL, with its headers and auth."""
        conn = self.get_connection(self.http_conn_id)
        if conn.host and "://" in conn.host:
            base = conn.host
        else:
            base = f"{conn.schema or 'http'}://{conn.host or ''}"
        if conn.port:
            base += f":{conn.port}"
        self.base_url = base
        extra = conn.extra_dejson
        merged = {str(k): str(v) for k, v in extra.items() if k not in SESSION_SETTINGS}
        merged.update(headers or {})
        options = {k: v for k, v in extra.items() if k in SESSION_SETTINGS}
        return HttpTarget(url=url_join(base, endpoint), headers=merged,
                          auth=self._auth(conn.login, conn.password), options=options)

    def _auth(self, login: str | None, password: str | None) -> Any:
        if not login:
            return None
        if self.auth_type is None:
            return (login, password or "")
        name = getattr(self.auth_type, "__name__", "")
        if name == "HTTPDigestAuth":  # requests' classes, named in Airflow DAG files
            return httpx.DigestAuth(login, password or "")
        if name == "HTTPBasicAuth":
            return httpx.BasicAuth(login, password or "")
        return self.auth_type(login, password or "")

    def url_from_endpoint(self, endpoint: str | None) -> str:
        return url_join(self.base_url or self.target().url, endpoint)

    def get_conn(self, headers: dict[str, str] | None = None,
                 extra_options: dict[str, Any] | None = None) -> httpx.Client:
        target = self.target(None, headers)
        return self._client({**target.options, **(extra_options or {})}, target)

    def _client(self, options: dict[str, Any], target: HttpTarget) -> httpx.Client:
        kwargs: dict[str, Any] = {
            "timeout": options.get("timeout", self.timeout),
            "follow_redirects": bool(options.get("allow_redirects", True)),
            "base_url": target.url, "headers": target.headers, "auth": target.auth,
        }
        for ours, theirs in (("verify", "verify"), ("cert", "cert"), ("trust_env", "trust_env"),
                             ("max_redirects", "max_redirects")):
            if theirs in options:
                kwargs[ours] = options[theirs]
        proxies = options.get("proxies")
        if proxies:
            kwargs["proxy"] = proxies if isinstance(proxies, str) else (
                proxies.get("https") or proxies.get("http"))
        return httpx.Client(**kwargs)

    def run(self, endpoint: str | None = None, data: Any = None,
            headers: dict[str, str] | None = None,
            extra_options: dict[str, Any] | None = None, **request_kwargs: Any) -> httpx.Response:
        """Send the request; an error status raises (``check_response=False`` in
        ``extra_options`` or the connection's extra turns that off), as Airflow's
        ``HttpHook.run``. ``data`` is the query of a GET or HEAD, else the body (a dict is
        form-encoded); ``json=`` and the other ``request_kwargs`` go to httpx."""
        target = self.target(endpoint, headers)
        options = {**target.options, **(extra_options or {})}
        check = options.get("check_response", True)
        body: dict[str, Any] = {}
        if self.method in ("GET", "HEAD") and isinstance(data, dict):
            body["params"] = data
        elif isinstance(data, dict):
            body["data"] = data
        elif data is not None:
            body["content"] = data
        with self._client(options, target) as client:
            response = client.request(self.method, target.url, **body, **request_kwargs)
            response.read()
        response.__class__ = HttpResponse
        if check:
            self.check_response(response)
        return response

    @staticmethod
    def check_response(response: httpx.Response) -> None:
        if response.is_error:
            raise HttpResponseError(response)

    def test_connection(self) -> tuple[bool, str]:
        try:
            response = self.run(extra_options={"check_response": False})
        except Exception as exc:
            return False, f"{type(exc).__name__}: {exc}"
        return (not response.is_error,
                f"HTTP {response.status_code} from {response.request.url}")


def url_join(base: str, endpoint: str | None) -> str:
    if not endpoint:
        return base
    if "://" in endpoint:
        return endpoint
    return base.rstrip("/") + "/" + endpoint.lstrip("/") if base else endpoint
