"""CLI command: ``statewright celery-worker``, a worker that runs the tries the Celery executor
sends (``STATEWRIGHT_EXECUTOR=celery``)."""

from __future__ import annotations

import re
from typing import Any

import click

_QUEUE_NAME = re.compile(r"^[A-Za-z0-9_.:\-]+$")


def parse_queues(raw: str) -> list[str]:
    """``default,etl`` → ``["default", "etl"]``; a bad or empty name is a usage error."""
    names = [q.strip() for q in raw.split(",") if q.strip()]
    if not names:
        raise click.BadParameter("give at least one queue, e.g. --queues default",
                                 param_hint="--queues")
    bad = [q for q in names if not _QUEUE_NAME.match(q)]
    if bad:
        raise click.BadParameter(
            f"{', '.join(map(repr, bad))}: a queue name has letters, digits and _ . : - only "
            "(the names operators give in queue=...)", param_hint="--queues")
    return list(dict.fromkeys(names))


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    from statewright.cli.output import console, friendly

    @cli.command("celery-worker")
    @click.option("--queues", "-q", default="default", show_default=True,
                  help="Comma-separated Celery queues to consume (the tasks' queue=...).")
    @click.option("--concurrency", "-c", type=click.IntRange(min=1),
                  help="Tries run at once, each in its own task process "
                       "(default STATEWRIGHT_PARALLELISM).")
    @click.option("--name", "-n", help="Celery node name (default statewright-<pid>@<host>).")
    @click.option("--loglevel", default="INFO", show_default=True,
                  type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"],
                                    case_sensitive=False))
    @click.option("--flow-calls", is_flag=True,
                  help="Also run the task calls flows send (CeleryTaskRunner). Their messages "
                       "carry code: only on a broker that only trusted flows write to.")
    @click.pass_obj
    @friendly
    def celery_worker(app: Any, queues: str, concurrency: int | None, name: str | None,
                      loglevel: str, flow_calls: bool) -> None:
        """Run a Celery worker: it takes task instances from the broker
        (STATEWRIGHT_CELERY_BROKER_URL) and runs each try in a task process."""
        from statewright.cli.app import configure_logging
        from statewright.services.worker.celery_worker import CeleryWorker
        from statewright.services.worker.deferral import install_cipher, load_cipher

        names = parse_queues(queues)
        s = app.settings
        install_cipher(load_cipher(s))  # a deferring task stores its trigger kwargs encrypted
        configure_logging(loglevel)
        app.as_service().ensure_schema()
        worker = CeleryWorker(
            app.engine, broker_url=s.celery_broker_url, queues=names,
            concurrency=concurrency or s.parallelism, logs_folder=s.logs_folder,
            heartbeat_seconds=s.heartbeat_seconds,
            visibility_timeout=s.celery_visibility_timeout, name=name,
            zombie_threshold_seconds=s.zombie_threshold_seconds, flow_calls=flow_calls,
            shutdown_grace_seconds=s.shutdown_grace_seconds, input_limits=s.input_limits)
        console.print(f"celery worker {worker.name}: queues {', '.join(names)}, "
                      f"{worker.concurrency} task processes; broker {_safe(s.celery_broker_url)}, "
                      f"database {app.engine.url.render_as_string()}. Ctrl-C stops.",
                      highlight=False)
        code = worker.run(loglevel.upper())
        if code:
            raise SystemExit(code)


def _safe(url: str) -> str:
    from kombu import Connection

    try:
        return str(Connection(url).as_uri())
    except Exception:
        return "(unparsable URL)"
