"""``python -m statewright.flows.entry PATH:FUNCTION``: run one flow of a file (a served
flow's scheduled run adopts its queued run: ``STATEWRIGHT_FLOW_RUN_PK``)."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import os
import sys
from typing import Any

from statewright.flows.flow_engine import FlowRunSuspended
from statewright.flows.flows import Flow
from statewright.flows.serving import PARAMETERS_ENV


def load_flow(entrypoint: str) -> Flow[..., Any]:
    """The flow object named by ``path/to/file.py:function``; a clear error otherwise."""
    path, sep, name = entrypoint.rpartition(":")
    if not sep or not path or not name:
        raise ValueError(f"{entrypoint!r} is not an entrypoint: write path/to/file.py:function.")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Flow file {path!r} does not exist.")
    from statewright.compat.prefect import enabled, install

    if enabled():
        install()
    spec = importlib.util.spec_from_file_location(f"statewright_flow_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot load {path!r} as a Python module.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    obj = getattr(module, name, None)
    if not isinstance(obj, Flow):
        raise TypeError(f"{name!r} in {path} is not a flow (decorate it with @flow); got "
                        f"{type(obj).__name__}.")
    return obj


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m statewright.flows.entry path/to/file.py:function",
              file=sys.stderr)
        return 2
    flow = load_flow(argv[0])
    parameters = json.loads(os.environ.get(PARAMETERS_ENV) or "{}")
    try:
        state = flow(return_state=True, **parameters)
        if inspect.iscoroutine(state):  # an async flow
            state = asyncio.run(state)
    except FlowRunSuspended:
        print(f"Flow {flow.name!r}: its run is suspended; resuming it runs it again.",
              file=sys.stderr)
        return 0
    return 0 if state.is_completed() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
