"""``prefect.events.emit_event``: an event recorded as an audit log row (action
``flow.event``, the event's name as path, the resource id as target, the rest as JSON detail)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from statewright.flows import extras

__all__ = ["Event", "emit_event"]


@dataclass
class Event:
    event: str
    resource: dict[str, str]
    occurred: datetime = field(default_factory=lambda: datetime.now(UTC))
    related: list[dict[str, str]] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    id: uuid.UUID = field(default_factory=uuid.uuid4)


def emit_event(event: str, resource: dict[str, str], occurred: datetime | None = None,
               related: list[dict[str, str]] | None = None,
               payload: dict[str, Any] | None = None, id: uuid.UUID | None = None,
               follows: Any = None, **_: Any) -> Event:
    if "prefect.resource.id" not in (resource or {}):
        raise ValueError("An event's resource needs a 'prefect.resource.id'.")
    ev = Event(event, dict(resource), occurred or datetime.now(UTC), list(related or []),
               dict(payload or {}), id or uuid.uuid4())
    _run_pk, _task, flow_name = extras.run_keys()
    extras.call("event", (event, flow_name, resource["prefect.resource.id"], {
        "id": str(ev.id), "occurred": ev.occurred.isoformat(), "resource": ev.resource,
        "related": ev.related, "payload": ev.payload}))
    return ev
