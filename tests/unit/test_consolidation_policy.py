"""The pre-pass's merge policy (``domain/consolidation.py``): which members of an exact cluster are
one fact, and what their merge keeps; and who may run a cycle now."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.consolidation import exact_merges
from amrita_plugin_cognition.domain.permissions import Operator, check_run_cycle
from amrita_plugin_cognition.domain.records import (
    ChatContext,
    Importance,
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
    Provenance,
    Scope,
)
from amrita_plugin_cognition.errors import PermissionDenied

CHAT = Scope("group", "20001")
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def _record(memory_id: int, text: str = "小红领养了一只橘猫。", **fields) -> MemoryRecord:  # type: ignore[no-untyped-def]
    values = {
        "id": memory_id,
        "bot_id": "b",
        "scope": CHAT,
        "text": text,
        "speaker_id": "10001",
        "speaker_name": "小明",
        "subject_id": "10001",
        "subject_name": "小明",
        "kind": MemoryKind.FACT,
        "tags": [],
        "importance": Importance.MEDIUM,
        "provenance": Provenance.USER_STATED,
        "source": {},
        "happened_at": None,
        "recorded_at": T0 + timedelta(days=memory_id),
        "updated_at": T0 + timedelta(days=memory_id),
        "status": MemoryStatus.ACTIVE,
        "superseded_by": None,
        "invalid_at": None,
        "content_hash": f"h{memory_id}",
        "keep": False,
        **fields,
    }
    return MemoryRecord(**values)


def test_a_merge_keeps_the_best_of_its_sources() -> None:
    (plan,) = exact_merges(
        [
            _record(5, "小红领养了一只橘猫！", importance=Importance.LOW, tags=["猫"], keep=True),
            _record(2, importance=Importance.HIGH, tags=["宠物", "猫"]),
            _record(9, "小红领养了一只橘猫", tags=["小红"]),
        ]
    )
    assert plan.source_ids == (2, 5, 9)
    assert plan.text == "小红领养了一只橘猫"  # the newest wording
    assert plan.importance == Importance.HIGH and plan.keep
    assert plan.tags == ("宠物", "猫", "小红")
    assert plan.recorded_at == T0 + timedelta(days=2) and plan.updated_at == T0 + timedelta(days=9)


def test_only_the_same_fact_is_merged() -> None:
    monday, friday = T0, T0 + timedelta(days=4)
    members = [
        _record(1, happened_at=monday),
        _record(2, happened_at=monday),
        _record(3, happened_at=friday),  # the same words of another day: another event
        _record(4, speaker_id="10002", subject_id="10002"),  # someone else said it
        _record(5, kind=MemoryKind.TURN),  # a quote of one moment
        _record(6, kind=MemoryKind.TURN),
    ]
    assert [plan.source_ids for plan in exact_merges(members)] == [(1, 2)]
    assert exact_merges([_record(1)]) == []


def test_a_cycle_is_run_now_by_the_operator_or_a_bot_admin_in_that_chat() -> None:
    check_run_cycle(Operator(), "b", CHAT)
    check_run_cycle(ChatContext("b", CHAT, "10009", is_bot_admin=True), "b", CHAT)
    with pytest.raises(PermissionDenied):
        check_run_cycle(ChatContext("b", CHAT, "10001", group_role="owner"), "b", CHAT)
    with pytest.raises(PermissionDenied):
        check_run_cycle(ChatContext("b", Scope("group", "20002"), "10009", is_bot_admin=True), "b", CHAT)
