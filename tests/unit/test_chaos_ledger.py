"""The chaos bench's verdict against its ledger (bench/_chaos_worker.py ``ledger_findings``): an
acknowledged step without its fact or turn is lost, a fact active twice is a duplicate, and a step
cut by the kill (begun, never acknowledged) may have left its fact or not, but never two."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))

from _chaos_worker import fact_marker, ledger_findings, step_text

G = ("group", "30001")


def end_fact(step: int) -> tuple[str, str, str]:
    user, name, words = step_text(1, step)
    return (*G, f"QQ号{user}（昵称{name}）最近{words}")


def test_every_acknowledged_step_found_once_is_clean() -> None:
    begun = {0: "end", 1: "capture", 2: "write", 3: "end"}
    done = {0, 1, 2}  # step 3 was cut by the kill: its fact may be there or not
    active = [end_fact(0), (*G, f"小明说自己学了围棋{fact_marker(2)}")]
    assert ledger_findings(begun, done, active, {"t1": False}) == ([], [])
    assert ledger_findings(begun, done, [*active, end_fact(3)], {"t1": False}) == ([], [])


def test_a_missing_fact_or_turn_is_lost_and_a_second_copy_is_a_duplicate() -> None:
    begun = {0: "end", 1: "capture", 2: "write", 3: "end"}
    done = {0, 1, 2}
    lost, duplicates = ledger_findings(begun, done, [end_fact(3), end_fact(3)], {"t1": True})
    assert lost == [
        "step 0 (end): no active fact",
        "step 1 (capture): turn still waiting for a job",
        "step 2 (write): no active fact",
    ]
    assert len(duplicates) == 2 and "step 3 (end): 2 facts" in duplicates  # same text twice, and the step twice
    lost, _ = ledger_findings({1: "capture"}, {1}, [], {})
    assert lost == ["step 1 (capture): turn not in the transcript"]
