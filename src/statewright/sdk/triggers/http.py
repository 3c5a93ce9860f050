"""``HttpTrigger``: poll an HTTP endpoint until it answers with a success status."""

from __future__ import annotations

import asyncio
import codecs
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from statewright.sdk.http_hook import HttpHook, url_join
from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent, classpath_of

__all__ = ["MAX_BODY_BYTES", "HttpTrigger"]

log = logging.getLogger(__name__)

#: The most of a response body an event carries (it is stored with the task instance).
MAX_BODY_BYTES = 64 * 1024

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class HttpTrigger(BaseTrigger):
    """Request ``url`` every ``poke_interval`` seconds until the response is a success.

    Success is any 2xx status, or one of ``success_status_codes`` when given; the event's
    payload is then ``{"status": <int>, "body": <text, at most 64 KiB>}``. A status in
    ``fail_on_status`` fires ``{"status": "error", "message": ..., "http_status": <int>}``
    at once. Any other status, a connection error or a timeout (``timeout_seconds`` per
    request) is logged and the polling goes on; the task's deferral timeout bounds the wait.

    With ``http_conn_id`` the URL is ``endpoint`` (or ``url``) under the connection's base URL,
    with its headers and basic auth (``HttpHook``), read in the triggerer when the trigger runs.

    ``data`` is sent as the request body: a dict as form fields, a string as is. Headers and
    data are stored encrypted with the trigger, so they may carry credentials.
    """

    def __init__(
        self,
        url: str | None = None,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        data: str | dict[str, str] | None = None,
        success_status_codes: list[int] | None = None,
        fail_on_status: list[int] | None = None,
        poke_interval: float = 5.0,
        timeout_seconds: float = 30,
        *,
        endpoint: str | None = None,
        http_conn_id: str | None = None,
    ) -> None:
        super().__init__()
        self.endpoint = endpoint
        self.http_conn_id = http_conn_id
        if http_conn_id is None and endpoint is not None and url is not None:
            url, self.endpoint = url_join(url, endpoint), None
        parts = urlsplit(str(url))
        if http_conn_id is None and (parts.scheme not in ("http", "https") or not parts.netloc):
            raise ValueError(f"HttpTrigger: url must be an http:// or https:// URL, got {url!r} "
                             "(or give http_conn_id)")
        if str(method).upper() not in _METHODS:
            raise ValueError(
                f"HttpTrigger: method {method!r} is not one of {', '.join(sorted(_METHODS))}"
            )
        if not poke_interval > 0:
            raise ValueError(f"HttpTrigger: poke_interval must be > 0 seconds, got {poke_interval}")
        if not timeout_seconds > 0:
            raise ValueError(
                f"HttpTrigger: timeout_seconds must be > 0 seconds, got {timeout_seconds}"
            )
        self.url = None if url is None else str(url)
        self.method = str(method).upper()
        self.headers = dict(headers) if headers else None
        self.data = data
        self.success_status_codes = (
            sorted(int(code) for code in success_status_codes) if success_status_codes else None
        )
        self.fail_on_status = sorted(int(code) for code in fail_on_status or ())
        self.poke_interval = float(poke_interval)
        self.timeout_seconds = float(timeout_seconds)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            classpath_of(self),
            {
                "url": self.url,
                "endpoint": self.endpoint,
                "http_conn_id": self.http_conn_id,
                "method": self.method,
                "headers": self.headers,
                "data": self.data,
                "success_status_codes": self.success_status_codes,
                "fail_on_status": self.fail_on_status,
                "poke_interval": self.poke_interval,
                "timeout_seconds": self.timeout_seconds,
            },
        )

    def is_success(self, status: int) -> bool:
        if self.success_status_codes is not None:
            return status in self.success_status_codes
        return 200 <= status < 300

    async def run(self) -> AsyncIterator[TriggerEvent]:
        body_args: dict[str, Any] = {}
        if isinstance(self.data, dict):
            body_args["data"] = self.data
        elif self.data is not None:
            body_args["content"] = str(self.data)
        attempt = 0
        auth = None
        if self.http_conn_id is not None:
            target = await asyncio.to_thread(
                HttpHook(self.method, http_conn_id=self.http_conn_id).target,
                self.endpoint or self.url, self.headers)
            self.url, self.headers, auth = target.url, target.headers, target.auth
        async with httpx.AsyncClient(timeout=self.timeout_seconds, follow_redirects=True,
                                     auth=auth) as client:
            while True:
                attempt += 1
                event = await self._poll_once(client, attempt, body_args)
                if event is not None:
                    yield event
                    return
                await asyncio.sleep(self.poke_interval)

    async def _poll_once(
        self, client: httpx.AsyncClient, attempt: int, body_args: dict[str, Any]
    ) -> TriggerEvent | None:
        where = f"{self.method} {self.url}"
        try:
            async with client.stream(
                self.method, self.url, headers=self.headers, **body_args
            ) as response:
                status = response.status_code
                if status in self.fail_on_status:
                    message = f"{where} returned HTTP {status}, which is in fail_on_status"
                    log.warning("trigger %s: %s", self.trigger_id, message)
                    return TriggerEvent(
                        {"status": "error", "message": message, "http_status": status}
                    )
                if not self.is_success(status):
                    log.info(
                        "trigger %s: %s returned HTTP %s (attempt %s); polling again in %ss",
                        self.trigger_id,
                        where,
                        status,
                        attempt,
                        self.poke_interval,
                    )
                    return None
                body = await _read_text(response, MAX_BODY_BYTES)
        except httpx.TransportError as exc:
            log.warning(
                "trigger %s: %s failed (attempt %s): %s: %s; polling again in %ss",
                self.trigger_id,
                where,
                attempt,
                type(exc).__name__,
                exc,
                self.poke_interval,
            )
            return None
        return TriggerEvent({"status": status, "body": body})


async def _read_text(response: httpx.Response, limit: int) -> str:
    """Decode at most ``limit`` bytes of the body, never splitting a character."""
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) >= limit:
            break
    truncated = len(raw) > limit or not response.is_stream_consumed
    decoder = codecs.getincrementaldecoder(response.encoding or "utf-8")(errors="replace")
    return decoder.decode(bytes(raw[:limit]), final=not truncated)
