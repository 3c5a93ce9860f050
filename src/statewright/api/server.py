"""Serving the app with uvicorn: in the foreground (``api-server``) or in a thread
(``standalone``). The socket is bound before anything starts, so a port in use is a clear
error at once, not a log line in a thread."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass

import uvicorn
from sqlalchemy import Engine

from statewright.api.app import create_app
from statewright.config import Settings
from statewright.core.errors import ConfigurationError


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a ConfigurationError saying what to change."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigurationError(
            f"Cannot serve the API on {host}:{port}: the host is not known ({exc}). Set "
            "STATEWRIGHT_API_HOST (or --host) to e.g. 127.0.0.1 or 0.0.0.0.") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(
            f"Cannot serve the API on {host}:{port}: {exc.strerror}. Another program may be "
            "using the port: set STATEWRIGHT_API_PORT (or --port) to a free one.") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


@dataclass
class ApiServer:
    """A uvicorn server on an already-bound socket."""

    server: uvicorn.Server
    sock: socket.socket
    url: str
    streams_stop: threading.Event | None = None
    """Set on stop: open event streams end, so the server does not wait for them."""

    def run(self) -> None:
        self.server.run(sockets=[self.sock])

    def start_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name="api-server", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        if self.streams_stop is not None:
            self.streams_stop.set()
        self.server.should_exit = True


def make_server(engine: Engine, settings: Settings, *, host: str | None = None,
                port: int | None = None, log_level: str = "warning") -> ApiServer:
    host = settings.api_host if host is None else host
    port = settings.api_port if port is None else port
    sock = bind(host, port)
    app = create_app(engine=engine, settings=settings)
    app.state.streams_stop = threading.Event()
    # Forwarded headers are believed only from STATEWRIGHT_API_TRUSTED_PROXIES (the app's
    # TrustedProxies), never from uvicorn's default 127.0.0.1, where the server binds.
    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="off",
                            proxy_headers=False, forwarded_allow_ips="")
    bound_port = sock.getsockname()[1]  # port 0 asks the system for a free one
    return ApiServer(uvicorn.Server(config), sock, url_of(host, bound_port),
                     app.state.streams_stop)


def start_api_thread(engine: Engine, settings: Settings, stop: threading.Event
                     ) -> tuple[threading.Thread, str]:
    """Serve the API in a daemon thread until ``stop`` is set; returns the thread and the URL."""
    api = make_server(engine, settings)
    thread = api.start_thread()

    def _watch() -> None:
        stop.wait()
        api.stop()

    threading.Thread(target=_watch, name="api-server-stop", daemon=True).start()
    return thread, api.url
