"""Files that ``import prefect`` run unchanged on statewright.flows.

``install()`` puts a ``sys.meta_path`` finder in front that answers ``prefect`` and the
submodules a flow file uses with statewright's modules. ``STATEWRIGHT_PREFECT_COMPAT=true``
installs it when ``statewright.compat.prefect.auto`` is imported (the ``statewright`` CLI and
``python -m statewright.compat.prefect FILE`` do).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

# Prefect module → the statewright module that stands in for it.
MODULES: dict[str, str] = {
    "prefect": "statewright.flows",
    "prefect.flows": "statewright.flows.flows",
    "prefect.tasks": "statewright.flows.tasks",
    "prefect.states": "statewright.flows.states",
    "prefect.futures": "statewright.flows.futures",
    "prefect.transactions": "statewright.flows.transactions",
    "prefect.cache_policies": "statewright.flows.cache_policies",
    "prefect.context": "statewright.flows.context",
    "prefect.logging": "statewright.flows.context",
    "prefect.flow_runs": "statewright.flows.pausing",
    "prefect.input": "statewright.flows.run_input",
    "prefect.task_runners": "statewright.flows.task_runners",
    "prefect_dask": "statewright.flows.task_runners",  # prefect-dask's DaskTaskRunner
    "prefect_dask.task_runners": "statewright.flows.task_runners",
    "prefect.tasks_utils": "statewright.sdk.caching",
    "prefect.artifacts": "statewright.flows.artifacts",
    "prefect.blocks": "statewright.flows.blocks",
    "prefect.blocks.core": "statewright.flows.blocks.core",
    "prefect.blocks.system": "statewright.flows.blocks.system",
    "prefect.concurrency": "statewright.flows.concurrency",
    "prefect.concurrency.sync": "statewright.flows.concurrency.sync",
    "prefect.concurrency.asyncio": "statewright.flows.concurrency.asyncio",
    "prefect.events": "statewright.flows.events",
    "prefect.variables": "statewright.flows.variables",
    "prefect.deployments": "statewright.flows.deployments",
    "prefect.client": "statewright.flows.client",
    "prefect.client.orchestration": "statewright.flows.client.orchestration",
    "prefect.client.schemas": "statewright.flows.client.schemas",
    "prefect.client.schemas.objects": "statewright.flows.client.schemas.objects",
    "prefect.utilities": "",  # a package with nothing of its own, for the module under it
    "prefect.utilities.annotations": "statewright.flows.annotations",
    "prefect.exceptions": "statewright.flows.exceptions",
    "prefect.runtime": "statewright.flows.runtime",  # flow_run, task_run, deployment there
}
_PACKAGES = frozenset({"prefect", "prefect_dask"})
ENV = "STATEWRIGHT_PREFECT_COMPAT"


class PrefectAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``prefect…`` modules among statewright's."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> Any:
        if fullname not in MODULES:
            if fullname == "prefect" or fullname.startswith("prefect."):
                return None  # not one we stand in for: the import fails as it would
            return None
        return importlib.util.spec_from_loader(fullname, self,
                                               is_package=_is_package(fullname))

    def create_module(self, spec: Any) -> ModuleType:
        if not MODULES[spec.name]:
            return ModuleType(spec.name)
        return importlib.import_module(MODULES[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        return None


def _is_package(fullname: str) -> bool:
    return fullname in _PACKAGES or any(n.startswith(fullname + ".") for n in MODULES)


_finder = PrefectAliasFinder()


def install() -> None:
    """Answer ``import prefect`` with statewright.flows (idempotent)."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in list(sys.modules):
        if name in MODULES:
            del sys.modules[name]


def enabled(env: dict[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get(ENV, "").strip().lower()
    return value in ("1", "true", "yes", "on")
