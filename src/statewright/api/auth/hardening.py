"""What every response and request goes through: security headers (a Content-Security-Policy
without inline scripts), CORS only for configured origins, and a limit on request bodies."""

from __future__ import annotations

import json

from fastapi import FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from statewright.config import Settings

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class SecurityHeaders:
    """Adds the CSP and the other headers unless a route set its own CSP (the API docs)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def _send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", CSP.encode()))
                for key, value in HEADERS.items():
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, _send)


class _TooLarge(StarletteHTTPException):
    """Raised while a streamed body is read: the app's handler answers 413 with its detail."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _too_large(limit))


def _too_large(limit: int) -> str:
    return (f"The request body is larger than {limit} bytes (STATEWRIGHT_API_MAX_BODY_BYTES). "
            "Nothing was changed.")


class BodyLimit:
    """Answers 413 for a body over ``limit`` bytes: at once by its Content-Length, or as soon
    as a streamed body passes the limit (nothing of it reaches a route)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def _reject(self, send: Send) -> None:
        body = json.dumps({"detail": _too_large(self.limit)})
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body.encode()})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await self._reject(send)
            return
        seen, started = 0, False

        async def _receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge(self.limit)
            return message

        async def _send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, _receive, _send)
        except _TooLarge:
            if started:
                raise
            await self._reject(send)


def install_outer(app: FastAPI, settings: Settings) -> None:
    """CORS (only when origins are configured), then the security headers on every response
    (outermost, so that every answer carries them)."""
    if settings.api_cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.api_cors_origins),
                           allow_credentials=False, allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(SecurityHeaders)
