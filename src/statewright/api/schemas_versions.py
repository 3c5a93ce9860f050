"""Response models of DAG versions (Airflow's DagVersionResponse and DAGSourceResponse)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from statewright.api.schemas import Dependency, Task, TaskGroupInfo


class DagVersion(BaseModel):
    id: int
    dag_id: str
    version_number: int
    version_name: str = Field(description="'v' and the number, as the UI shows it.")
    structure_hash: str = Field(description="Hash of the serialized DAG (its structure).")
    code_hash: str = Field(description="Hash of the DAG file's source code.")
    fileloc: str | None = None
    created_at: datetime


class DagVersionCollection(BaseModel):
    dag_versions: list[DagVersion] = Field(description="Oldest first.")
    total_entries: int


class DagVersionDetail(DagVersion):
    tasks: list[Task]
    dependencies: list[Dependency]
    task_groups: list[TaskGroupInfo] = Field(default_factory=list)


class DagSource(BaseModel):
    dag_id: str
    version_number: int
    fileloc: str | None = None
    content: str = Field(description="The DAG file's source code as that version read it.")
