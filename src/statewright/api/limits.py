"""The input limits at the API's edge (``core.limits``): every JSON body, before it is parsed,
and the values a route stores (a run's ``conf``, params, a HITL response), each answered 422
naming the limit that was passed."""

from __future__ import annotations

import json
import math
import re
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
    """Checks a body's depth and items before any route parses it (a form's neither): 422
    naming the limit; and refuses a NUL character in the path, the query or the body (422),
    which no text column of PostgreSQL can hold. (The size is ``BodyLimit``'s, outside.)"""

    def __init__(self, app: ASGIApp, limits: InputLimits) -> None:
        self.app, self.limits = app, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\x00" in scope.get("path", "") or _NUL_IN_FORM.search(scope.get("query_string", b"")):
            await _reject(send, _NUL_DETAIL.format(where="the URL"))
            return
        if scope.get("method") in ("GET", "HEAD", "OPTIONS"):
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
        if len(body) > _IN_THREAD_BYTES:  # ~100 ms a MiB: not on the event loop
            problem = await run_in_threadpool(self._problem, body, _content_type(scope))
        else:
            problem = self._problem(body, _content_type(scope))
        if problem is not None:
            await _reject(send, problem)
            return

        async def _replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, _replay, send)

    def _problem(self, body: bytes, content_type: bytes) -> str | None:
        """Why ``body`` is refused, or None."""
        if content_type.startswith(_FORMS[1]):
            return None  # a multipart body may carry any bytes; no route takes one
        form = content_type.startswith(_FORMS[0])
        if (_NUL_IN_FORM if form else _NUL_IN_JSON).search(body):
            return _NUL_DETAIL.format(where="the body")
        if form:
            return None
        try:
            check_json_text(body, self.limits)
        except InputTooLarge as exc:
            return f"Invalid request: {exc}"
        return _not_storable(body)


def _not_storable(body: bytes) -> str | None:
    """Why a JSON text that Python's parser takes cannot be stored as JSON, or None: a lone
    surrogate escape (no UTF-8 for it), NaN or an infinite number (not JSON; PostgreSQL
    refuses them, SQLite would keep what no client reads back)."""
    if _LONE_SURROGATE.search(body):
        return _STORABLE_DETAIL.format(what="a lone surrogate escape (\\ud800-\\udfff)")
    if not _MAYBE_NOT_A_NUMBER.search(body):
        return None
    bare = _JSON_STRING.sub(b'""', body)
    if _NOT_A_NUMBER.search(bare) or any(
            math.isinf(float(n)) for n in _EXPONENT_NUMBER.findall(bare)):
        return _STORABLE_DETAIL.format(what="NaN or an infinite number")
    return None


_NUL_DETAIL = ("Invalid request: {where} holds a NUL character (\\u0000), which no stored "
               "name or text may hold. Nothing was changed.")
_NUL_IN_FORM = re.compile(rb"%00|\x00")
_NUL_IN_JSON = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000|\x00")


_STORABLE_DETAIL = ("Invalid request: the body holds {what}, which a stored JSON value cannot "
                    "hold. Nothing was changed.")
_LONE_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})|"
                             rb"(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_MAYBE_NOT_A_NUMBER = re.compile(rb"NaN|Infinity|[0-9][eE]")
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_A_NUMBER = re.compile(rb"NaN|Infinity")
_EXPONENT_NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?[eE][+-]?[0-9]+")

_FORMS = (b"application/x-www-form-urlencoded", b"multipart/form-data")


def _content_type(scope: Scope) -> bytes:
    """The body's content type, lower case. Only a form is never read as JSON: any other body
    may be (a route's ``request.json()`` parses it whatever it says), so it is checked."""
    for key, value in scope.get("headers", []):
        if key == b"content-type":
            return bytes(value).lower().lstrip()
    return b""


async def _reject(send: Send, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": 422,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
