"""A first DAG: extract → transform → load, with results flowing between tasks."""

from __future__ import annotations

from datetime import datetime

from statewright.sdk import DAG, BashOperator, task

with DAG("example_hello", start_date=datetime(2026, 1, 1), schedule=None, tags=["example"]) as dag:

    @task
    def extract() -> list[int]:
        return [1, 2, 3, 4]

    @task
    def transform(numbers: list[int]) -> int:
        return sum(n * n for n in numbers)

    @task
    def load(total: int) -> str:
        print(f"sum of squares: {total}")
        return f"loaded {total}"

    announce = BashOperator(task_id="announce", bash_command="echo 'pipeline finished'")
    load(transform(extract())) >> announce
