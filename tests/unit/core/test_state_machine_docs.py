"""docs/state-machines.md is generated from the transition tables and must not go stale."""

from __future__ import annotations

from pathlib import Path

from statewright.core.diagrams import render

DOC = Path(__file__).resolve().parents[3] / "docs" / "state-machines.md"


def test_the_state_machine_page_matches_the_tables() -> None:
    assert DOC.read_text() == render(), (
        "docs/state-machines.md is stale: run `python -m statewright.core.diagrams > "
        "docs/state-machines.md`"
    )


def test_every_edge_appears_on_the_page() -> None:
    from statewright.core.transitions import TASK_INSTANCE_EDGES

    text = render()
    for frm, to in TASK_INSTANCE_EDGES:
        assert f"| `{frm.value}` | `{to.value}` |" in text
