"""The authoring SDK: what a DAG file imports.

Exports ``DAG`` and ``@dag``; ``@task`` (with ``.branch``, ``.short_circuit``, ``.bash``);
``@setup`` and ``@teardown`` (setup and teardown tasks, as ``airflow.sdk.setup`` / ``teardown``);
``BaseOperator``, ``BaseBranchOperator`` and the built-in operators; ``chain`` and
``cross_downstream``; ``XComArg``; the exceptions a task raises to skip or fail
(``SkipTask``/``AirflowSkipException``, ``FailTask``/``AirflowFailException``, ``TaskTimeout``);
``TriggerRule``; ``get_current_context``; ``Param``, ``ParamsDict`` and ``ParamValidationError``
(params with a JSON Schema); ``macros`` (Airflow's template macros) and ``literal`` (a value
a template field passes on unrendered); ``TaskGroup`` and ``@task_group``; ``Label`` (edge
labels); ``PokeReturnValue`` (what a sensor's poke, or ``@task.sensor``, may return);
``BaseHook``, ``Connection``, ``Variable`` and ``mask_secret`` (connections, variables and
secrets); assets (``Asset``, ``AssetAlias``, ``AssetAll``, ``AssetAny``,
``AssetOrTimeSchedule``, ``AssetWatcher``, ``AssetAccessControl``, ``@asset``); the timetables
Airflow 3.3's ``airflow.sdk`` exports (``CronTriggerTimetable``, ``CronDataIntervalTimetable``,
``DeltaTriggerTimetable``, ``DeltaDataIntervalTimetable``, ``EventsTimetable``,
``MultipleCronTriggerTimetable``); human in the loop (``HITLOperator``,
``ApprovalOperator``, ``HITLBranchOperator``, ``HITLEntryOperator``, ``pause_for_input``,
``BaseNotifier``); durable task state
(``TaskStateStore``, ``AssetStateStore``, ``NEVER_EXPIRE``: a task's ``task_state_store`` and
``asset_state_store``); ``timezone`` (Airflow's timezone helpers: ``utcnow``, ``datetime``,
``parse``, ``convert_to_utc``, ...); ``Metadata`` (what a task yields to attach extra to an
asset event). Running a task lives in
``statewright.sdk.runtime``, importing DAG files in ``statewright.sdk.loader``.
"""

from __future__ import annotations

from statewright.core.trigger_rules import TriggerRule
from statewright.sdk import macros, timezone
from statewright.sdk.asset_access import AssetAccessControl
from statewright.sdk.asset_decorator import asset
from statewright.sdk.asset_metadata import Metadata
from statewright.sdk.assets import (
    Asset,
    AssetAlias,
    AssetAll,
    AssetAny,
    AssetOrTimeSchedule,
    AssetWatcher,
)
from statewright.sdk.basehook import BaseHook
from statewright.sdk.baseoperator import BaseOperator, chain, cross_downstream
from statewright.sdk.branch import BaseBranchOperator
from statewright.sdk.connection import Connection
from statewright.sdk.context import Context, get_current_context
from statewright.sdk.dag import DAG, dag
from statewright.sdk.deadline import AsyncCallback, DeadlineAlert, DeadlineReference, SyncCallback
from statewright.sdk.decorators import setup, task, teardown
from statewright.sdk.edges import EdgeModifier, Label
from statewright.sdk.exceptions import (
    AirflowFailException,
    AirflowSkipException,
    FailTask,
    SkipTask,
    TaskTimeout,
)
from statewright.sdk.masking import mask_secret
from statewright.sdk.notifier import BaseNotifier
from statewright.sdk.operators import (
    ApprovalOperator,
    BashOperator,
    BranchExternalPythonOperator,
    BranchPythonOperator,
    BranchPythonVirtualenvOperator,
    EmptyOperator,
    ExternalPythonOperator,
    HITLBranchOperator,
    HITLEntryOperator,
    HITLOperator,
    PythonOperator,
    PythonVirtualenvOperator,
    ShortCircuitOperator,
    WeekDay,
)
from statewright.sdk.params import Param, ParamsDict, ParamValidationError
from statewright.sdk.partitions import (
    AllowedKeyMapper,
    CronPartitionTimetable,
    DayWindow,
    FanOutMapper,
    FixedKeyMapper,
    IdentityMapper,
    MinimumCount,
    MonthWindow,
    PartitionedAssetTimetable,
    PartitionedAtRuntime,
    PartitionMapper,
    ProductMapper,
    RollupMapper,
    SegmentWindow,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
    WaitForAll,
    WeekWindow,
    Window,
)
from statewright.sdk.pause import pause_for_input
from statewright.sdk.retry_policy import (
    ExceptionRetryPolicy,
    RetryAction,
    RetryDecision,
    RetryPolicy,
    RetryRule,
)
from statewright.sdk.sensors.base import PokeReturnValue
from statewright.sdk.task_state import NEVER_EXPIRE, AssetStateStore, TaskStateStore
from statewright.sdk.taskgroup import TaskGroup, task_group
from statewright.sdk.templating import literal
from statewright.sdk.timetables import (
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
    EventsTimetable,
    MultipleCronTriggerTimetable,
)
from statewright.sdk.variables import Variable
from statewright.sdk.weight_rule import WeightRule
from statewright.sdk.xcom_arg import XComArg

