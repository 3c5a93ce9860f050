"""``WeightRule``: the built-in priority weight rules by name (Airflow's ``airflow.sdk.WeightRule``,
``airflow.utils.weight_rule.WeightRule``), a string enum: ``weight_rule=WeightRule.UPSTREAM`` is
``weight_rule="upstream"``."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["WeightRule"]


class WeightRule(StrEnum):
    """How a task's effective priority weight is summed (see ``BaseOperator(weight_rule=)``)."""

    DOWNSTREAM = "downstream"
    UPSTREAM = "upstream"
    ABSOLUTE = "absolute"

    @classmethod
    def is_valid(cls, weight_rule: str) -> bool:
        return weight_rule in cls.all_weight_rules()

    @classmethod
    def all_weight_rules(cls) -> set[str]:
        return {rule.value for rule in cls}
