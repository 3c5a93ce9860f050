"""Login hardening (issue 36, part 4): attempts are counted before the password is checked
(atomically, on SQLite and PostgreSQL, across API servers), password checks are bounded and off
the event loop, forwarded headers are believed only from configured proxies, delays grow per
account and address instead of a lockout anyone can trigger, and the audit log has the real
peer."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import Engine, select

from statewright.api import create_app
from statewright.api.server import make_server
from statewright.config import Settings
from statewright.db.engine import make_engine, read_snapshot
from statewright.db.tables_auth import audit_log

Headers = Callable[..., dict[str, str]]
TOKEN = "/api/v1/auth/token"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The first wait a minute long: a slow machine never outlasts it between two attempts."""
    return settings.with_overrides(login_backoff_seconds=60)


def _client(app: FastAPI, address: str = "127.0.0.1") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(address, 40000)),
                             base_url="http://testserver")


async def _burst(apps: list[FastAPI], n: int, username: str, password: str,
                 address: str = "127.0.0.1") -> list[int]:
    clients = [_client(app, address) for app in apps]
    try:
        results = await asyncio.gather(*(
            clients[i % len(clients)].post(TOKEN, json={"username": username,
                                                        "password": password})
            for i in range(n)))
    finally:
        for c in clients:
            await c.aclose()
    return [r.status_code for r in results]


def _login(app: FastAPI, username: str, password: str, address: str) -> httpx.Response:
    async def go() -> httpx.Response:
        async with _client(app, address) as c:
            return await c.post(TOKEN, json={"username": username, "password": password})

    return asyncio.run(go())


def _addresses(engine: Engine) -> list[str | None]:
    with read_snapshot(engine) as conn:
        return [r.client_address for r in conn.execute(
            select(audit_log.c.client_address).where(audit_log.c.action.like("auth.login%")))]


def test_concurrent_guesses_past_the_limit_are_refused_before_any_password_check(
        engine: Engine, settings: Settings, auth_headers: Headers) -> None:
    auth_headers(engine, "alice", "viewer")
    app = create_app(engine=engine, settings=settings)
    codes = asyncio.run(_burst([app], 20, "alice", "wrong-guess"))
    assert sorted(codes) == [401] * 5 + [429] * 15, codes  # limit 5: five evaluated, not 20


def test_two_api_servers_on_postgresql_share_the_count(
        pg_engine: Engine, postgres_url: str, settings: Settings, auth_headers: Headers) -> None:
    auth_headers(pg_engine, "alice", "viewer")
    other = make_engine(postgres_url)
    try:
        apps = [create_app(engine=pg_engine, settings=settings),
                create_app(engine=other, settings=settings)]
        codes = asyncio.run(_burst(apps, 20, "alice", "wrong-guess"))
    finally:
        other.dispose()
    assert sorted(codes) == [401] * 5 + [429] * 15, codes


def test_the_right_password_from_another_address_works_while_an_attacker_waits(
        engine: Engine, settings: Settings, auth_headers: Headers) -> None:
    auth_headers(engine, "alice", "viewer")
    app = create_app(engine=engine, settings=settings)
    attacker = [_login(app, "alice", "wrong-guess", "203.0.113.9").status_code
                for _ in range(8)]
    assert attacker == [401] * 5 + [429] * 3
    limited = _login(app, "alice", "password-alice", "203.0.113.9")
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert _login(app, "alice", "password-alice", "198.51.100.7").status_code == 201
    # the right password resets the account's count from that address only
    assert _login(app, "alice", "wrong-guess", "198.51.100.7").status_code == 401


def test_password_spraying_from_one_address_is_slowed_across_accounts(
        engine: Engine, settings: Settings) -> None:
    app = create_app(engine=engine, settings=settings.with_overrides(
        login_max_failures_per_address=4))
    codes = [_login(app, f"user{i}", "wrong-guess", "203.0.113.9").status_code
             for i in range(6)]
    assert codes == [401] * 4 + [429] * 2
    assert _login(app, "user9", "wrong-guess", "198.51.100.7").status_code == 401


