"""Live updates: the state history as a stream of Server-Sent Events.

Every state change appends a row to ``state_transition`` in the same transaction, so the
history is the event source: the stream reads the rows above its cursor (the last event id)
every ``POLL_SECONDS`` and sends each as one event. A browser's ``EventSource`` reconnects by
itself with ``Last-Event-ID`` and so resumes where it left off. An event tells the page *that*
something changed; the page then reads the REST API as it does when it polls, so an event that
arrives late or is skipped costs only the time until the next one (the page keeps polling slowly
as the fallback). See docs/decisions/live-updates.md.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from statewright.api import reads
from statewright.api.deps import engine_of
from statewright.api.errors import BadRequest
from statewright.db.engine import read_snapshot
from statewright.db.repositories import transitions_log

router = APIRouter(tags=["Events"])

POLL_SECONDS = 0.1
KEEPALIVE_SECONDS = 15.0
STREAM_SECONDS = 300.0
"""A stream ends after this long; the browser reconnects at once from its last event id."""
RETRY_MS = 1000
LOOKBACK_IDS = 200
"""Ids below the highest one sent that are read again: on PostgreSQL an id is handed out before
its transaction commits, so a row can appear after a higher id was sent."""


def _event(row: Any) -> str:
    data = {"id": row.id, "entity": row.entity, "dag_id": row.dag_id, "dag_run_id": row.run_id,
            "task_id": row.task_id, "map_index": row.map_index, "from_state": row.from_state,
            "to_state": row.to_state, "name": row.name, "actor": row.actor,
            "try_number": row.try_number, "at": row.at.isoformat()}
    return f"id: {row.id}\nevent: transition\ndata: {json.dumps(data)}\n\n"


def _cursor(after: int | None, last_event_id: str | None) -> int | None:
    if last_event_id is None or last_event_id == "":
        return after
    try:
        value = int(last_event_id)
    except ValueError:
        raise BadRequest(f"Last-Event-ID must be the integer id of an event, not "
                         f"{last_event_id!r}.") from None
    if value < 0:
        raise BadRequest(f"Last-Event-ID must not be negative (got {value}).")
    return value


async def _stream(request: Request, cursor: int, dag_id: str | None,
                  run_id: str | None) -> AsyncIterator[str]:
    engine = engine_of(request)
    stopping = getattr(request.app.state, "streams_stop", None)

    def read(after: int) -> list[Any]:
        with read_snapshot(engine) as conn:
            return transitions_log.since(conn, after, dag_id=dag_id, run_id=run_id)

    yield f"retry: {RETRY_MS}\n: cursor {cursor}\n\n"
    started = last_sent = time.monotonic()
    floor, top = cursor, cursor  # never below where the stream started; the highest id sent
    sent: set[int] = set()
    while time.monotonic() - started < STREAM_SECONDS:
        if stopping is not None and stopping.is_set():
            return
        if await request.is_disconnected():
            return
        rows = await anyio.to_thread.run_sync(read, max(floor, top - LOOKBACK_IDS))
        fresh = [r for r in rows if r.id not in sent]
        if fresh:
            top = max(top, fresh[-1].id)
            sent = {i for i in sent if i > top - LOOKBACK_IDS} | {r.id for r in fresh}
            last_sent = time.monotonic()
            yield "".join(_event(r) for r in fresh)
        elif time.monotonic() - last_sent > KEEPALIVE_SECONDS:
            last_sent = time.monotonic()
            yield ": keep-alive\n\n"
        await asyncio.sleep(POLL_SECONDS)


@router.get("/events/stream", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}}}})
async def event_stream(
    request: Request,
    dag_id: Annotated[str | None, Query(description="Only this DAG's changes.")] = None,
    dag_run_id: Annotated[str | None, Query(description="Only this run's (needs dag_id).")] = None,
    after: Annotated[int | None, Query(ge=0, description=(
        "Send the history rows above this id (default: only changes from now on)."))] = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """State changes as Server-Sent Events (``event: transition``, the row as JSON, its id as
    the event id), within about 0.1 s of their commit. ``Last-Event-ID`` resumes a stream."""
    if dag_run_id is not None and dag_id is None:
        raise BadRequest("dag_run_id needs dag_id: a run id is unique only within its DAG.")
    cursor = _cursor(after, last_event_id)

    def check() -> int:
        with read_snapshot(engine_of(request)) as conn:
            if dag_id is not None and dag_run_id is not None:
                reads.run_row(conn, dag_id, dag_run_id)
            elif dag_id is not None:
                reads.dag_row(conn, dag_id)
            return transitions_log.latest_id(conn) if cursor is None else cursor

    start = await anyio.to_thread.run_sync(check)
    return StreamingResponse(_stream(request, start, dag_id, dag_run_id),
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
