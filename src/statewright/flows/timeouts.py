"""``timeout_seconds``: a run that takes longer gets ``TimeoutError`` raised in its thread."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class RunTimeout(TimeoutError):
    """A task or flow run exceeded its ``timeout_seconds``."""


@contextmanager
def timeout(seconds: float | None, what: str) -> Iterator[None]:
    """Raise ``RunTimeout`` in this thread once ``seconds`` have passed inside the block
    (Python code is interrupted between bytecodes, as Prefect's sync timeouts are)."""
    if seconds is None:
        yield
        return
    target = threading.get_ident()
    fired = threading.Event()
    done = threading.Lock()

    def fire() -> None:
        with done:
            if not fired.is_set():
                fired.set()
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(target), ctypes.py_object(RunTimeout))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except RunTimeout:
        raise RunTimeout(f"{what} exceeded timeout of {seconds} second(s)") from None
    finally:
        with done:
            fired.set()  # a timer that has not fired yet never will
        timer.cancel()
