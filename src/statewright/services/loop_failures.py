"""How a service loop waits after a failed pass: the loop's own period at first, doubling with
each failure in a row up to a cap, and back to the period once a pass succeeds.

A database that restarts or a network that drops makes every pass of every service fail until
it is back: without backoff, each of them would log a traceback and hammer the server several
times a second. A failure that is the database being unreachable is logged as one line (the
first full traceback of a streak is kept for the record); anything else keeps its traceback.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import DBAPIError

DEFAULT_CAP_SECONDS = 5.0


def database_unreachable(exc: BaseException) -> bool:
    """Is ``exc`` the database being out of reach (restarting, refused, cut off)?"""
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated or _refused(exc))


def _refused(exc: DBAPIError) -> bool:
    text = str(exc.orig).lower()
    return any(s in text for s in ("connection refused", "could not connect", "connection failed",
                                   "server closed the connection", "not yet accepting",
                                   "terminating connection", "shutting down",
                                   "connection is closed", "the database system is"))


class LoopFailures:
    """The failures in a row of one loop (``what``, e.g. "scheduler loop")."""

    def __init__(self, what: str, log: logging.Logger, *, period: float,
                 cap: float = DEFAULT_CAP_SECONDS) -> None:
        self.what = what
        self.log = log
        self.period = max(period, 0.01)
        self.cap = max(cap, self.period)
        self.in_a_row = 0

    def failed(self, exc: BaseException) -> float:
        """Log the failure; returns how long to wait before the next pass."""
        self.in_a_row += 1
        delay = min(self.period * 2 ** (self.in_a_row - 1), self.cap)
        if database_unreachable(exc) and self.in_a_row > 1:
            first = str(getattr(exc, "orig", exc)).strip().splitlines() or [type(exc).__name__]
            self.log.warning("%s: the database is unreachable (%s); trying again in %.1fs "
                             "(%d failed passes in a row)", self.what, first[0], delay,
                             self.in_a_row)
        else:
            self.log.error("%s failed; trying again in %.1fs", self.what, delay, exc_info=exc)
        return delay

    def succeeded(self) -> None:
        if self.in_a_row > 1:
            self.log.warning("%s: working again after %d failed passes", self.what,
                             self.in_a_row)
        self.in_a_row = 0
