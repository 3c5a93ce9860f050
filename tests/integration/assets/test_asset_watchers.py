"""Asset watchers run by the triggerer: a file appearing in a directory, a Redis stream and a
Redis list (a real Redis) become asset events and trigger the DAGs scheduled on the asset; a
trigger that raises is recorded, backed off and re-armed."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import Engine, select
from tests.noop import NoopOperator

from statewright.crypto import generate_key, load_fernet
from statewright.db.tables_assets import asset_watcher
from statewright.sdk import DAG, Asset, AssetWatcher
from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent, classpath_of
from statewright.sdk.triggers.watchers import (
    DirectoryFileTrigger,
    RedisListTrigger,
    RedisStreamTrigger,
)
from statewright.services.triggerer import TriggererConfig, TriggererJob
from statewright.services.triggerer.watchers import WatcherConfig, backoff
from statewright.services.worker.deferral import install_cipher

REDIS_URL = "redis://127.0.0.1:6379/15"


class RaisingTrigger(BaseTrigger):
    """A watcher's trigger that always fails."""

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        raise ConnectionError("queue unreachable")
        yield TriggerEvent()  # pragma: no cover


@pytest.fixture
def cipher() -> Iterator[Any]:
    c = load_fernet(generate_key())
    install_cipher(c)
    yield c
    install_cipher(None)


@pytest.fixture
def triggerer(engine: Engine, cipher: Any) -> Iterator[TriggererJob]:
    job = TriggererJob(engine, cipher=cipher, config=TriggererConfig(poll_seconds=0.05))
    job.watchers.config = WatcherConfig(backoff_seconds=0.05, backoff_max_seconds=0.2,
                                        idle_seconds=0.05)
    job.start()
    yield job
    job.stop()


def until(condition: Callable[[], Any], job: TriggererJob, seconds: float = 20.0) -> Any:
    """Run the triggerer's loop until ``condition()`` holds (the watchers do real I/O)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job.run_once()
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not reached")


def watched(dag_id: str, asset: Asset) -> DAG:
    with DAG(dag_id, schedule=[asset]) as dag:
        NoopOperator(task_id="t")
    return dag


def _watched_inbox(h: Any, tmp_path: Path) -> tuple[Path, Asset]:
    """A folder whose new ``*.csv`` files are events of an asset that ``on_files`` is on."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    asset = Asset("file:///inbox", watchers=[AssetWatcher(
        "inbox", DirectoryFileTrigger(str(inbox), pattern="*.csv", poke_interval=0.05))])
    h.sync(watched("on_files", asset))
    return inbox, asset


def test_a_file_appearing_in_a_directory_triggers_the_consumer(
        assets_harness: Callable, triggerer: TriggererJob, tmp_path: Path) -> None:
    h = assets_harness()
    inbox, asset = _watched_inbox(h, tmp_path)
    (inbox / "a.csv").write_text("1")
    (inbox / "ignored.txt").write_text("x")
    first = until(lambda: h.events(asset.name), triggerer)
    assert first[0]["source"] == "watcher"
    assert first[0]["extra"]["payload"]["path"] == str(inbox / "a.csv")
    (inbox / "b.csv").write_text("2")  # re-armed after the first event
    events = until(lambda: len(h.events(asset.name)) == 2 and h.events(asset.name), triggerer)
    assert [Path(e["extra"]["payload"]["path"]).name for e in events] == ["a.csv", "b.csv"]
    assert (inbox / "ignored.txt").exists()
    h.loop()
    assert [r.run_type for r in h.runs("on_files")] == ["asset_triggered"]


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as exc:  # pragma: no cover
        pytest.skip(f"Redis unreachable: {exc}")
    yield client
    client.close()


