"""Built-in operators: PythonOperator and its branching kin, BashOperator, EmptyOperator."""

from __future__ import annotations

from statewright.sdk.operators.bash import BashOperator
from statewright.sdk.operators.empty import EmptyOperator
from statewright.sdk.operators.python import (
    BranchPythonOperator,
    PythonOperator,
    ShortCircuitOperator,
)

__all__ = [
    "BashOperator",
    "BranchPythonOperator",
    "EmptyOperator",
    "PythonOperator",
    "ShortCircuitOperator",
]
