"""``flow.serve(...)``: register the flow and its schedule with the backend's database."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statewright.flows.flows import Flow


def serve_flow(flow: Flow[..., Any], *, name: str | None, cron: str | None,
               interval: float | timedelta | None, parameters: dict[str, Any] | None,
               description: str | None, tags: Iterable[str] | None, paused: bool) -> Any:
    if cron is not None and interval is not None:
        raise ValueError("serve() takes cron= or interval=, not both.")
    raise NotImplementedError(
        f"{flow.name}.serve(): scheduled runs of served flows are not available in this "
        "version; run the flow with `statewright flows run FILE:FUNCTION` from a schedule of "
        "your own, or author a DAG with a schedule."
    )
