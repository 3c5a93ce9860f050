"""``HttpSensor``: wait until an HTTP endpoint answers with a success (httpx)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import httpx

from statewright.sdk.http_hook import HttpHook, HttpTarget, url_join
from statewright.sdk.operators.python import determine_kwargs
from statewright.sdk.sensors.base import BaseSensor
from statewright.sdk.triggers.http import HttpTrigger

__all__ = ["HttpSensor"]

log = logging.getLogger("statewright.task")


class HttpSensor(BaseSensor):
    """Request ``url`` (or ``endpoint`` under the base URL of the connection ``http_conn_id``,
    see ``HttpHook``); done on a 2xx answer for which ``response_check(response)`` (when given)
    is true. A status in ``response_error_codes_allowlist`` (404 by default) means "not yet";
    any other error status fails the try, as in Airflow.

    With ``deferrable=True`` the polling runs in the triggerer (``HttpTrigger``); on the event,
    ``response_check`` is applied to the answer the trigger saw, and the sensor defers again
    when it is false.
    """

    template_fields = ("url", "endpoint", "headers", "data")
    supports_deferral = True

    def __init__(
        self,
        *,
        url: str | None = None,
        endpoint: str | None = None,
        http_conn_id: str | None = None,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        data: str | dict[str, str] | None = None,
        response_check: Callable[..., Any] | None = None,
        response_error_codes_allowlist: Sequence[int] = (404,),
        request_timeout: float = 30.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if url is None and http_conn_id is None:
            raise ValueError(f"HttpSensor {self.task_id!r}: give url, or http_conn_id (and "
                             "endpoint)")
        self.url = url
        self.endpoint = endpoint
        self.http_conn_id = http_conn_id
        self.method = method.upper()
        self.headers = dict(headers) if headers else None
        self.data = data
        self.response_check = response_check
        self.response_error_codes_allowlist = [int(c) for c in response_error_codes_allowlist]
        self.request_timeout = float(request_timeout)

    def poke(self, context: Any) -> bool:
        body: dict[str, Any] = {}
        if isinstance(self.data, dict):
            body["data"] = self.data
        elif self.data is not None:
            body["content"] = str(self.data)
        target = self._target()
        log.info("Poking %s %s", self.method, target.url)
        with httpx.Client(timeout=self.request_timeout, follow_redirects=True) as client:
            response = client.request(self.method, target.url, headers=target.headers,
                                      auth=target.auth, **body)
        if response.status_code in self.response_error_codes_allowlist:
            return False
        if not response.is_success:
            raise RuntimeError(
                f"{self.method} {target.url} answered HTTP {response.status_code}: "
                f"{response.text[:200]}")
        return self._check(response, context)

    def _target(self) -> HttpTarget:
        if self.http_conn_id is None:
            return HttpTarget(url=url_join(str(self.url), self.endpoint),
                              headers=dict(self.headers or {}))
        return HttpHook(self.method, http_conn_id=self.http_conn_id).target(
            self.endpoint or self.url, self.headers)

    def _check(self, response: httpx.Response, context: Any) -> bool:
        if self.response_check is None:
            return True
        kwargs = determine_kwargs(self.response_check, [response], context)
        return bool(self.response_check(response, **kwargs))

    def execute_deferrable(self, context: Any) -> Any:
        self._defer()

    def _defer(self) -> None:
        self.defer(
            trigger=HttpTrigger(self.url, endpoint=self.endpoint,
                                http_conn_id=self.http_conn_id, method=self.method,
                                headers=self.headers, data=self.data,
                                poke_interval=max(self.poke_interval, 0.01),
                                timeout_seconds=self.request_timeout),
            method_name="execute_complete", timeout=timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: Any = None) -> Any:
        event = event or {}
        if event.get("status") == "error":
            raise RuntimeError(event.get("message")
                               or f"{self.method} {self.url or self.endpoint} failed")
        response = httpx.Response(int(event.get("status", 200)), text=event.get("body") or "")
        if not self._check(response, context):
            log.info("response_check is not yet satisfied; deferring again")
            self._defer()
        return None
