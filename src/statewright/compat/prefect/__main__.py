"""``python -m statewright.compat.prefect FILE [ARGS…]``: run a file that imports prefect."""

from __future__ import annotations

import sys

from statewright.compat._script import run_as_main
from statewright.compat.prefect import install


def main(argv: list[str]) -> int:
    return run_as_main(install, argv,
                       "usage: python -m statewright.compat.prefect FILE [ARGS...]")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
