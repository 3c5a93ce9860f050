"""What the CLI prints: the consoles, one-paragraph errors, and parsing shared by commands."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from rich.console import Console

from statewright.core.errors import StatewrightError

console = Console()
err = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` as one paragraph on stderr and exit with ``code``."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    sys.exit(code)


def friendly(fn: F) -> F:
    """Turn statewright's errors into one clear paragraph and a non-zero exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StatewrightError as exc:
            fail(str(exc))
        except json.JSONDecodeError as exc:
            fail(f"--conf is not valid JSON: {exc}. Example: --conf '{{\"key\": 1}}'", 2)

    return wrapper  # type: ignore[return-value]


def parse_conf(conf: str | None) -> dict[str, Any]:
    if not conf:
        return {}
    value = json.loads(conf)
    if not isinstance(value, dict):
        raise StatewrightError(f"--conf must be a JSON object, got {type(value).__name__}: {conf}")
    return value
