"""The timetables under their earlier module name; they live in ``statewright.core.timetables``."""

from __future__ import annotations

from statewright.core.timetables import *  # noqa: F403
from statewright.core.timetables import __all__ as __all__
