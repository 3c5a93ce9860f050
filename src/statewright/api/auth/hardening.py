"""What every request and response goes through: a limit on request bodies, security headers
(a Content-Security-Policy without inline scripts, on every answer, a 500 too), CORS only for
configured origins, and forwarded headers believed only from configured proxies."""

from __future__ import annotations

import ipaddress
import json

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from statewright.config import Settings

INTERNAL_ERROR = ("Internal server error: the server failed to answer this request; its log "
                  "has the details. Nothing may have been changed; try again or report it.")

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

        started = False

        async def _send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": with_security_headers(
                    list(message.get("headers", [])))}
            await send(message)

        try:
            await self.app(scope, receive, _send)
        except Exception:
            if not started:  # answer the 500 here, with the headers; the server logs the error
                body = json.dumps({"detail": INTERNAL_ERROR}).encode()
                await _send({"type": "http.response.start", "status": 500, "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())]})
                await _send({"type": "http.response.body", "body": body})
            raise


def with_security_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    present = {k.lower() for k, _ in headers}
    if b"content-security-policy" not in present:
        headers.append((b"content-security-policy", CSP.encode()))
    for key, value in HEADERS.items():
        if key.lower().encode() not in present:
            headers.append((key.lower().encode(), value.encode()))
    return headers


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_proxies(values: tuple[str, ...]) -> tuple[Network, ...]:
    """``STATEWRIGHT_API_TRUSTED_PROXIES``: addresses or networks (``10.0.0.0/8``)."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value, strict=False))
        except ValueError:
            raise ValueError(f"STATEWRIGHT_API_TRUSTED_PROXIES: {value!r} is not an address or "
                             "a network such as 10.0.0.0/8.") from None
    return tuple(networks)


def _trusted(address: str, proxies: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def forwarded_client(peer: str, forwarded_for: list[str], proxies: tuple[Network, ...]
                     ) -> str:
    """The client behind trusted proxies: the last address of X-Forwarded-For that is not a
    trusted proxy (what an untrusted sender put before it is never believed)."""
    if not _trusted(peer, proxies):
        return peer
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, proxies):
            return hop if _is_address(hop) else peer
    return hops[0] if hops else peer


def _is_address(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


class TrustedProxies:
    """Sets the request's client (and scheme) from X-Forwarded-For (and -Proto) when, and only
    when, the connection comes from a configured proxy; otherwise the peer is the client."""

    def __init__(self, app: ASGIApp, proxies: tuple[Network, ...]) -> None:
        self.app, self.proxies = app, proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client and self.proxies \
                and _trusted(client[0], self.proxies):
            headers = scope.get("headers", [])
            hops = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-for"]
            scope = dict(scope)
            scope["client"] = (forwarded_client(client[0], hops, self.proxies), 0)
            proto = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-proto"]
            last = proto[-1].split(",")[-1].strip().lower() if proto else ""
            if last in ("http", "https"):
                scope["scheme"] = last if scope["type"] == "http" else (
                    "wss" if last == "https" else "ws")
        await self.app(scope, receive, send)


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
    (so that every answer carries them), then, outermost, the client behind trusted proxies
    (so that the audit log and the login limits see the real peer)."""
    if settings.api_cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.api_cors_origins),
                           allow_credentials=False, allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(SecurityHeaders)
    proxies = parse_proxies(settings.api_trusted_proxies)
    if proxies:
        app.add_middleware(TrustedProxies, proxies=proxies)
