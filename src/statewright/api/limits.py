"""The input limits at the API's edge (``core.limits``): every JSON body, before it is parsed,
and the values a route stores (a run's ``conf``, params, a HITL response), each answered 422
naming the limit that was passed."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from statewright.api.errors import BadRequest
from statewright.core.limits import DEFAULT_LIMITS, InputLimits, InputTooLarge, check_json_text
from statewright.core.limits import check_value as _check_value

_IN_THREAD_BYTES = 65_536


def limits_of(request: Request) -> InputLimits:
    settings = getattr(request.app.state, "settings", None)
    return getattr(settings, "input_limits", DEFAULT_LIMITS)


def check_input(request: Request, value: Any, what: str) -> None:
    """422 when ``value`` (sent as ``what``, e.g. "conf") passes one of the input limits."""
    try:
        _check_value(value, limits_of(request), what=what)
    except InputTooLarge as exc:
        raise BadRequest(f"Invalid request: {exc}") from None


class JsonBodyLimits:
    """Checks a JSON body's depth and items before any route parses it: 422 naming the limit.
    (Its size is ``BodyLimit``'s, outside this one.)"""

    def __init__(self, app: ASGIApp, limits: InputLimits) -> None:
        self.app, self.limits = app, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS") \
                or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        chunks: list[bytes] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            if len(body) > _IN_THREAD_BYTES:  # ~100 ms a MiB: not on the event loop
                await run_in_threadpool(check_json_text, body, self.limits)
            else:
                check_json_text(body, self.limits)
        except InputTooLarge as exc:
            await _reject(send, f"Invalid request: {exc}")
            return

        async def _replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, _replay, send)


def _is_json(scope: Scope) -> bool:
    """A JSON body, or one without a content type (the API parses that as JSON too)."""
    for key, value in scope.get("headers", []):
        if key == b"content-type":
            return b"json" in value.lower()
    return True


async def _reject(send: Send, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": 422,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
