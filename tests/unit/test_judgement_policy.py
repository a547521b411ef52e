"""Whether a cycle goes on to the judgement step (``domain/judgement.py``): the checks in their
order, each reason the owner is shown, what counts as work, and the step's token budget."""

from __future__ import annotations

from dataclasses import replace

import pytest

from amrita_plugin_cognition.domain.judgement import (
    MEMO_FULL_SHARE,
    MIN_STEP_TOKENS,
    SKIP_REASONS_ZH,
    WORK,
    WORK_ZH,
    JudgementSignals,
    changes_zh,
    decide,
    step_tokens,
    work_of,
)

#: A chat with new memories, a model, memory on, 200k a day and nothing spent.
READY = JudgementSignals(
    model_configured=True,
    memory_on=True,
    daily_token_budget=200_000,
    cycle_token_budget=30_000,
    tokens_today=0,
    new_memories=3,
)
QUIET = replace(READY, new_memories=0)


def test_a_chat_with_new_memories_and_budget_left_goes_to_the_model() -> None:
    verdict = decide(READY)
    assert verdict.run and verdict.reason == "" and verdict.work == ("new_memories",)
    assert (verdict.tokens_left, verdict.tokens) == (200_000, 30_000)


@pytest.mark.parametrize(
    ("signals", "reason"),
    [
        (replace(READY, model_configured=False), "no_model"),
        (replace(READY, memory_on=False), "memory_off"),
        (replace(READY, daily_token_budget=0), "budget_off"),
        (replace(READY, tokens_today=200_000), "daily_budget_spent"),
        (replace(READY, tokens_today=250_000), "daily_budget_spent"),  # a step may end a little past it
        (QUIET, "nothing_to_judge"),
    ],
)
def test_each_reason_not_to_run_is_said(signals: JudgementSignals, reason: str) -> None:
    verdict = decide(signals)
    assert not verdict.run and verdict.reason == reason
    assert verdict.reason_zh == SKIP_REASONS_ZH[reason] and verdict.reason_zh


def test_the_first_failing_check_is_the_reason_and_work_is_still_named() -> None:
    # no model, memory off and the budget spent at once: the owner is told about the model first
    verdict = decide(replace(READY, model_configured=False, memory_on=False, tokens_today=300_000))
    assert verdict.reason == "no_model" and verdict.work == ("new_memories",)
    # a budget of 0 is "off", not "spent", even with tokens used earlier in the day
    assert decide(replace(READY, daily_token_budget=0, tokens_today=10)).reason == "budget_off"
    # the budget is checked before the work: an exhausted day says so even for a quiet chat
    assert decide(replace(QUIET, tokens_today=200_000)).reason == "daily_budget_spent"


@pytest.mark.parametrize(
    ("change", "item"),
    [
        ({"near_clusters": 1}, "near_clusters"),
        ({"wording_clusters": 1}, "wording_clusters"),
        ({"new_memories": 1}, "new_memories"),
        ({"stale_knowledge": 2}, "stale_knowledge"),
        ({"suggestions": 1}, "suggestions"),
        ({"memo_chars": 800, "memo_max_chars": 1000}, "memo_full"),
        ({"cards_touched": 1}, "cards_touched"),
    ],
)
def test_each_kind_of_work_alone_is_enough(change: dict[str, int], item: str) -> None:
    verdict = decide(replace(QUIET, **change))
    assert verdict.run and verdict.work == (item,) and item in WORK_ZH


def test_the_memo_counts_from_its_share_of_the_limit() -> None:
    assert MEMO_FULL_SHARE == 0.8
    assert not replace(QUIET, memo_chars=799, memo_max_chars=1000).memo_full
    assert replace(QUIET, memo_chars=800, memo_max_chars=1000).memo_full
    assert not replace(QUIET, memo_chars=5, memo_max_chars=0).memo_full  # no limit known: never full
    assert work_of(replace(QUIET, memo_chars=799, memo_max_chars=1000)) == ()


def test_work_is_listed_in_one_order() -> None:
    everything = replace(
        QUIET, cards_touched=1, memo_chars=10, memo_max_chars=10, suggestions=1, stale_knowledge=1,
        new_memories=1, near_clusters=1, wording_clusters=1,
    )  # fmt: skip
    assert work_of(everything) == WORK


def test_the_steps_budget_is_the_cycles_at_most_what_is_left_of_the_day() -> None:
    assert step_tokens(30_000, 200_000) == 30_000
    assert step_tokens(30_000, 12_345) == 12_345
    assert step_tokens(30_000, 0) == 0
    assert step_tokens(30_000, -5) == 0
    verdict = decide(replace(READY, tokens_today=190_000))
    assert verdict.run and (verdict.tokens_left, verdict.tokens) == (10_000, 10_000)


def test_a_day_with_less_than_one_rounds_worth_left_starts_no_step() -> None:
    assert MIN_STEP_TOKENS == 2000
    assert step_tokens(30_000, MIN_STEP_TOKENS) == MIN_STEP_TOKENS
    assert step_tokens(30_000, MIN_STEP_TOKENS - 1) == 0
    assert step_tokens(1500, 1500) == 1500  # a cycle budget under the floor is its own floor
    verdict = decide(replace(READY, tokens_today=200_000 - MIN_STEP_TOKENS + 1))
    assert not verdict.run and verdict.reason == "daily_budget_spent" and verdict.tokens_left == MIN_STEP_TOKENS - 1


def test_changes_read_in_chinese_in_one_order() -> None:
    assert changes_zh({"cards": 2, "merged": 1, "tags": 3, "memo": 0}) == "合并 1，画像 2，tags 3"
    assert changes_zh({}) == "无"
