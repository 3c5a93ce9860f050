"""``HttpHook``: HTTP requests to the base URL of an ``http`` connection (httpx).

As Airflow's: the base URL is the connection's host when it carries a scheme, else
``{schema or "http"}://{host}``, with ``:{port}`` when set; a login and password become basic
authentication; the extra's keys are sent as headers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from statewright.sdk.basehook import BaseHook

__all__ = ["HttpHook", "HttpTarget"]


@dataclass(frozen=True)
class HttpTarget:
    """What a request needs from the connection: its URL, headers and basic auth."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    auth: tuple[str, str] | None = None


class HttpHook(BaseHook):
    conn_name_attr = "http_conn_id"
    default_conn_name = "http_default"
    conn_types = ("http", "https")
    hook_name = "HTTP"

    def __init__(self, method: str = "POST", http_conn_id: str = default_conn_name,
                 timeout: float = 30.0) -> None:
        super().__init__()
        self.method = method.upper()
        self.http_conn_id = http_conn_id
        self.timeout = timeout
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
        merged = {str(k): str(v) for k, v in conn.extra_dejson.items()}
        merged.update(headers or {})
        auth = (conn.login, conn.password or "") if conn.login else None
        return HttpTarget(url=url_join(base, endpoint), headers=merged, auth=auth)

    def get_conn(self, headers: dict[str, str] | None = None) -> httpx.Client:
        target = self.target(None, headers)
        return httpx.Client(base_url=target.url, headers=target.headers, auth=target.auth,
                            timeout=self.timeout, follow_redirects=True)

    def run(self, endpoint: str | None = None, data: Any = None,
            headers: dict[str, str] | None = None,
            extra_options: dict[str, Any] | None = None, **request_kwargs: Any) -> httpx.Response:
        """Send the request; an error status raises (``check_response=False`` in
        ``extra_options`` turns that off), as Airflow's ``HttpHook.run``."""
        options = dict(extra_options or {})
        check = options.pop("check_response", True)
        target = self.target(endpoint, headers)
        body: dict[str, Any] = {}
        if self.method in ("GET", "HEAD") and isinstance(data, dict):
            body["params"] = data
        elif isinstance(data, dict):
            body["data"] = data
        elif data is not None:
            body["content"] = data
        with httpx.Client(timeout=options.pop("timeout", self.timeout),
                          follow_redirects=True) as client:
            response = client.request(self.method, target.url, headers=target.headers,
                                      auth=target.auth, **body, **request_kwargs)
        if check:
            self.check_response(response)
        return response

    @staticmethod
    def check_response(response: httpx.Response) -> None:
        if response.is_error:
            raise RuntimeError(f"{response.request.method} {response.request.url} answered "
                               f"HTTP {response.status_code}: {response.text[:200]}")

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
