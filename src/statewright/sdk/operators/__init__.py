"""Built-in operators: PythonOperator and its branching kin, BashOperator, EmptyOperator;
``ExternalPythonOperator`` and ``PythonVirtualenvOperator`` (and their ``Branch…`` kin); the
cross-DAG ``TriggerDagRunOperator`` and ``ExternalTaskMarker``; ``LatestOnlyOperator``,
``BranchDayOfWeekOperator`` and ``BranchDateTimeOperator``; the human-in-the-loop operators
``HITLOperator``, ``ApprovalOperator``, ``HITLBranchOperator`` and ``HITLEntryOperator``."""

from __future__ import annotations

from statewright.sdk.operators.bash import BashOperator
from statewright.sdk.operators.datetime_branch import (
    BranchDateTimeOperator,
    BranchDayOfWeekOperator,
    LatestOnlyOperator,
    WeekDay,
)
from statewright.sdk.operators.empty import EmptyOperator
from statewright.sdk.operators.hitl import (
    ApprovalOperator,
    HITLBranchOperator,
    HITLEntryOperator,
    HITLOperator,
)
from statewright.sdk.operators.python import (
    BranchPythonOperator,
    PythonOperator,
    ShortCircuitOperator,
)
from statewright.sdk.operators.python_env import (
    BranchExternalPythonOperator,
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonVirtualenvOperator,
)
from statewright.sdk.operators.trigger_dagrun import ExternalTaskMarker, TriggerDagRunOperator

__all__ = [
    "ApprovalOperator",
    "BashOperator",
    "BranchDateTimeOperator",
    "BranchDayOfWeekOperator",
    "BranchExternalPythonOperator",
    "BranchPythonOperator",
    "BranchPythonVirtualenvOperator",
    "EmptyOperator",
    "ExternalPythonOperator",
    "ExternalTaskMarker",
    "HITLBranchOperator",
    "HITLEntryOperator",
    "HITLOperator",
    "LatestOnlyOperator",
    "PythonOperator",
    "PythonVirtualenvOperator",
    "ShortCircuitOperator",
    "TriggerDagRunOperator",
    "WeekDay",
]
