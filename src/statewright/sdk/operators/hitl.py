"""Human in the loop: tasks that ask a person and wait, with Airflow's names and arguments.

``HITLOperator.execute`` raises ``TaskAwaitingInput``: the try's process ends, the task
instance waits in ``awaiting_input`` (no worker, no pool slot, no triggerer) and resumes in
``execute_complete(context, event)`` once a person responds (API, CLI, the "Required actions"
page) or its ``response_timeout`` passes (the defaults are taken, else the try fails with
``HITLTimeoutError``). ``ApprovalOperator`` (Approve / Reject: a rejection skips the downstream
tasks), ``HITLBranchOperator`` (the chosen options are the branches) and ``HITLEntryOperator``
(a form of params with one ``OK``) build on it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from statewright.core.errors import StatewrightError
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.branch import BaseBranchOperator
from statewright.sdk.exceptions import TaskAwaitingInput
from statewright.sdk.notifier import BaseNotifier
from statewright.sdk.params import ParamsDict

__all__ = [
    "ApprovalOperator",
    "HITLBranchOperator",
    "HITLEntryOperator",
    "HITLOperator",
    "HITLRejectException",
    "HITLTimeoutError",
    "HITLTriggerEventError",
]

log = logging.getLogger("statewright.task")

RESUME_METHOD = "execute_complete"


class HITLTriggerEventError(Exception):
    """The response could not be had (the event carries an error)."""


class HITLTimeoutError(HITLTriggerEventError):
    """The response timeout passed with no response and no defaults."""


class HITLRejectException(StatewrightError):
    """An ``ApprovalOperator(fail_on_reject=True)`` received "Reject"."""


class HITLOperator(BaseOperator):
    """Ask a person to choose among ``options`` (and fill the ``params`` form), then go on.

    :param subject: the headline shown to the person (templated).
    :param options: what the person may choose; never empty.
    :param body: the details needed to decide (templated).
    :param defaults: the option(s) taken when ``response_timeout`` passes; a subset of
        ``options``, one unless ``multiple``.
    :param multiple: whether several options may be chosen.
    :param params: the form (params as a DAG's), validated when the person responds.
    :param notifiers: called with the context when the request is made.
    :param assigned_users: who may respond: user names, roles, or Airflow's
        ``{"id": ..., "name": ...}`` dicts; none: anyone allowed to edit task instances.
    :param response_timeout: how long to wait for the response.
    """

    template_fields: Collection[str] = ("subject", "body")  # type: ignore[assignment]

    def __init__(
        self,
        *,
        subject: str,
        options: list[str],
        body: str | None = None,
        defaults: str | list[str] | None = None,
        multiple: bool = False,
        params: ParamsDict | dict[str, Any] | None = None,
        notifiers: Sequence[BaseNotifier] | BaseNotifier | None = None,
        assigned_users: Any = None,
        response_timeout: timedelta | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(params=None, **kwargs)
        if self.execution_timeout and not response_timeout:
            # Airflow's behaviour: the old way of bounding the wait, moved to response_timeout.
            response_timeout, self.execution_timeout = self.execution_timeout, None
        self.response_timeout = response_timeout
        self.subject = subject
        self.body = body
        self.options = list(options or [])
        self.defaults = [defaults] if isinstance(defaults, str) else defaults
        self.multiple = multiple
        # The form: only the task's own params (a DAG's params are not questions to a person).
        self.params = params if isinstance(params, ParamsDict) else ParamsDict(params or {})
        self.notifiers: Sequence[BaseNotifier] = (
            [notifiers] if isinstance(notifiers, BaseNotifier) else list(notifiers or []))
        self.assigned_users = ([assigned_users] if isinstance(assigned_users, (dict, str))
                               else assigned_users)
        self.validate_options()
        self.validate_params()
        self.validate_defaults()

    # -- checks at definition time ---------------------------------------------------------

    def validate_options(self) -> None:
        if not self.options:
            raise ValueError(f'task {self.task_id!r}: "options" cannot be empty.')

    def validate_params(self) -> None:
        if "_options" in self.params:
            raise ValueError(f'task {self.task_id!r}: "_options" is not allowed in params')

    def validate_defaults(self) -> None:
        if self.defaults is None:
            return
        if not set(self.defaults).issubset(self.options):
            raise ValueError(f'task {self.task_id!r}: defaults "{self.defaults}" should be a '
                             f'subset of options "{self.options}"')
        if not self.multiple and len(self.defaults) > 1:
            raise ValueError(f'task {self.task_id!r}: more than one default given when '
                             '"multiple" is False.')

    @property
    def serialized_params(self) -> dict[str, dict[str, Any]]:
        return {k: self.params.get_param(k).serialize() for k in self.params}

    # -- the try ---------------------------------------------------------------------------

    def hitl_request(self) -> dict[str, Any]:
        """What the person is asked (the subject and body as rendered for this try)."""
        return {"subject": self.subject, "body": self.body, "options": self.options,
                "multiple": self.multiple, "defaults": self.defaults,
                "params": self.serialized_params or None, "respondents": self.assigned_users}

    def execute(self, context: Any) -> Any:
        """Notify, then wait in ``awaiting_input`` (the process ends here)."""
        log.info("Waiting for response")
        for notifier in self.notifiers:
            notifier(context)
        raise TaskAwaitingInput(method_name=RESUME_METHOD, request=self.hitl_request(),
                                timeout=self.response_timeout)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        """The continuation: check the response and return it (stored as the task's result)."""
        if "error" in event:
            self.process_trigger_event_error(event)
        chosen_options = list(event["chosen_options"])
        params_input = dict(event.get("params_input") or {})
        self.validate_chosen_options(chosen_options)
        self.validate_params_input(params_input)
        responded_at = event.get("responded_at")
        return {
            "chosen_options": chosen_options,
            "params_input": params_input,
            "responded_at": (responded_at.isoformat() if isinstance(responded_at, datetime)
                             else responded_at),
            "responded_by_user": event.get("responded_by_user"),
            "timedout": bool(event.get("timedout", False)),
        }

    def process_trigger_event_error(self, event: Mapping[str, Any]) -> None:
        if event.get("error_type") == "timeout":
            raise HITLTimeoutError(event["error"])
        raise HITLTriggerEventError(event["error"])

    def validate_chosen_options(self, chosen_options: list[str]) -> None:
        if diff := set(chosen_options) - set(self.options):
            raise ValueError(f"Responses {diff} not in {self.options}")

    def validate_params_input(self, params_input: Mapping[str, Any]) -> None:
        if self.params and params_input and set(self.params) ^ set(params_input):
            raise ValueError(f"params_input {dict(params_input)} does not match params "
                             f"{sorted(self.params)}")
        for key, value in params_input.items():
            self.params[key] = value

    # -- links -----------------------------------------------------------------------------

    def generate_link_to_ui(self, *, task_instance: Any, base_url: str | None = None,
                            options: str | list[str] | None = None,
                            params_input: dict[str, Any] | None = None) -> str:
        """The "Required actions" page of this task instance, with options and params to
        pre-fill."""
        query: dict[str, Any] = {"dag_id": task_instance.dag_id,
                                 "run_id": task_instance.run_id,
                                 "task_id": task_instance.task_id,
                                 "map_index": task_instance.map_index}
        chosen = [options] if isinstance(options, str) else options
        if chosen:
            if diff := set(chosen) - set(self.options):
                raise ValueError(f"options {diff} are not valid options")
            query["_options"] = ",".join(chosen)
        if params_input:
            if diff := set(params_input) - set(self.params):
                raise ValueError(f"params {diff} are not valid params")
            query.update(params_input)
        if not base_url:
            raise ValueError("Not able to retrieve base_url: pass base_url=")
        return f"{base_url.rstrip('/')}/required-actions?{urlencode(query)}"

    @staticmethod
    def generate_link_to_ui_from_context(*, context: Any, base_url: str | None = None,
                                         options: list[str] | None = None,
                                         params_input: dict[str, Any] | None = None) -> str:
        op = context["task"]
        if not isinstance(op, HITLOperator):
            raise ValueError("This method only supports HITLOperator")
        return op.generate_link_to_ui(task_instance=context["ti"], base_url=base_url,
                                      options=options, params_input=params_input)


class ApprovalOperator(HITLOperator):
    """Two options, "Approve" and "Reject". A rejection skips the downstream tasks (all of them
    with ``ignore_downstream_trigger_rules``), or fails the task with ``fail_on_reject``."""

    FIXED_ARGS = ("options", "multiple")
    APPROVE = "Approve"
    REJECT = "Reject"

    def __init__(self, *, ignore_downstream_trigger_rules: bool = False,
                 fail_on_reject: bool = False, **kwargs: Any) -> None:
        for arg in self.FIXED_ARGS:
            if arg in kwargs:
                raise ValueError(f"Passing {arg} to ApprovalOperator is not allowed.")
        self.ignore_downstream_trigger_rules = ignore_downstream_trigger_rules
        self.fail_on_reject = fail_on_reject
        super().__init__(options=[self.APPROVE, self.REJECT], multiple=False, **kwargs)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        ret = super().execute_complete(context, event)
        if ret["chosen_options"][0] == self.APPROVE:
            log.info("Approved. Proceeding with downstream tasks...")
            return ret
        if self.fail_on_reject:
            raise HITLRejectException('Received "Reject"')
        if self.ignore_downstream_trigger_rules:
            tasks = self.get_flat_relatives(upstream=False)
        else:
            tasks = self.get_direct_relatives(upstream=False)
        skipped = [t for t in tasks if not t.is_teardown]
        if skipped:
            log.info("Rejected. Skipping downstream tasks %s", [t.task_id for t in skipped])
            context["ti"].skip_downstream(t.task_id for t in skipped)
        return ret


class HITLBranchOperator(HITLOperator, BaseBranchOperator):
    """The chosen options (mapped through ``options_mapping``) are the task ids to follow."""

    def __init__(self, *, options_mapping: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.options_mapping = options_mapping or {}
        self.validate_options_mapping()

    def validate_options_mapping(self) -> None:
        invalid = set(self.options_mapping) - set(self.options)
        if invalid:
            raise ValueError(f"`options_mapping` contains keys that are not in `options`: "
                             f"{sorted(invalid)}")
        bad = {k: type(v).__name__ for k, v in self.options_mapping.items()
               if not isinstance(v, str)}
        if bad:
            raise ValueError(f"`options_mapping` values must be strings (task_ids): {bad}")

    def execute(self, context: Any) -> Any:
        return HITLOperator.execute(self, context)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        ret = super().execute_complete(context, event)
        branches = [self.options_mapping.get(o, o) for o in ret["chosen_options"]]
        return self.do_branch(context, branches)


class HITLEntryOperator(HITLOperator):
    """A form to fill (``params``) with one option, "OK"."""

    OK = "OK"

    def __init__(self, **kwargs: Any) -> None:
        if "options" not in kwargs:
            kwargs["options"] = [self.OK]
            kwargs.setdefault("defaults", [self.OK])
        super().__init__(**kwargs)
