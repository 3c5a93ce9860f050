"""Prometheus metrics shared by every component.

Components declare their metrics with :func:`counter`, :func:`gauge` and :func:`histogram`;
asking twice for the same name returns the same metric (so a module reloaded, or two services in
one process, never register a name twice). Every name gets the ``statewright_`` prefix. The
metrics live in :data:`REGISTRY`, which :func:`render` turns into the text exposition format (for
a ``/metrics`` endpoint).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from prometheus_client import (
    REGISTRY as DEFAULT_REGISTRY,
)
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

__all__ = ["PREFIX", "REGISTRY", "counter", "gauge", "histogram", "render"]

PREFIX = "statewright_"
REGISTRY: CollectorRegistry = DEFAULT_REGISTRY
_metrics: dict[str, Any] = {}
_lock = threading.Lock()


def _get(kind: type, name: str, documentation: str, labels: Sequence[str],
         **kwargs: Any) -> Any:
    full = name if name.startswith(PREFIX) else PREFIX + name
    with _lock:
        metric = _metrics.get(full)
        if metric is None:
            metric = kind(full, documentation, labelnames=tuple(labels), registry=REGISTRY,
                          **kwargs)
            _metrics[full] = metric
        elif not isinstance(metric, kind):
            raise TypeError(f"metric {full} is already a {type(metric).__name__}")
        return metric


def counter(name: str, documentation: str, labels: Sequence[str] = ()) -> Counter:
    """A counter (a ``_total`` suffix is added by the exposition format)."""
    return _get(Counter, name, documentation, labels)  # type: ignore[no-any-return]


def gauge(name: str, documentation: str, labels: Sequence[str] = ()) -> Gauge:
    return _get(Gauge, name, documentation, labels)  # type: ignore[no-any-return]


def histogram(name: str, documentation: str, labels: Sequence[str] = (),
              buckets: Sequence[float] | None = None) -> Histogram:
    extra = {"buckets": tuple(buckets)} if buckets is not None else {}
    return _get(Histogram, name, documentation, labels, **extra)  # type: ignore[no-any-return]


def render() -> bytes:
    """All metrics in the Prometheus text format."""
    return generate_latest(REGISTRY)
