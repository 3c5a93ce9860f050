"""The DAG processor: imports DAG files, records import errors, syncs serialized DAGs.

Exports ``DagProcessor`` and ``ProcessorStats``. They are loaded on first use, so that the
processes importing DAG files (``importer``) start without the database layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statewright.services.dag_processor.processor import DagProcessor, ProcessorStats

__all__ = ["DagProcessor", "ProcessorStats"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from statewright.services.dag_processor import processor

        return getattr(processor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
