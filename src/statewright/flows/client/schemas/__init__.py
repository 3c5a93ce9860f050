"""Prefect's client schemas (``prefect.client.schemas``)."""

from __future__ import annotations

from statewright.flows.client.schemas.objects import Flow, FlowRun, State, StateType, TaskRun

__all__ = ["Flow", "FlowRun", "State", "StateType", "TaskRun"]
