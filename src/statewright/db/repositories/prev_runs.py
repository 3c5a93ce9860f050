"""The previous successful run of a DAG, for the ``prev_*_success`` keys of a task's context."""

from __future__ import annotations

PREV_SUCCESS_KEYS = {
    "prev_data_interval_start_success": "data_interval_start",
    "prev_data_interval_end_success": "data_interval_end",
    "prev_start_date_success": "start_date",
    "prev_end_date_success": "end_date",
}
