"""CLI commands: the triggerer service and the triggers deferred tasks wait on."""

from __future__ import annotations

import signal
import threading
from datetime import datetime
from typing import Any

import click

from statewright.core.clock import utcnow
from statewright.core.durations import duration_words


def build_triggerer(app: Any, capacity: int | None = None) -> Any:
    """A ``TriggererJob`` from the settings; a missing or wrong Fernet key is an error here."""
    from statewright.services.secrets.store import install_database_store
    from statewright.services.triggerer import TriggererConfig, TriggererJob
    from statewright.services.worker.deferral import install_cipher, load_cipher

    s = app.settings
    cipher = load_cipher(s)
    install_cipher(cipher)
    install_database_store(app.engine)  # triggers with a conn_id read the database
    config = TriggererConfig(
        capacity=capacity or s.triggerer_capacity,
        heartbeat_seconds=s.heartbeat_seconds,
        health_threshold_seconds=s.triggerer_health_threshold_seconds,
        max_claims_per_loop=s.triggerer_max_claims_per_loop,
    )
    job = TriggererJob(app.engine, cipher=cipher, config=config)
    job.start()
    return job


def start_triggerer_thread(app: Any, stop: threading.Event) -> threading.Thread:
    """Start the triggerer in a thread of this process (``statewright standalone``)."""
    job = build_triggerer(app)
    thread = threading.Thread(target=job.run_forever, args=(stop,), name="triggerer",
                              daemon=True)
    thread.start()
    return thread


def _age(since: datetime | None, now: datetime) -> str:
    if since is None:
        return ""
    return duration_words(now - since)


def _timeout_words(timeout: datetime | None, now: datetime) -> str:
    if timeout is None:
        return ""
    if timeout > now:
        return f"in {_age(now, timeout)}"
    return f"PASSED {_age(timeout, now)} ago"


def _triggerer_label(row: Any, now: datetime, threshold: float) -> str:
    if row.triggerer_id is None:
        return "unassigned"
    if row.triggerer_heartbeat is None:
        return f"{row.triggerer_id} (no such job)"
    age = (now - row.triggerer_heartbeat).total_seconds()
    alive = row.triggerer_status == "running" and age <= threshold
    state = "alive" if alive else f"dead: last heartbeat {_age(row.triggerer_heartbeat, now)} ago"
    return f"{row.triggerer_id}@{row.triggerer_hostname} ({state})"


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    from statewright.cli.output import console, friendly, output_option, print_rows

    @cli.command("triggerer")
    @click.option("--capacity", type=int, help="Most triggers run at once "
                  "(default STATEWRIGHT_TRIGGERER_CAPACITY, 1000).")
    @click.pass_obj
    @friendly
    def triggerer(app: Any, capacity: int | None) -> None:
        """Run the triggerer: the event loop where deferred tasks' triggers run."""
        from statewright.cli.app import configure_logging
        from statewright.services.worker.deferral import load_cipher

        load_cipher(app.settings)  # a missing or malformed key stops here, before anything
        configure_logging()
        app.as_service().ensure_schema()
        stop = threading.Event()
        job = build_triggerer(app, capacity)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        console.print(f"triggerer {job.job_id} running (capacity {job.config.capacity}); "
                      f"database {app.engine.url.render_as_string()}. Ctrl-C stops.")
        job.run_forever(stop)

    @cli.group("triggers")
    def triggers() -> None:
        """Triggers that deferred task instances wait on."""

    @triggers.command("list")
    @click.option("--limit", default=100, show_default=True)
    @output_option
    @click.pass_obj
    @friendly
    def triggers_list(app: Any, limit: int, output: str) -> None:
        """Each trigger: the task instance waiting on it, its triggerer, age and timeout."""
        from statewright.db.repositories import triggers as trigger_repo

        app.ensure_schema()
        with app.engine.connect() as conn:
            rows = trigger_repo.list_with_task_instances(conn, limit)
        now = utcnow()
        threshold = app.settings.triggerer_health_threshold_seconds
        listed = [{
            "trigger_id": r.id, "classpath": r.classpath, "dag_id": r.dag_id,
            "task_id": r.task_id, "run_id": r.run_id, "state": r.state,
            "try_number": r.try_number, "triggerer_id": r.triggerer_id,
            "triggerer": _triggerer_label(r, now, threshold),
            "created_date": r.created_date.isoformat(),
            "age_seconds": (now - r.created_date).total_seconds(),
            "trigger_timeout": r.trigger_timeout.isoformat() if r.trigger_timeout else None,
            "waiting": (f"{r.dag_id} / {r.task_id} / {r.run_id}" if r.task_id
                        else "(none: orphaned)"),
            "class": r.classpath.rsplit(".", 1)[-1], "age": _age(r.created_date, now),
            "timeout": _timeout_words(r.trigger_timeout, now),
        } for r in rows]
        if output == "table" and not rows:
            console.print("no triggers: no task instance is deferred")
            return
        print_rows(listed, output, ["trigger_id", "waiting", "try_number", "class", "triggerer",
                                    "age", "timeout"],
                   labels={"trigger_id": "id", "waiting": "dag / task / run",
                           "try_number": "try", "class": "classpath"})

    @triggers.command("triggerers")
    @output_option
    @click.pass_obj
    @friendly
    def triggers_triggerers(app: Any, output: str) -> None:
        """Triggerer jobs: host, pid, heartbeat age, load and capacity."""
        from statewright.db.repositories import jobs as job_repo
        from statewright.db.repositories import triggers as trigger_repo

        app.ensure_schema()
        with app.engine.connect() as conn:
            jobs = job_repo.list_jobs(conn, trigger_repo.TRIGGERER_JOB)
            load = trigger_repo.count_by_triggerer(conn)
        now = utcnow()
        threshold = app.settings.triggerer_health_threshold_seconds
        listed = []
        for j in jobs:
            age = (now - j.latest_heartbeat).total_seconds()
            listed.append({
                "id": j.id, "host": j.hostname, "pid": j.pid,
                "status": j.status if j.status != "running" or age <= threshold else "dead",
                "latest_heartbeat": j.latest_heartbeat,
                "heartbeat": f"{_age(j.latest_heartbeat, now)} ago",
                "load": load.get(j.id, 0), "capacity": j.capacity})
        print_rows(listed, output, ["id", "host", "pid", "status", "heartbeat", "load",
                                    "capacity"])
        if output != "table":
            return
        if load.get(None):
            console.print(f"{load[None]} trigger(s) not claimed by any triggerer")
