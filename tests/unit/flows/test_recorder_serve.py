"""The recorder's loop when the flow's process dies (SIGKILL) with a request in flight: the
answer cannot be sent (broken pipe), and that ends the loop as the flow's death (``serve``
returns False, so ``main`` ends its runs Crashed), not as an error that leaves them running."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import pytest

from statewright.services.flows.recorder import serve


class _Backend:
    def __init__(self) -> None:
        self.applied: list[Any] = []
        self.closed: list[bool] = []

    def apply_batch(self, batch: list[Any]) -> list[tuple[bool, Any]]:
        self.applied += batch
        return [(True, None)] * len(batch)

    def close(self, *, finished: bool) -> None:
        self.closed.append(finished)


@pytest.fixture
def pipes() -> Iterator[tuple[Connection, Connection, Connection, Connection]]:
    """(flow → recorder writer, recorder's reader, recorder → flow writer, flow's reader)."""
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    ends = (Connection(w1, readable=False), Connection(r1, writable=False),
            Connection(w2, readable=False), Connection(r2, writable=False))
    yield ends
    for end in ends:
        if not end.closed:
            end.close()


@pytest.mark.parametrize("request_", [("batch", [("note", 1), ("note", 2)]), ("note", 3)])
def test_a_flow_killed_while_its_request_is_stored_ends_the_loop_as_its_death(
        pipes: tuple[Connection, ...], request_: tuple[str, Any]) -> None:
    to_rec, rec_in, rec_out, from_rec = pipes
    to_rec.send(request_)
    to_rec.close()  # killed: both of its ends of the pipes close
    from_rec.close()
    backend = _Backend()
    assert serve(backend, rec_in, rec_out, threading.Event()) is False
    assert backend.applied  # what it sent before dying is stored all the same


def test_a_flow_killed_after_asking_to_close_has_closed(pipes: tuple[Connection, ...]) -> None:
    to_rec, rec_in, rec_out, from_rec = pipes
    to_rec.send(("close", True))
    to_rec.close()
    from_rec.close()
    backend = _Backend()
    assert serve(backend, rec_in, rec_out, threading.Event()) is True
    assert backend.closed == [True]


def test_a_living_flow_gets_its_answers(pipes: tuple[Connection, ...]) -> None:
    to_rec, rec_in, rec_out, from_rec = pipes
    to_rec.send(("batch", [("note", 1)]))
    to_rec.send(("close", False))
    backend = _Backend()
    assert serve(backend, rec_in, rec_out, threading.Event()) is True
    assert from_rec.recv() == [(True, None)]
    assert from_rec.recv() == (True, None)
    assert backend.closed == [False]
