"""Dynamic task mapping: one instance per file listed at run time, a cross product with fixed
arguments, and a total of the mapped results (read in map-index order)."""

from __future__ import annotations

from datetime import datetime

from statewright.sdk import DAG, task

with DAG("example_mapping", start_date=datetime(2026, 1, 1), schedule=None, tags=["example"]):

    @task
    def list_files() -> list[str]:
        return ["orders.csv", "customers.csv", "returns.csv"]

    @task(map_index_template="{{ task.op_kwargs['path'] }}")
    def count_rows(path: str, header: bool) -> int:
        return len(path) - (1 if header else 0)  # stands in for reading the file

    @task
    def total(counts: list[int]) -> int:
        print(f"{len(counts)} files, {sum(counts)} rows")
        return sum(counts)

    @task
    def resize(image: str, width: int) -> str:
        return f"{image}@{width}px"

    total(count_rows.partial(header=True).expand(path=list_files()))
    resize.expand(image=["logo.png", "banner.png"], width=[320, 1280])
