"""``prefect.input.RunInput``: a pydantic model for the input a paused flow run waits for
(``pause_flow_run(wait_for_input=MyInput)``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RunInput(BaseModel):
    """Subclass it with the fields a person gives when resuming the run."""

    model_config = ConfigDict(extra="forbid")


__all__ = ["RunInput"]
