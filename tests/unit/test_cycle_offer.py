"""Which of the cycle's tools a judgement-step run is offered, by its work
(``domain/cycle_offer.py``): every run can read and act on memories, each kind of work adds the
tools its job needs, the knowledge base only in a group chat, every kind of work is mapped."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.domain.cycle_offer import ALWAYS, BY_WORK, BY_WORK_IN_GROUP, UNGATED, offered
from amrita_plugin_cognition.domain.judgement import WORK

BASE = frozenset(ALWAYS) | frozenset(UNGATED)
CARDS = {"cycle_card_read", "cycle_card_update"}
KNOWLEDGE = {"cycle_knowledge_search", "cycle_knowledge_get", "cycle_knowledge_write", "cycle_knowledge_delete"}
MEMO = {"cycle_memo_read", "cycle_memo_update"}
SUGGESTIONS = {"cycle_suggestions", "cycle_suggestion_review"}


def test_every_run_can_read_and_act_on_the_memories_it_reads() -> None:
    assert offered((), group=True) == offered((), group=False) == BASE
    assert {
        "cycle_context", "cycle_memory_list", "cycle_memory_read", "cycle_memory_update", "cycle_memory_forget",
        "cycle_memory_merge",
    } <= BASE  # fmt: skip
    assert not (BASE & (CARDS | KNOWLEDGE | MEMO | SUGGESTIONS))


def test_every_kind_of_work_is_mapped() -> None:
    assert set(BY_WORK) == set(WORK)
    assert set(BY_WORK_IN_GROUP) <= set(WORK)


@pytest.mark.parametrize(
    ("work", "group", "added"),
    [
        ("near_clusters", True, {"cycle_clusters"}),
        ("wording_clusters", True, {"cycle_clusters"}),
        ("new_memories", True, {"cycle_stats", "cycle_recent", *CARDS, *KNOWLEDGE - {"cycle_knowledge_delete"}}),
        ("new_memories", False, {"cycle_stats", "cycle_recent", *CARDS}),
        ("stale_knowledge", True, KNOWLEDGE),
        ("stale_knowledge", False, set()),
        ("suggestions", True, {*SUGGESTIONS, "cycle_knowledge_search", "cycle_knowledge_get"}),
        ("suggestions", False, SUGGESTIONS),  # a private chat's suggestions can only be rejected
        ("memo_full", True, {*MEMO, "cycle_memory_write"}),  # details move from the memo to memories
        ("cards_touched", False, {"cycle_recent", *CARDS}),
    ],
)
def test_each_kind_of_work_offers_its_tools(work: str, group: bool, added: set[str]) -> None:
    assert offered((work,), group=group) == BASE | added


def test_work_adds_up_and_a_kind_not_mapped_offers_everything() -> None:
    both = offered(("memo_full", "suggestions"), group=True)
    assert both == offered(("memo_full",), group=True) | offered(("suggestions",), group=True)
    assert offered(("near_clusters", "some_new_kind"), group=True) is None
