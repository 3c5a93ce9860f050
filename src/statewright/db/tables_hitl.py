"""Tables of human in the loop: what a task awaiting input asks, and the one response it gets."""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Column, ForeignKey, Index, Integer, String, Table, Text

from statewright.db.tables import UTCDateTime, metadata

hitl_detail = Table(
    "hitl_detail",
    metadata,
    Column("ti_id", Integer, ForeignKey("task_instance.id", ondelete="CASCADE"),
           primary_key=True),
    Column("try_number", Integer, nullable=False),
    Column("subject", Text, nullable=False),
    Column("body", Text, nullable=True),
    Column("options", JSON, nullable=False),
    Column("multiple", Boolean, nullable=False, default=False),
    Column("defaults", JSON, nullable=True),
    Column("params", JSON, nullable=True),  # {name: serialized Param} (the form)
    Column("respondents", JSON, nullable=True),  # user names / roles allowed; NULL: anyone
    Column("created_at", UTCDateTime, nullable=False),
    Column("timeout_at", UTCDateTime, nullable=True),
    # The response: written once (compare-and-set on responded_at IS NULL).
    Column("chosen_options", JSON, nullable=True),
    Column("params_input", JSON, nullable=True),
    Column("responded_by", String(250), nullable=True),  # NULL with responded_at: timed out
    Column("responded_at", UTCDateTime, nullable=True),
    Column("timed_out", Boolean, nullable=False, default=False),
    # The scheduler's timeout step reads only unanswered requests, by time.
    Index("ix_hitl_detail_pending_timeout", "responded_at", "timeout_at"),
)
