"""The DAG processor: imports DAG files, records import errors, syncs serialized DAGs.

Exports ``DagProcessor`` and ``ProcessorStats``. They are loaded on first use, so that the
processes importing DAG files (``importer``) start without the database layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from statewright.core.lazy import lazy_exports

if TYPE_CHECKING:
    from statewright.services.dag_processor.processor import DagProcessor, ProcessorStats

__all__ = ["DagProcessor", "ProcessorStats"]


__getattr__ = lazy_exports(
    __name__, dict.fromkeys(__all__, "statewright.services.dag_processor.processor"))
