"""Running a file as ``__main__`` with a compatibility layer on (``python -m
statewright.compat.airflow FILE`` / ``…prefect FILE``)."""

from __future__ import annotations

import runpy
import sys
from collections.abc import Callable


def run_as_main(install: Callable[[], object], argv: list[str], usage: str) -> int:
    """Turn the layer on, then run ``argv[0]`` as ``python FILE ARGS`` would; 2 without a file."""
    if not argv or argv[0] in ("-h", "--help"):
        print(usage, file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0
