"""The triggerer's metrics (Prometheus, through ``statewright.observability.metrics``)."""

from __future__ import annotations

from statewright.observability import metrics

RUNNING = metrics.gauge("triggers_running", "Triggers running in this triggerer's event loop.")
FIRED = metrics.counter("triggers_fired", "Trigger events written (task instances resumed).")
FAILED = metrics.counter("triggers_failed",
                         "Triggers that raised, ended without an event or could not be loaded.")
TIMED_OUT = metrics.counter("triggers_timed_out", "Deferred task instances past their timeout.")
BLOCKED = metrics.counter("triggerer_loop_blocked",
                          "Times a trigger held the triggerer's event loop past the threshold.")
HEARTBEAT_AGE = metrics.gauge("triggerer_heartbeat_age_seconds",
                              "Seconds since this triggerer's last heartbeat.")