def test_a_redis_stream_gives_one_event_per_message(
        assets_harness: Callable, triggerer: TriggererJob, redis_client: redis.Redis) -> None:
    h = assets_harness()
    stream = f"orders-{uuid.uuid4().hex}"
    asset = Asset("redis://orders", watchers=[AssetWatcher(
        "orders", RedisStreamTrigger(stream, url=REDIS_URL, block_seconds=0.1))])
    h.sync(watched("on_orders", asset))
    until(lambda: len(triggerer.watchers) == 1, triggerer)
    time.sleep(0.3)  # the consumer group is created at the stream's end
    for i in range(3):
        redis_client.xadd(stream, {"order": str(i)})
    events = until(lambda: len(h.events(asset.name)) == 3 and h.events(asset.name), triggerer)
    assert [e["extra"]["payload"]["fields"] for e in events] == [{"order": "0"}, {"order": "1"},
                                                                  {"order": "2"}]
    assert redis_client.xpending(stream, "statewright")["pending"] == 0  # acknowledged
    h.loop()
    (run,) = h.runs("on_orders")
    assert len(h.triggering(run.id)) == 3
    redis_client.delete(stream)


def test_a_redis_list_gives_one_event_per_item(
        assets_harness: Callable, triggerer: TriggererJob, redis_client: redis.Redis) -> None:
    h = assets_harness()
    key = f"jobs-{uuid.uuid4().hex}"
    asset = Asset("redis://jobs", watchers=[AssetWatcher(
        "jobs", RedisListTrigger(key, url=REDIS_URL, block_seconds=0.1))])
    h.sync(watched("on_jobs", asset))
    redis_client.rpush(key, "x", "y")
    events = until(lambda: len(h.events(asset.name)) == 2 and h.events(asset.name), triggerer)
    assert [e["extra"]["payload"]["value"] for e in events] == ["x", "y"]


def test_a_raising_trigger_is_recorded_backed_off_and_rearmed(
        assets_harness: Callable, triggerer: TriggererJob, engine: Engine) -> None:
    h = assets_harness()
    asset = Asset("broken", watchers=[AssetWatcher("broken", RaisingTrigger())])
    h.sync(watched("on_broken", asset))

    def row() -> Any:
        with engine.connect() as conn:
            return conn.execute(select(asset_watcher)).first()

    failed = until(lambda: (r := row()) is not None and r.failures >= 3 and r, triggerer)
    assert failed.last_error == "ConnectionError: queue unreachable"
    assert failed.next_attempt_at is not None and failed.active
    assert len(triggerer.watchers) == 1  # still running: re-armed, never dropped
    assert h.events() == []
    config = WatcherConfig(backoff_seconds=1.0, backoff_max_seconds=300.0)
    assert [backoff(n, config) for n in (1, 2, 3, 10)] == [1.0, 2.0, 4.0, 300.0]


def test_an_event_the_database_did_not_take_is_recorded_on_the_next_pass(
        assets_harness: Callable, triggerer: TriggererJob, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher's event taken from its source is kept when writing it fails (the database
    restarting) and recorded by a later pass, once."""
    from statewright.services.triggerer import watchers as watchers_module

    h = assets_harness()
    inbox, asset = _watched_inbox(h, tmp_path)
    until(lambda: len(triggerer.watchers) == 1, triggerer)
    real, failed = watchers_module.record, []

    def down_once(*args: Any, **kwargs: Any) -> Any:
        if not failed:
            failed.append(1)
            raise ConnectionError("the database restarts")
        return real(*args, **kwargs)

    monkeypatch.setattr(watchers_module, "record", down_once)
    (inbox / "a.csv").write_text("1")
    deadline = time.monotonic() + 20
    while not failed:
        assert time.monotonic() < deadline, "the watcher never fired"
        try:
            triggerer.run_once()
        except ConnectionError:
            pass
        time.sleep(0.02)
    assert h.events(asset.name) == []
    events = until(lambda: h.events(asset.name), triggerer)
    assert [Path(e["extra"]["payload"]["path"]).name for e in events] == ["a.csv"]
