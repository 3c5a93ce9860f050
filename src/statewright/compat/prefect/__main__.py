"""``python -m statewright.compat.prefect FILE [ARGS…]``: run a file that imports prefect."""

from __future__ import annotations

import runpy
import sys

from statewright.compat.prefect import install


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m statewright.compat.prefect FILE [ARGS...]", file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
