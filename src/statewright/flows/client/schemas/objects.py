"""``prefect.client.schemas.objects``: the objects hooks receive and the client returns — the
flow, its flow run and task runs as statewright's flow engine has them, and states."""

from __future__ import annotations

from statewright.flows.context import FlowRun, TaskRun
from statewright.flows.flows import Flow
from statewright.flows.states import State, StateType

__all__ = ["Flow", "FlowRun", "State", "StateType", "TaskRun"]
