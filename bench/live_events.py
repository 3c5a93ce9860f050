"""Live-update figures (not a test): the delay from a state change's commit (its history row's
``at``) to its arrival on ``--streams`` open ``/api/v1/events/stream`` connections, over
``--changes`` task-instance marks made through the REST API, on SQLite and (when reachable) on
PostgreSQL. Prints one JSON line: per database, the median, 95th percentile and maximum in ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from _cpu import host_speed, metered, totals
from sqlalchemy import create_engine, text

from statewright.api.server import make_server
from statewright.config import load_settings
from statewright.core.clock import utcnow
from statewright.db.engine import make_engine
from statewright.db.migrate import migrate
from statewright.sdk import DAG, EmptyOperator
from statewright.services.auth.accounts import create_token, create_user


def _listen(url: str, headers: dict[str, str], want: int, got: list[float],
            ready: threading.Event) -> None:
    with httpx.stream("GET", url, headers=headers, timeout=60) as res:
        for line in res.iter_lines():
            if line.startswith("retry:"):
                ready.set()
            elif line.startswith("data: "):
                at = datetime.fromisoformat(json.loads(line[6:])["at"])
                got.append((datetime.now().astimezone() - at).total_seconds() * 1000)
                if len(got) >= want:
                    return


def measure(database_url: str, home: Path, streams: int, changes: int) -> dict[str, Any]:
    settings = load_settings({"STATEWRIGHT_HOME": str(home), "STATEWRIGHT_DATABASE_URL":
                              database_url})
    engine = make_engine(database_url)
    migrate(engine)
    with DAG("bench_live") as dag:
        EmptyOperator(task_id="t")
    run_id = dag.test(engine=engine).run_id
    create_user(engine, "bench", "password-bench", "admin", utcnow())
    secret, _ = create_token(engine, "bench", kind="api", name="bench", now=utcnow(),
                             lifetime=None)
    headers = {"Authorization": f"Bearer {secret}"}
    server = make_server(engine, settings, host="127.0.0.1", port=0)
    thread = server.start_thread()
    base = server.url.rstrip("/")
    while True:
        try:
            httpx.get(base + "/api/v1/health", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    received: list[list[float]] = [[] for _ in range(streams)]
    readies = [threading.Event() for _ in range(streams)]
    listeners = [threading.Thread(target=_listen, args=(
        f"{base}/api/v1/events/stream?dag_id=bench_live", headers, changes, received[i],
        readies[i]), daemon=True) for i in range(streams)]
    for t in listeners:
        t.start()
    for r in readies:
        r.wait(10)
    url = f"{base}/api/v1/dags/bench_live/dagRuns/{run_id}/taskInstances/t"
    with httpx.Client(headers=headers, timeout=10) as client:
        for i in range(changes):
            client.patch(url, json={"new_state": "failed" if i % 2 == 0 else "success"})
            time.sleep(0.02)
    for t in listeners:
        t.join(30)
    server.stop()
    thread.join(10)
    engine.dispose()
    delays = sorted(d for got in received for d in got)
    return {"streams": streams, "changes": changes, "events": len(delays),
            "p50_ms": round(statistics.median(delays), 1),
            "p95_ms": round(delays[int(0.95 * (len(delays) - 1))], 1),
            "max_ms": round(delays[-1], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--changes", type=int, default=40)
    parser.add_argument("--postgres-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    host_speed()
    figures: dict[str, Any] = {"bench": "live_events"}
    # CPU per event delivered (each change on each stream), the server's set-up included.
    events = args.streams * args.changes
    with tempfile.TemporaryDirectory() as tmp:
        figures["sqlite"] = metered(None, events, "event", measure, f"sqlite:///{tmp}/bench.db",
                                    Path(tmp), args.streams, args.changes)
    try:
        admin = create_engine(args.postgres_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text("DROP DATABASE IF EXISTS bench_live_events"))
            conn.execute(text("CREATE DATABASE bench_live_events"))
        url = args.postgres_url.rsplit("/", 1)[0] + "/bench_live_events"
        with tempfile.TemporaryDirectory() as tmp:
            figures["postgresql"] = metered(url, events, "event", measure, url, Path(tmp),
                                            args.streams, args.changes)
        with admin.connect() as conn:
            conn.execute(text("DROP DATABASE IF EXISTS bench_live_events WITH (FORCE)"))
    except Exception as exc:  # a bench reports what it could not measure
        figures["postgresql"] = f"not measured: {type(exc).__name__}: {exc}"[:200]
    measured = sum(1 for v in figures.values() if isinstance(v, dict))
    figures.update(totals(figures, events * measured, "event"))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
