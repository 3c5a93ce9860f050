"""Task calls on a real dask.distributed cluster (a LocalCluster of two worker processes), one
worker killed midway: Dask runs its call again elsewhere, every task run is recorded through
the door, and the flow run ends Completed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine, select

from statewright.db.tables import dag_run, task_instance

FLOW = """\
import os, signal, time
from pathlib import Path
from statewright.flows import DaskTaskRunner, flow, task

EFFECTS = Path(os.environ["EFFECTS"])
runner = DaskTaskRunner(cluster_kwargs={"n_workers": 2, "threads_per_worker": 1,
                                        "dashboard_address": None, "silence_logs": 40})


@task
def square(n: int) -> int:
    with EFFECTS.open("a") as out:
        out.write(f"{n} {os.getpid()}\\n")
    time.sleep(0.3)
    return n * n


@flow(task_runner=runner)
def squares(count: int = 12) -> int:
    workers = sorted(runner.client.run(os.getpid).values())
    futures = square.map(range(count))
    while len(EFFECTS.read_text().splitlines()) < 3 if EFFECTS.exists() else True:
        time.sleep(0.05)
    os.kill(workers[0], signal.SIGKILL)  # a worker dies with a call in flight
    print("killed", workers[0])
    return sum(f.result() for f in futures)


if __name__ == "__main__":
    print("total", squares())
"""


def test_a_flow_on_a_dask_cluster_survives_a_killed_worker(engine: Engine,
                                                           tmp_path: Path) -> None:
    script = tmp_path / "squares.py"
    script.write_text(FLOW)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
        timeout=240, env={**env, "STATEWRIGHT_HOME": str(tmp_path / "home"),
                          "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(
                              hide_password=False),
                          "EFFECTS": str(tmp_path / "effects.txt"),
                          "PREFECT_LOGGING_LEVEL": "WARNING"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"total {sum(n * n for n in range(12))}" in done.stdout
    killed = int(done.stdout.split("killed ")[1].split()[0])
    calls = [line.split() for line in (tmp_path / "effects.txt").read_text().splitlines()]
    assert sorted({int(n) for n, _ in calls}) == list(range(12))
    pids = {int(p) for _, p in calls}
    assert killed in pids and len(pids) >= 2  # calls ran on both workers, one of them killed
    with engine.connect() as conn:
        run = conn.execute(select(dag_run).where(dag_run.c.dag_id == "squares")
                           .order_by(dag_run.c.id.desc())).first()
        tis = conn.execute(select(task_instance.c.task_id, task_instance.c.state,
                                  task_instance.c.state_name)
                           .where(task_instance.c.dag_run_id == run.id)).all()
    assert (run.state, run.state_name) == ("success", "Completed")
    assert sorted(t.task_id for t in tis) == sorted(f"square-{n}" for n in range(12))
    assert {(t.state, t.state_name) for t in tis} == {("success", "Completed")}


def test_prefect_dask_imports_answer_with_statewrights_runner() -> None:
    from statewright.compat.prefect import install, uninstall
    from statewright.flows import DaskTaskRunner

    install()
    try:
        from prefect_dask import DaskTaskRunner as FromPackage
        from prefect_dask.task_runners import DaskTaskRunner as FromModule
    finally:
        uninstall()
    assert FromPackage is DaskTaskRunner and FromModule is DaskTaskRunner
