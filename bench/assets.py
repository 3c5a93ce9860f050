"""Event-driven scheduling figures (not a test).

(a) latency from a producer task's success (its end) to the start of the consumer DAG's
    asset-triggered run (queued -> running), median over ``--repeats`` producer runs, with the
    scheduler running its loop in a thread (it wakes on the success) and the in-process executor;
(b) events per second one triggerer turns into asset events from a Redis stream (an
    ``AssetWatcher`` with ``RedisStreamTrigger``; ``--messages`` messages added at once);
(c) 1,000 DAGs each scheduled on its own asset, 1,000 events recorded at once (one
    transaction): the time until every consumer run has started, scheduler loops back to back.

(a) and (c) run on SQLite and, when ``--postgres-url`` is given (default: the local server), on
PostgreSQL. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis
from _cpu import host_speed, metered, totals
from sqlalchemy import Engine, create_engine, func, select, text

from statewright.core.transitions import Actor
from statewright.crypto import generate_key, load_fernet
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories.asset_events import NewAssetEvent, record
from statewright.db.tables import dag_run, task_instance
from statewright.db.tables_assets import asset_event
from statewright.sdk import DAG, Asset, AssetWatcher
from statewright.sdk.operators import EmptyOperator
from statewright.sdk.triggers.watchers import RedisStreamTrigger
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.scheduler.steps import scheduling_steps
from statewright.services.triggerer import TriggererConfig, TriggererJob
from statewright.services.worker.deferral import install_cipher

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


class _NoSlots:
    """An executor with no free slot: runs start, their tasks stay where they are."""

    def slots_available(self) -> int:
        return 0

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        raise AssertionError("no slot was offered")


def _sync(engine: Engine, dags: Sequence[DAG], folder: str) -> None:
    path = folder + "/dags.py"
    with transaction(engine) as conn:
        sync = FileSync(conn, now=datetime.now(UTC), folder_prefix=folder, present_files={path},
                        paused_at_creation=False)
        sync.file(path, ImportOutcome(path, dags=[d.serialize() for d in dags]), mtime=0.0,
                  size=0, content_hash="x")


def latency(engine: Engine, repeats: int) -> dict[str, float]:
    asset = Asset("s3://bench/latency")
    with DAG("lat_producer", schedule=None) as producer:
        EmptyOperator(task_id="write", outlets=[asset])
    with DAG("lat_consumer", schedule=[asset], max_active_runs=10_000) as consumer:
        EmptyOperator(task_id="read")
    _sync(engine, [producer, consumer], "/bench/latency")
    views = DagViewCache()
    executor = InProcessExecutor(engine, dags={"lat_producer": producer,
                                               "lat_consumer": consumer}, views=views)
    scheduler = Scheduler(engine, executor, views=views, config=SchedulerConfig(idle_seconds=1.0),
                          extra_steps=scheduling_steps())
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    samples: list[float] = []
    try:
        for i in range(repeats):
            with transaction(engine) as conn:
                trigger_dag(conn, "lat_producer", now=datetime.now(UTC), actor=Actor.USER,
                            run_id=f"bench_{i}")
            scheduler.wake()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                started = _consumer_starts(engine)
                if len(started) > i:
                    with engine.connect() as conn:
                        done = conn.execute(select(task_instance.c.end_date).where(
                            task_instance.c.dag_id == "lat_producer",
                            task_instance.c.run_id == f"bench_{i}")).scalar()
                    samples.append((started[i] - done).total_seconds() * 1000)
                    break
                time.sleep(0.002)
    finally:
        stop.set()
        scheduler.wake()
        thread.join(10)
    return {"median_ms": round(statistics.median(samples), 1),
            "p90_ms": round(sorted(samples)[int(len(samples) * 0.9) - 1], 1),
            "samples": len(samples)}


def _consumer_starts(engine: Engine) -> list[datetime]:
    with engine.connect() as conn:
        return list(conn.execute(select(dag_run.c.start_date).where(
            dag_run.c.dag_id == "lat_consumer", dag_run.c.start_date.is_not(None))
            .order_by(dag_run.c.id)).scalars())


def fan_out(engine: Engine, n: int) -> dict[str, float]:
    assets = [Asset(f"s3://bench/fan/{i:04d}") for i in range(n)]
    dags = []
    for i, a in enumerate(assets):
        with DAG(f"fan_{i:04d}", schedule=[a]) as d:
            EmptyOperator(task_id="t")
        dags.append(d)
    _sync(engine, dags, "/bench/fan")
    scheduler = Scheduler(engine, _NoSlots(), config=SchedulerConfig(idle_seconds=0.0,
                                                                      max_runs_to_start=n),
                          extra_steps=scheduling_steps())
    t0 = time.perf_counter()
    at = datetime.now(UTC)
    with transaction(engine) as conn:
        record(conn, [NewAssetEvent(asset={"name": a.name, "uri": a.uri}, source="api")
                      for a in assets], at)
    posted = time.perf_counter() - t0
    loops = 0
    while True:
        scheduler.run_once()
        loops += 1
        with engine.connect() as conn:
            running = conn.execute(select(func.count()).select_from(dag_run).where(
                dag_run.c.state == "running", dag_run.c.dag_id.like("fan_%"))).scalar()
        if running == n or loops > 100:
            break
    # Wall time from the post until the scheduler loop that started the runs returned (an upper
    # bound: that loop also schedules the first task of each new run).
    return {"dags": n, "post_s": round(posted, 3),
            "all_started_s": round(time.perf_counter() - t0, 3), "scheduler_loops": loops,
            "started": int(running or 0)}


def redis_stream(engine: Engine, messages: int, url: str) -> dict[str, float]:
    cipher = load_fernet(generate_key())
    install_cipher(cipher)
    stream = f"bench-{uuid.uuid4().hex}"
    asset = Asset("redis://bench/stream", watchers=[AssetWatcher(
        "stream", RedisStreamTrigger(stream, url=url, count=1000, block_seconds=0.2))])
    with DAG("stream_consumer", schedule=[asset]) as d:
        EmptyOperator(task_id="t")
    _sync(engine, [d], "/bench/stream")
    job = TriggererJob(engine, cipher=cipher, config=TriggererConfig(poll_seconds=0.2))
    stop = threading.Event()
    thread = threading.Thread(target=job.run_forever, args=(stop,), daemon=True)
    thread.start()
    client = redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + 20
        while not client.exists(stream) and time.monotonic() < deadline:
            time.sleep(0.05)  # the watcher creates the stream with its consumer group
        pipe = client.pipeline(transaction=False)
        for i in range(messages):
            pipe.xadd(stream, {"n": str(i)})
        t0 = time.perf_counter()
        pipe.execute()
        count = 0
        while time.monotonic() < deadline + 120:
            with engine.connect() as conn:
                count = int(conn.execute(select(func.count()).select_from(asset_event)).scalar()
                            or 0)
            if count >= messages:
                break
            time.sleep(0.02)
        elapsed = time.perf_counter() - t0
    finally:
        stop.set()
        job.wake()
        thread.join(20)
        client.delete(stream)
        client.close()
        install_cipher(None)
    return {"messages": messages, "events": count, "seconds": round(elapsed, 3),
            "events_per_s": round(count / elapsed, 1)}


def _databases(pg_admin: str | None) -> list[tuple[str, Engine, Any]]:
    out: list[tuple[str, Engine, Any]] = []
    tmp = tempfile.mkdtemp()

    def sqlite() -> Engine:
        e = make_engine(f"sqlite:///{Path(tmp) / f'{uuid.uuid4().hex}.db'}")
        migrate(e)
        return e

    out.append(("sqlite", sqlite(), sqlite))
    if pg_admin:
        admin = create_engine(pg_admin, isolation_level="AUTOCOMMIT")

        def postgres() -> Engine:
            name = f"sw_bench_{uuid.uuid4().hex[:8]}"
            with admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            e = make_engine(pg_admin.rsplit("/", 1)[0] + f"/{name}")
            migrate(e)
            return e

        out.append(("postgres", postgres(), postgres))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--dags", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--postgres-url", default=PG_ADMIN, help="admin URL ('' to skip)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    args = parser.parse_args()
    host_speed()
    figures: dict[str, Any] = {"benchmark": "assets"}
    events = 0
    for name, engine, fresh in _databases(args.postgres_url or None):
        url = args.postgres_url if name == "postgres" else None
        figures[f"latency_{name}"] = metered(url, args.repeats, "event", latency, engine,
                                             args.repeats)
        figures[f"fan_out_{name}"] = metered(url, args.dags, "dag", fan_out, fresh(), args.dags)
        events += args.repeats + args.dags
        if name == "sqlite":
            figures["redis_stream_sqlite"] = metered(None, args.messages, "event", redis_stream,
                                                     fresh(), args.messages, args.redis_url)
            events += args.messages
    # Per event: an asset event posted and the runs it starts, a DAG's run, a stream message.
    figures.update(totals(figures, events, "event"))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
