"""What ``statewright scheduler`` and ``statewright standalone`` start in this process: the
executor, the scheduler and, as asked, the DAG processor, the triggerer, the API and the bundled
example DAGs."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

from statewright.cli.app import App, configure_logging, start_thread
from statewright.cli.output import console
from statewright.core.transitions import Actor


def _run_services(app: App, *, with_processor: bool, with_api: bool = False,
                  examples: bool = False, with_triggerer: bool = False) -> None:
    from statewright.services.dag_view import DagViewCache
    from statewright.services.executors.local import LocalExecutor
    from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

    configure_logging()
    app.as_service().ensure_schema()
    s = app.settings
    stop = threading.Event()
    api_url = None
    if with_api:  # the port is bound first: when it is taken, nothing has started yet
        from statewright.api.server import start_api_thread

        _, api_url = start_api_thread(app.engine, s, stop)
    views = DagViewCache()
    from statewright.services.worker.deferral import install_cipher, load_cipher

    install_cipher(load_cipher(s))  # the worker stores trigger kwargs encrypted: key needed
    executor: Any
    if s.executor == "celery":  # tries run on `statewright celery-worker` processes
        from statewright.services.executors.celery import CeleryExecutor

        executor = CeleryExecutor(app.engine, broker_url=s.celery_broker_url,
                                  parallelism=s.parallelism,
                                  visibility_timeout=s.celery_visibility_timeout)
    else:
        executor = LocalExecutor(app.engine, parallelism=s.parallelism,
                                 logs_folder=s.logs_folder,
                                 heartbeat_seconds=s.heartbeat_seconds, views=views,
                                 input_limits=s.input_limits)
    executor.start()
    from datetime import timedelta

    from statewright.cli.commands.scheduling import processor_for, scheduler_steps

    scheduler = Scheduler(app.engine, executor, views=views, config=SchedulerConfig(
        idle_seconds=s.scheduler_idle_seconds,
        zombie_threshold=timedelta(seconds=s.zombie_threshold_seconds),
        queued_timeout=timedelta(seconds=s.queued_timeout_seconds),
        max_map_length=s.max_map_length),
        extra_steps=scheduler_steps(app))  # schedules → runs, backfills, Late
    threads = []
    if with_processor:
        proc = processor_for(app)
        proc.run_once()
        threads.append(start_thread(proc.run_forever, "dag-processor", stop))
    if examples:
        threads.append(_start_examples(app, stop))
    if with_triggerer:
        from statewright.cli.commands.triggers import start_triggerer_thread

        threads.append(start_triggerer_thread(app, stop))
    threads.append(start_thread(scheduler.run_forever, "scheduler", stop))

    def _stop(*_: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    console.print(f"statewright running: database {app.engine.url.render_as_string()}, "
                  f"DAGs from {s.dags_folder}, logs in {s.logs_folder}. Ctrl-C stops.")
    if api_url:
        console.print(f"web UI and REST API at [bold]{api_url}[/] (API docs: {api_url}api/docs)",
                      soft_wrap=True)
    while not stop.is_set():
        time.sleep(0.2)
    console.print(f"stopping: running tries get {s.shutdown_grace_seconds:g} s to end "
                  "(STATEWRIGHT_SHUTDOWN_GRACE_SECONDS), then end Interrupted…", highlight=False)
    for t in threads:
        t.join(10)
    executor.stop(grace=s.shutdown_grace_seconds)


def _start_examples(app: App, stop: threading.Event) -> threading.Thread:
    """Load the bundled example DAGs and give each one a first run; an example that has not
    run yet is unpaused (new DAGs start paused), one that has keeps what its user chose."""
    from statewright.cli.commands.scheduling import processor_for
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import runs as run_repo
    from statewright.services.dag_runs import trigger_dag

    proc = processor_for(app, app.example_dags_folder())
    proc.run_once()
    example_ids = _example_ids(app)
    with transaction(app.engine) as conn:
        for dag_id in example_ids:
            if not run_repo.list_runs(conn, dag_id, 1):
                now = utcnow()
                _unpause_example(conn, dag_id, now)
                trigger_dag(conn, dag_id, now=now, actor=Actor.USER)
                console.print(f"example DAG [bold]{dag_id}[/]: unpaused, first run triggered")
    return start_thread(proc.run_forever, "example-dag-processor", stop)


def _unpause_example(conn: Any, dag_id: str, now: Any) -> None:
    """Unpause an example DAG created paused, with an audit row saying who and why."""
    from statewright.db.repositories import audit
    from statewright.db.repositories import dags as dag_repo

    row = dag_repo.get_dag(conn, dag_id)
    if row is None or not row.is_paused:
        return
    dag_repo.set_paused(conn, dag_id, False)
    audit.record(conn, at=now, username="standalone", action="unpause", method="", path="",
                 outcome="success", status_code=0, dag_id=dag_id, target=dag_id,
                 detail="bundled example unpaused by standalone --examples")


def _example_ids(app: App) -> list[str]:
    from statewright.db.repositories import dags as dag_repo

    prefix = str(app.example_dags_folder())
    with app.engine.connect() as conn:
        return [d.dag_id for d in dag_repo.list_dags(conn)
                if (d.fileloc or "").startswith(prefix)]