def test_password_checks_run_off_the_event_loop_at_most_n_at_a_time(
        engine: Engine, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.services.auth import accounts

    running, most, lock = 0, 0, threading.Lock()
    started = threading.Event()

    def counting(password_hash: str | None, password: str) -> bool:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        started.set()
        time.sleep(0.02)  # the work of a hash: lets the checks overlap if they may
        with lock:
            running -= 1
        return False

    monkeypatch.setattr(accounts, "verify_password", counting)
    app = create_app(engine=engine, settings=settings.with_overrides(
        login_hash_concurrency=2, login_max_failures_per_address=1000))

    async def go() -> list[int]:
        async with _client(app) as c:
            logins = [asyncio.ensure_future(c.post(TOKEN, json={
                "username": f"user{i}", "password": "wrong-guess"})) for i in range(10)]
            while not started.is_set():
                await asyncio.sleep(0)
            health = await c.get("/api/v1/health")  # answered while the checks queue
            assert health.status_code == 200
            return [r.status_code for r in await asyncio.gather(*logins)]

    assert asyncio.run(go()) == [401] * 10
    assert most == 2, most  # today: as many at once as the thread pool has threads


@pytest.fixture
def served(engine: Engine, settings: Settings) -> Iterator[str]:
    server = make_server(engine, settings, host="127.0.0.1", port=0)
    thread = server.start_thread()
    url = server.url.rstrip("/")
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(url + "/api/v1/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the API server did not start"
        time.sleep(0.05)
    try:
        yield url
    finally:
        server.stop()
        thread.join(10)


def test_a_rotated_x_forwarded_for_neither_escapes_the_limit_nor_forges_the_audit_log(
        served: str, engine: Engine, auth_headers: Headers) -> None:
    auth_headers(engine, "alice", "viewer")
    codes = [httpx.post(served + TOKEN, json={"username": "alice", "password": "wrong-guess"},
                        headers={"X-Forwarded-For": f"10.0.0.{i}"}, timeout=10).status_code
             for i in range(7)]
    assert codes == [401] * 5 + [429] * 2
    assert set(_addresses(engine)) == {"127.0.0.1"}


def test_a_configured_proxy_s_forwarded_address_is_the_client(
        engine: Engine, settings: Settings, auth_headers: Headers) -> None:
    auth_headers(engine, "alice", "viewer")
    app = create_app(engine=engine, settings=settings.with_overrides(
        api_trusted_proxies=("10.1.0.0/16",)))

    async def go() -> list[Any]:
        out = []
        for peer, forwarded in (("10.1.2.3", "198.51.100.7"),
                                ("10.1.2.3", "6.6.6.6, 198.51.100.8, 10.1.9.9"),
                                ("192.0.2.1", "198.51.100.9")):
            async with _client(app, peer) as c:
                out.append(await c.post(TOKEN, headers={"X-Forwarded-For": forwarded},
                                        json={"username": "alice", "password": "wrong"}))
        return out

    assert [r.status_code for r in asyncio.run(go())] == [401, 401, 401]
    assert sorted(_addresses(engine)) == ["192.0.2.1", "198.51.100.7", "198.51.100.8"]


def test_forwarded_client_takes_the_last_address_no_trusted_proxy_added() -> None:
    from statewright.api.auth.hardening import forwarded_client, parse_proxies

    proxies = parse_proxies(("10.0.0.0/8", "fd00::1"))
    assert forwarded_client("10.0.0.1", ["1.1.1.1, 2.2.2.2"], proxies) == "2.2.2.2"
    assert forwarded_client("10.0.0.1", ["1.1.1.1", "2.2.2.2, 10.3.3.3"], proxies) == "2.2.2.2"
    assert forwarded_client("8.8.8.8", ["1.1.1.1"], proxies) == "8.8.8.8"
    assert forwarded_client("10.0.0.1", [], proxies) == "10.0.0.1"
    assert forwarded_client("10.0.0.1", ["not-an-ip"], proxies) == "10.0.0.1"
    assert forwarded_client("fd00::1", ["2001:db8::5"], proxies) == "2001:db8::5"
    assert parse_proxies(()) == ()
    with pytest.raises(ValueError, match="not an address"):
        parse_proxies(("example.com",))
