"""What the consolidation cycle's judgement step may write (``domain/cycle_rules.py``), its judged
merges (``domain/consolidation.judged_merge``) and who may forget or correct as the operator
(``permissions.check_forget`` / ``check_correct``). Pure: nothing is booted."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_consolidation_policy import T0, _record

from amrita_plugin_cognition.domain.consolidation import judged_merge
from amrita_plugin_cognition.domain.cycle_rules import barrier_pieces, cycle_card_part, stored_text_refusal
from amrita_plugin_cognition.domain.permissions import Operator, check_correct, check_forget
from amrita_plugin_cognition.domain.records import ChatContext, Importance, MemoryKind, Scope, content_hash
from amrita_plugin_cognition.errors import InvalidInput, PermissionDenied

GROUP = Scope("group", "20001")
PRIVATE = Scope("private", "10001")


def _hashes(text: str) -> set[str]:
    return {content_hash("b", GROUP, piece) for piece in barrier_pieces(text)}


def test_a_forgotten_fact_inside_new_words_is_found_by_its_hash() -> None:
    forgotten = content_hash("b", GROUP, "小明喜欢爬山。")
    assert forgotten in _hashes("小明喜欢爬山")  # its closing mark dropped
    assert forgotten in _hashes("小红养了一只猫。小明喜欢爬山！")  # one sentence of two
    assert forgotten in _hashes("小明喜欢爬山，也喜欢游泳。")  # one clause of a sentence
    assert forgotten in _hashes("  小明喜欢爬山。 ")
    assert forgotten not in _hashes("小明喜欢游泳。")
    assert content_hash("b", GROUP, "小明喜欢爬山，也喜欢游泳。") in _hashes("小明喜欢爬山，也喜欢游泳。今天下雨。")


def test_the_pieces_are_bounded_and_unique() -> None:
    pieces = barrier_pieces("。".join(f"第{index}句话" for index in range(1000)))
    assert len(pieces) == len(set(pieces)) <= 400
    assert barrier_pieces("") == [] and barrier_pieces("。。") == []  # punctuation alone is no fact


def test_the_cycle_writes_text_only_as_it_is() -> None:
    assert stored_text_refusal("小明每周六上午去爬山。") == ""
    assert "敏感" in stored_text_refusal("小明的QQ密码是 hunter2hunter2")
    assert "不要记住" in stored_text_refusal("这件事不要记住，别记下来")


def test_the_cycle_refines_only_the_card_part_its_chat_grows() -> None:
    assert cycle_card_part(GROUP, "strict", "group", "20001") == "group"
    assert cycle_card_part(GROUP, "strict", "group", "20002") is None  # another group's card
    assert cycle_card_part(GROUP, "strict", "user", "10002") == "group:20001"  # their part in this group
    assert cycle_card_part(GROUP, "open", "user", "10002") == "group"  # the shared view under open
    assert cycle_card_part(PRIVATE, "strict", "user", "10001") == "private"
    assert cycle_card_part(PRIVATE, "open", "user", "10002") is None  # another user's card
    assert cycle_card_part(PRIVATE, "strict", "group", "20001") is None


def test_a_judged_merge_takes_the_models_words_and_the_sources_values() -> None:
    plan = judged_merge(
        [_record(4, keep=True, tags=["宠物"]), _record(2, "小红领养了橘猫", importance=Importance.HIGH)],
        "小红在2026-11-03领养了一只橘猫。",
        Importance.MEDIUM,
        [" 宠物 ", "猫", "猫", ""],
    )
    assert plan.judged and plan.source_ids == (2, 4)
    assert plan.text == "小红在2026-11-03领养了一只橘猫。"
    assert plan.importance == Importance.MEDIUM and plan.tags == ("宠物", "猫")  # the model's, cleaned
    assert plan.keep and plan.recorded_at == T0 + timedelta(days=2) and plan.updated_at == T0 + timedelta(days=4)


def test_a_judged_merge_refuses_what_cannot_be_one_fact() -> None:
    cases = [
        ([_record(1), _record(1)], "至少需要两条"),
        ([_record(1), _record(2, scope=Scope("group", "20002"))], "同一个会话"),
        ([_record(1), _record(2, kind=MemoryKind.TURN)], "#2 是原话"),
    ]
    for group, reason in cases:
        with pytest.raises(InvalidInput) as refused:
            judged_merge(group, "x", Importance.LOW, [])
        assert reason in refused.value.zh


def test_the_operator_may_forget_and_correct_where_a_member_may_not() -> None:
    fact = _record(1, speaker_id="10002", subject_id="10002")
    member = ChatContext("b", GROUP, "10001", "小明", group_role="member")
    with pytest.raises(PermissionDenied):
        check_forget(member, fact)
    with pytest.raises(PermissionDenied):
        check_correct(member, fact)
    check_forget(Operator("consolidation"), fact)
    check_correct(Operator("consolidation"), fact)
    check_forget(ChatContext("b", GROUP, "10002", "小红"), fact)  # their own fact
    with pytest.raises(PermissionDenied):
        check_forget(ChatContext("other-bot", GROUP, "10002"), fact)
