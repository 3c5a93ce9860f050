"""Login-burst figures (not a test): ``/api/v1/health`` latency on a real API server (uvicorn,
SQLite) while ``--logins`` bad logins for distinct users arrive at once, against its latency
when idle. Prints one JSON line: health median and maximum in ms, idle and under the burst, and
how long the burst took to be answered (401s and 429s)."""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _cpu import CpuMeter, host_speed

from statewright.api.server import make_server
from statewright.config import load_settings
from statewright.db.engine import make_engine
from statewright.db.migrate import migrate


async def _health(c: httpx.AsyncClient, n: int) -> list[float]:
    took = []
    for _ in range(n):
        start = time.perf_counter()
        res = await c.get("/api/v1/health")
        res.raise_for_status()
        took.append((time.perf_counter() - start) * 1000)
        await asyncio.sleep(0.02)
    return took


async def _burst(base: str, logins: int, samples: int) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=logins + 4)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as c:
        idle = await _health(c, samples)
        start = time.perf_counter()
        posts = [asyncio.ensure_future(c.post("/api/v1/auth/token", json={
            "username": f"user{i}", "password": "wrong-password"})) for i in range(logins)]
        busy = await _health(c, samples)
        codes = [r.status_code for r in await asyncio.gather(*posts)]
        burst = (time.perf_counter() - start) * 1000
    return {"health_idle_ms": {"median": round(statistics.median(idle), 1),
                               "max": round(max(idle), 1)},
            "health_during_burst_ms": {"median": round(statistics.median(busy), 1),
                                       "max": round(max(busy), 1)},
            "burst_answered_ms": round(burst), "answers": {str(k): codes.count(k)
                                                         for k in sorted(set(codes))}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--logins", type=int, default=32)
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    host_speed()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        url = f"sqlite:///{home / 'bench.db'}"
        settings = load_settings({"STATEWRIGHT_HOME": str(home), "STATEWRIGHT_DATABASE_URL": url,
                                  "STATEWRIGHT_LOGIN_MAX_FAILURES_PER_ADDRESS": "1000"})
        engine = make_engine(url)
        migrate(engine)
        server = make_server(engine, settings, host="127.0.0.1", port=0)
        thread = server.start_thread()
        base = server.url.rstrip("/")
        while True:
            try:
                if httpx.get(base + "/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        try:
            with CpuMeter() as cpu:
                figures = asyncio.run(_burst(base, args.logins, args.samples))
        finally:
            server.stop()
            thread.join(10)
            engine.dispose()
    bound = getattr(settings, "login_hash_concurrency", None)  # None: a build without the bound
    print(json.dumps({"bench": "login_burst", "logins": args.logins, "hash_concurrency": bound,
                      **figures, **cpu.figures(args.logins, "login")}))  # the hashes dominate


if __name__ == "__main__":
    main()
