"""The DAG processor: imports DAG files, records import errors, syncs serialized DAGs."""

from statewright.services.dag_processor.processor import DagProcessor, ProcessorStats

__all__ = ["DagProcessor", "ProcessorStats"]
