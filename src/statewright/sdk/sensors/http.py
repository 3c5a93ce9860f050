"""``HttpSensor``: wait until an HTTP endpoint answers with a success (httpx)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import httpx

from statewright.sdk.operators.python import determine_kwargs
from statewright.sdk.sensors.base import BaseSensor
from statewright.sdk.triggers.http import HttpTrigger

__all__ = ["HttpSensor"]

log = logging.getLogger("statewright.task")


class HttpSensor(BaseSensor):
    """Request ``url``; done on a 2xx answer for which ``response_check(response)`` (when given)
    is true. A status in ``response_error_codes_allowlist`` (404 by default) means "not yet";
    any other error status fails the try, as in Airflow.

    With ``deferrable=True`` the polling runs in the triggerer (``HttpTrigger``); on the event,
    ``response_check`` is applied to the answer the trigger saw, and the sensor defers again
    when it is false.
    """

    template_fields = ("url", "headers", "data")
    supports_deferral = True

    def __init__(
        self,
        *,
        url: str,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        data: str | dict[str, str] | None = None,
        response_check: Callable[..., Any] | None = None,
        response_error_codes_allowlist: Sequence[int] = (404,),
        request_timeout: float = 30.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.url = url
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
        log.info("Poking %s %s", self.method, self.url)
        with httpx.Client(timeout=self.request_timeout, follow_redirects=True) as client:
            response = client.request(self.method, self.url, headers=self.headers, **body)
        if response.status_code in self.response_error_codes_allowlist:
            return False
        if not response.is_success:
            raise RuntimeError(
                f"{self.method} {self.url} answered HTTP {response.status_code}: "
                f"{response.text[:200]}")
        return self._check(response, context)

    def _check(self, response: httpx.Response, context: Any) -> bool:
        if self.response_check is None:
            return True
        kwargs = determine_kwargs(self.response_check, [response], context)
        return bool(self.response_check(response, **kwargs))

    def execute_deferrable(self, context: Any) -> Any:
        self._defer()

    def _defer(self) -> None:
        self.defer(
            trigger=HttpTrigger(self.url, method=self.method, headers=self.headers,
                                data=self.data, poke_interval=max(self.poke_interval, 0.01),
                                timeout_seconds=self.request_timeout),
            method_name="execute_complete", timeout=timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: Any = None) -> Any:
        event = event or {}
        if event.get("status") == "error":
            raise RuntimeError(event.get("message") or f"{self.method} {self.url} failed")
        response = httpx.Response(int(event.get("status", 200)), text=event.get("body") or "")
        if not self._check(response, context):
            log.info("response_check is not yet satisfied; deferring again")
            self._defer()
        return None