__all__ = [
    "DAG",
    "NEVER_EXPIRE",
    "AirflowFailException",
    "AirflowSkipException",
    "AllowedKeyMapper",
    "ApprovalOperator",
    "Asset",
    "AssetAccessControl",
    "AssetAlias",
    "AssetAll",
    "AssetAny",
    "AssetOrTimeSchedule",
    "AssetStateStore",
    "AssetWatcher",
    "AsyncCallback",
    "BaseBranchOperator",
    "BaseHook",
    "BaseNotifier",
    "BaseOperator",
    "BashOperator",
    "BranchExternalPythonOperator",
    "BranchPythonOperator",
    "BranchPythonVirtualenvOperator",
    "Connection",
    "Context",
    "CronDataIntervalTimetable",
    "CronPartitionTimetable",
    "CronTriggerTimetable",
    "DayWindow",
    "DeadlineAlert",
    "DeadlineReference",
    "DeltaDataIntervalTimetable",
    "DeltaTriggerTimetable",
    "EdgeModifier",
    "EmptyOperator",
    "EventsTimetable",
    "ExceptionRetryPolicy",
    "ExternalPythonOperator",
    "FailTask",
    "FanOutMapper",
    "FixedKeyMapper",
    "HITLBranchOperator",
    "HITLEntryOperator",
    "HITLOperator",
    "IdentityMapper",
    "Label",
    "Metadata",
    "MinimumCount",
    "MonthWindow",
    "MultipleCronTriggerTimetable",
    "Param",
    "ParamValidationError",
    "ParamsDict",
    "PartitionMapper",
    "PartitionedAssetTimetable",
    "PartitionedAtRuntime",
    "PokeReturnValue",
    "ProductMapper",
    "PythonOperator",
    "PythonVirtualenvOperator",
    "RetryAction",
    "RetryDecision",
    "RetryPolicy",
    "RetryRule",
    "RollupMapper",
    "SegmentWindow",
    "ShortCircuitOperator",
    "SkipTask",
    "StartOfDayMapper",
    "StartOfHourMapper",
    "StartOfMonthMapper",
    "StartOfWeekMapper",
    "StartOfYearMapper",
    "SyncCallback",
    "TaskGroup",
    "TaskStateStore",
    "TaskTimeout",
    "TriggerRule",
    "Variable",
    "WaitForAll",
    "WeekDay",
    "WeekWindow",
    "WeightRule",
    "Window",
    "XComArg",
    "asset",
    "chain",
    "cross_downstream",
    "dag",
    "get_current_context",
    "literal",
    "macros",
    "mask_secret",
    "pause_for_input",
    "setup",
    "task",
    "task_group",
    "teardown",
    "timezone",
]
