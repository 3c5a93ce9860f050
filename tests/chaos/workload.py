"""The chaos workload: one DAG file mixing what a deployment runs, and the runs to trigger.

Per run: plain tasks, a slow task (so that kills land mid-try), a task that fails its first try
and retries, a branch, an operator that defers to a trigger, a reschedule-mode sensor, a mapped
task, tasks in a small pool, and success/retry callbacks. Every task has retries, so a try that
is killed with its process (``Crashed``) is tried again.
"""

from __future__ import annotations

import textwrap

POOL = "chaos_pool"
POOL_SLOTS = 3
MAX_ACTIVE_RUNS = 6
MAX_ACTIVE_TASKS = 10
MAP_LENGTH = 22
TASKS_PER_RUN = 15 + MAP_LENGTH  # 15 task instances and the mapped ones

DAG_FILE = textwrap.dedent(f'''
    import os
    import time
    from datetime import datetime, timedelta
    from pathlib import Path

    from statewright.sdk import DAG, BaseOperator, EmptyOperator, task
    from statewright.sdk.sensors import PythonSensor
    from statewright.sdk.triggers import TimeDeltaTrigger

    MARKERS = Path(os.environ["STATEWRIGHT_CHAOS_MARKERS"])


    def _mark(kind, context):
        ti = context["ti"]
        name = f"{{kind}}.{{context['dag_run'].run_id}}.{{ti.task_id}}.{{ti.try_number}}"
        (MARKERS / name).touch()


    def _on_success(context):
        _mark("success", context)


    def _on_retry(context):
        _mark("retry", context)


    def _second_poke(dag_run, ti):
        marker = MARKERS / f"poke.{{dag_run.run_id}}.{{ti.try_number}}"
        if marker.exists():
            return True
        marker.touch()
        return False


    class WaitThenResume(BaseOperator):
        def execute(self, context):
            self.defer(trigger=TimeDeltaTrigger(timedelta(seconds=1)), method_name="resume")

        def resume(self, context, event=None):
            return "resumed"


    with DAG("chaos_mix", start_date=datetime(2026, 1, 1), schedule=None,
             max_active_runs={MAX_ACTIVE_RUNS}, max_active_tasks={MAX_ACTIVE_TASKS},
             default_args={{"retries": 4, "retry_delay": timedelta(seconds=0)}}):

        @task
        def start():
            return 1

        @task
        def slow():
            time.sleep(1.5)
            return 2

        @task(on_retry_callback=_on_retry)
        def flaky(**context):
            if context["ti"].try_number == 1:
                raise RuntimeError("the first try always fails")
            return 3

        @task.branch
        def choose(**context):
            return "left" if context["dag_run"].run_id.endswith(("0", "2", "4", "6", "8")) \\
                else "right"

        left = EmptyOperator(task_id="left")
        right = EmptyOperator(task_id="right")
        join = EmptyOperator(task_id="join", trigger_rule="none_failed_min_one_success")

        @task
        def work(i):
            return i * 2

        @task(pool="{POOL}")
        def pooled(n):
            time.sleep(0.3)
            return n

        deferred = WaitThenResume(task_id="deferred")
        sensor = PythonSensor(task_id="sensor", python_callable=_second_poke,
                              mode="reschedule", poke_interval=0.5, timeout=600)

        @task(on_success_callback=_on_success, trigger_rule="none_failed")
        def end():
            return "end"

        s = start()
        mapped = work.expand(i=list(range({MAP_LENGTH})))
        pools = [pooled.override(task_id=f"pooled_{{n}}")(n) for n in range(5)]
        s >> [slow(), flaky(), deferred, sensor, mapped, *pools]
        s >> choose() >> [left, right] >> join
        [join, deferred, sensor, mapped, *pools] >> end()
''')
