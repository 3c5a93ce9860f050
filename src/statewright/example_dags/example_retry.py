"""A flaky task that fails on its first try and succeeds on the retry (watch AwaitingRetry)."""

from __future__ import annotations

from datetime import datetime, timedelta

from statewright.sdk import DAG, task

with DAG("example_retry", start_date=datetime(2026, 1, 1), schedule=None, tags=["example"]):

    @task(retries=2, retry_delay=timedelta(seconds=2), retry_exponential_backoff=True)
    def flaky(**context: object) -> str:
        ti = context["ti"]
        if ti.try_number < 2:  # type: ignore[attr-defined]
            raise ConnectionError("the upstream API timed out (simulated)")
        return f"succeeded on try {ti.try_number}"  # type: ignore[attr-defined]

    @task
    def report(result: str) -> None:
        print(result)

    report(flaky())
