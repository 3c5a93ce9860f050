"""``BaseNotifier``: a callback object that renders its template fields with the context and
then notifies (Airflow's ``airflow.sdk.bases.notifier.BaseNotifier``). An instance may be given
as a task callback (``on_success_callback=...``) or to ``HITLOperator(notifiers=[...])``."""

from __future__ import annotations

import abc
import logging
from collections.abc import Sequence
from typing import Any


class BaseNotifier(abc.ABC):
    """Subclass and implement ``notify(context)``; name the fields to render in
    ``template_fields``."""

    template_fields: Sequence[str] = ()

    @property
    def log(self) -> logging.Logger:
        return logging.getLogger(f"statewright.notifier.{type(self).__name__}")

    @abc.abstractmethod
    def notify(self, context: Any) -> None:
        """Send the notification."""

    def render_template_fields(self, context: Any) -> BaseNotifier:
        """A copy of this notifier with its template fields rendered with ``context``."""
        from statewright.sdk.templating import create_template_env, render_template

        env = create_template_env(getattr(context.get("task"), "dag", None), native=False)
        return render_template(self, context, env)  # type: ignore[no-any-return]

    def __call__(self, *args: Any) -> None:
        """Called as a task callback with the context (Airflow also passes it positionally)."""
        context = args[0] if args else {}
        try:
            self.render_template_fields(context).notify(context)
        except Exception:
            self.log.exception("notifier %s failed", type(self).__name__)
