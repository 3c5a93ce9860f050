"""A mapped task with outlets records one asset event per instance, naming its map index."""

from __future__ import annotations

from sqlalchemy import Engine, select

from statewright.db.tables_assets import asset_event
from statewright.sdk import DAG, Asset, task


def test_each_mapped_instance_records_its_event_with_its_map_index(engine: Engine) -> None:
    out = Asset("s3://bucket/parts")
    with DAG("mapped_outlets", schedule=None) as dag:
        @task(outlets=[out])
        def write(part: int) -> int:
            return part

        write.expand(part=[10, 20, 30])
    result = dag.test(engine=engine)
    assert str(result.state) == "success"
    with engine.connect() as conn:
        rows = conn.execute(select(asset_event.c.source_task_id, asset_event.c.source_map_index)
                            .where(asset_event.c.source_dag_id == "mapped_outlets")).all()
    assert sorted(rows) == [("write", 0), ("write", 1), ("write", 2)]
