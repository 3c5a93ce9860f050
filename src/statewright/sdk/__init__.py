"""The authoring SDK: what a DAG file imports.

Exports ``DAG`` and ``@dag``; ``@task`` (with ``.branch``, ``.short_circuit``, ``.bash``);
``@setup`` and ``@teardown`` (setup and teardown tasks, as ``airflow.sdk.setup`` / ``teardown``);
``BaseOperator``, ``BaseBranchOperator`` and the built-in operators; ``chain`` and
``cross_downstream``; ``XComArg``; the exceptions a task raises to skip or fail
(``SkipTask``/``AirflowSkipException``, ``FailTask``/``AirflowFailException``, ``TaskTimeout``);
``TriggerRule``; ``get_current_context``; assets (``Asset``, ``AssetAlias``, ``AssetAll``,
``AssetAny``, ``AssetOrTimeSchedule``, ``AssetWatcher``, ``@asset``). Running a task lives in
``statewright.sdk.runtime``, importing DAG files in ``statewright.sdk.loader``.
"""

from __future__ import annotations

from statewright.core.trigger_rules import TriggerRule
from statewright.sdk.asset_decorator import asset
from statewright.sdk.assets import (
    Asset,
    AssetAlias,
    AssetAll,
    AssetAny,
    AssetOrTimeSchedule,
    AssetWatcher,
)
from statewright.sdk.baseoperator import BaseOperator, chain, cross_downstream
from statewright.sdk.branch import BaseBranchOperator
from statewright.sdk.context import Context, get_current_context
from statewright.sdk.dag import DAG, dag
from statewright.sdk.decorators import setup, task, teardown
from statewright.sdk.exceptions import (
    AirflowFailException,
    AirflowSkipException,
    FailTask,
    SkipTask,
    TaskTimeout,
)
from statewright.sdk.operators import (
    BashOperator,
    BranchPythonOperator,
    EmptyOperator,
    PythonOperator,
    ShortCircuitOperator,
)
from statewright.sdk.xcom_arg import XComArg

__all__ = [
    "DAG",
    "AirflowFailException",
    "AirflowSkipException",
    "Asset",
    "AssetAlias",
    "AssetAll",
    "AssetAny",
    "AssetOrTimeSchedule",
    "AssetWatcher",
    "BaseBranchOperator",
    "BaseOperator",
    "BashOperator",
    "BranchPythonOperator",
    "Context",
    "EmptyOperator",
    "FailTask",
    "PythonOperator",
    "ShortCircuitOperator",
    "SkipTask",
    "TaskTimeout",
    "TriggerRule",
    "XComArg",
    "asset",
    "chain",
    "cross_downstream",
    "dag",
    "get_current_context",
    "setup",
    "task",
    "teardown",
]
