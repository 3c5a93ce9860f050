"""The local executor's supervisor tells the scheduler which submissions ended even when the
step's transitions cannot be pickled: the slots are freed (the listeners just miss the events;
the scheduler's next pass reads the database)."""

from __future__ import annotations

from typing import Any

from statewright.services.executors.local_supervisor import _Relay
from statewright.services.worker.pool_parts import Done


class _Pipe:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, message: Any) -> None:
        if message[0] == "batch" and message[2]:
            raise RecursionError("maximum recursion depth exceeded while pickling an object")
        self.sent.append(message)


def test_the_finished_submissions_are_sent_without_the_unpicklable_events() -> None:
    pipe = _Pipe()
    relay = _Relay(pipe)
    relay.on_done(Done(7, "failed", 1))
    relay.on_events([object()])  # type: ignore[list-item]
    relay.flush()
    assert pipe.sent == [("batch", [7], [], 0)]
    relay.flush()  # nothing left to send
    assert len(pipe.sent) == 1
