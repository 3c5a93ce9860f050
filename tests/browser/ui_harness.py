"""What the browser tests share with their fixtures."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine


@dataclass
class UiServer:
    url: str
    engine: Engine
    failed_run_id: str
