"""What every request and response goes through: a limit on request bodies, security headers
(a Content-Security-Policy without inline scripts), and CORS only for configured origins."""

from __future__ import annotations

import json

from fastapi import FastAPI
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


def too_large(limit: int) -> str:
    return (f"The request body is larger than {limit} bytes (STATEWRIGHT_API_MAX_BODY_BYTES). "
            "Nothing was changed.")


class BodyLimit:
    """Answers 413 (JSON) for a body over ``limit`` bytes: at once by its Content-Length, else
    once a streamed body passes the limit. The body is read before the app runs (it is at most
    ``limit`` bytes), so nothing of an oversized request reaches a route."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def _reject(self, send: Send) -> None:
        body = json.dumps({"detail": too_large(self.limit)}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await self._reject(send)
            return
        if length is not None or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)  # the server stops at Content-Length
            return
        messages: list[Message] = []
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            seen += len(message.get("body", b""))
            if seen > self.limit:
                await self._reject(send)
                return
            if not message.get("more_body", False):
                break

        async def _replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, _replay, send)


def install_outer(app: FastAPI, settings: Settings) -> None:
    """CORS (only when origins are configured), then the security headers on every response
    (outermost, so that every answer carries them)."""
    if settings.api_cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.api_cors_origins),
                           allow_credentials=False, allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(SecurityHeaders)
