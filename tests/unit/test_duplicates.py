"""The LLM-free near-duplicate check (``domain/duplicates.py``): each class of difference that
makes two close facts different facts, each class of rewording that keeps them one fact, and the
blocking key the clustering relies on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amrita_plugin_cognition.domain.duplicate_wording import EXTRA_SIMILARITY
from amrita_plugin_cognition.domain.duplicates import (
    EXACT,
    FAR,
    HOW_MUCH,
    MIN_SIMILARITY,
    PLAN_VS_DONE,
    ROLES,
    SAME,
    WHEN,
    WHETHER,
    WHO,
    WORDING,
    doubted_by_wording,
    hard_key,
    judge_pair,
)
from amrita_plugin_cognition.domain.fact_parts import read_parts

#: Two facts this close are typical of a candidate pair (the decision is on the parts).
CLOSE = 0.92
BASE = "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅，花了260元。"

DIFFERENT = [
    pytest.param("QQ号10002（昵称小明）于2026-11-29在成都吃了火锅，花了260元。", WHO, id="another QQ number"),
    pytest.param("QQ号10001（昵称小明）于2026-11-30在成都吃了火锅，花了260元。", WHEN, id="another day"),
    pytest.param("QQ号10001（昵称小明）于2026年12月29日在成都吃了火锅，花了260元。", WHEN, id="another month"),
    pytest.param("QQ号10001（昵称小明）于2026-11-29在成都吃了火锅，花了360元。", HOW_MUCH, id="another amount"),
    pytest.param("QQ号10001（昵称小明）于2026-11-29在成都吃了火锅，花了260美元。", HOW_MUCH, id="another currency"),
    pytest.param("QQ号10001（昵称小明）于2026-11-29在成都没有吃火锅，花了260元。", WHETHER, id="negated"),
    pytest.param("QQ号10001（昵称小明）打算2026-11-29在成都吃火锅，花260元。", PLAN_VS_DONE, id="plan vs done"),
    pytest.param("QQ号10001（昵称小明）于2026-11-29在重庆吃了火锅，花了260元。", WORDING, id="another place"),
    pytest.param("QQ号10001（昵称小明）于2026-11-29在成都吃了烤肉，花了260元。", WORDING, id="another object"),
    pytest.param("QQ号10001（昵称小明）于2026-11-29在成都和小红吃了火锅，花了260元。", WORDING, id="someone added"),
]


@pytest.mark.parametrize(("other", "reason"), DIFFERENT)
def test_a_fact_that_differs_in_one_part_is_another_fact(other: str, reason: str) -> None:
    verdict = judge_pair(BASE, other, CLOSE)
    assert not verdict.duplicate
    assert verdict.reason == reason
    assert verdict.detail  # says what differed


SAME_FACT = [
    pytest.param("小明（QQ号10001）2026年11月29日在成都吃了火锅，花了260元。", id="person and date written otherwise"),
    pytest.param("2026-11-29，QQ号10001（昵称小明）在成都吃火锅花了260元。", id="reordered, particle dropped"),
    pytest.param("QQ号10001（昵称小明）于11月29日在成都吃了火锅，花了二百六十元。", id="year left out, numerals"),
    pytest.param("QQ号10001（昵称小明）于2026-11-29在成都吃了火锅，花了260块钱。", id="another word for the unit"),
    pytest.param("ＱＱ号１０００１（昵称小明）于２０２６－１１－２９在成都吃了火锅，花了２６０元。", id="full width"),
]


@pytest.mark.parametrize("other", SAME_FACT)
def test_a_rewording_is_the_same_fact(other: str) -> None:
    verdict = judge_pair(BASE, other, CLOSE)
    assert verdict.duplicate, verdict
    assert verdict.reason == SAME
    assert {WHO, WHEN, HOW_MUCH, WHETHER, PLAN_VS_DONE} <= set(verdict.matched)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("小明每天早上6点半起床跑步。", "小明每天早上6:30起床跑步。"),
        ("小明每天下午两点午睡。", "小明每天14:00午睡。"),
        ("小明每周三晚上去健身房。", "小明每个星期三晚上去健身房。"),
        ("小明喜欢吃火锅。", "小明很爱吃火锅。"),
        ("小明养了三只猫。", "小明养了3只猫。"),
        ("小明特别喜欢吃火锅。", "小明很喜欢吃火锅。"),  # 别 in 特别 denies nothing
        ("小薇讨厌别人迟到。", "小薇讨厌他人迟到。"),
        ("小芳每天都要喝两杯咖啡。", "小芳每天喝两杯咖啡。"),  # 都要: a habit, not a plan
        ("阿明开车上班单程要四十分钟。", "阿明开车上班单程40分钟。"),  # 要 + an amount: it takes
        (
            "Tom (QQ 70001) ate hotpot in Chengdu on 2026-11-29.",
            "On Nov 29, 2026, Tom (QQ 70001) ate hotpot in Chengdu.",
        ),
    ],
)
def test_other_writings_of_the_same_time_number_or_word(first: str, second: str) -> None:
    assert judge_pair(first, second, CLOSE).duplicate


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        ("小明每天早上6点半起床。", "小明每天早上7点半起床。", WHEN),
        ("小明每周三晚上去健身房。", "小明每周五晚上去健身房。", WHEN),
        ("小明买了5斤苹果。", "小明买了5公斤苹果。", HOW_MUCH),
        ("小明养了一只猫。", "小明养了两只猫。", HOW_MUCH),
        ("小明不会开车，也没有驾照。", "小明会开车，也有驾照。", WHETHER),
        ("小明的血型是O型。", "小明的血型是A型。", WORDING),
        ("小明喜欢吃火锅。", "小红喜欢吃火锅。", WHO),
        ("Tom (QQ 70001) does not drink coffee.", "Tom (QQ 70001) drinks coffee.", WHETHER),
        ("Amy (QQ 88001) moved to Shanghai.", "Amy (QQ 88001) will move to Shanghai.", PLAN_VS_DONE),
        ("小明下个月要搬到杭州。", "小明下个月搬到了杭州。", PLAN_VS_DONE),
    ],
)
def test_differences_in_short_facts(first: str, second: str, reason: str) -> None:
    verdict = judge_pair(first, second, CLOSE)
    assert (verdict.duplicate, verdict.reason) == (False, reason)


def test_a_nickname_made_of_numerals_is_a_name_not_a_number() -> None:
    verdict = judge_pair("QQ号25252（昵称七七）从来没有去过新疆。", "七七（QQ号25252）从来没去过新疆。", CLOSE)
    assert verdict.duplicate, verdict
    # a name ending in a numeral right before a date: the year stays 2025
    assert judge_pair("丁一2025年6月12日在杭州喝了咖啡。", "丁一2025-06-12在杭州喝了咖啡。", CLOSE).duplicate


def test_the_same_text_is_an_exact_duplicate_and_far_vectors_are_not_compared() -> None:
    assert judge_pair(BASE, f"  {BASE} ", 0.1).reason == EXACT
    verdict = judge_pair(BASE, "2026-11-29，QQ号10001（昵称小明）在成都吃火锅花了260元。", MIN_SIMILARITY - 0.01)
    assert (verdict.duplicate, verdict.reason) == (False, FAR)


def test_one_side_may_add_a_little_only_when_the_vectors_are_close() -> None:
    first, second = "小杨春节回哈尔滨过年。", "小杨春节回哈尔滨老家过年。"
    assert judge_pair(first, second, 0.9).duplicate
    assert not judge_pair(first, second, EXTRA_SIMILARITY - 0.01).duplicate


def _labelled_pairs() -> list[tuple[str, str]]:
    folder = Path(__file__).resolve().parents[1] / "data" / "train"
    return [
        (case["a"], case["b"])
        for path in sorted(folder.glob("dedup_zh_*.jsonl"))
        for case in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


def test_facts_with_different_blocking_keys_are_never_judged_duplicates() -> None:
    """The clustering compares vectors only within a block of equal ``hard_key`` (read without the
    wording): on every training pair, keys that differ mean the full decision says no, even when the
    vectors are as close as can be, but for the one class the key leaves out on purpose (a person
    named by QQ number on one side and by nickname alone on the other)."""
    pairs = _labelled_pairs()
    assert len(pairs) >= 400
    blocked_apart = nickname_alone = 0
    for first, second in pairs:
        light_first, light_second = read_parts(first, wording=False), read_parts(second, wording=False)
        if hard_key(light_first) == hard_key(light_second):
            continue
        blocked_apart += 1
        if light_first.qq_numbers != light_second.qq_numbers:
            nickname_alone += judge_pair(first, second, 1.0).duplicate
            continue
        assert not judge_pair(first, second, 1.0).duplicate, (first, second)
    assert blocked_apart > 50  # the key does separate facts
    assert nickname_alone < 40


def test_cosine_alone_is_read_at_the_recall_the_parts_reached() -> None:
    from amrita_plugin_cognition.cli.eval_dedup import cosine_at_recall

    scored = [(0.95, True), (0.93, False), (0.90, True), (0.88, False), (0.85, False), (0.70, True), (0.60, True)]
    half = cosine_at_recall(scored, 0.5)  # two of the four duplicates: the threshold is the second one's cosine
    assert (half["threshold"], half["precision"], half["recall"]) == (0.9, round(2 / 3, 4), 0.5)
    everything = cosine_at_recall(scored, 1.0)
    assert (everything["threshold"], everything["precision"], everything["recall"]) == (0.6, round(4 / 7, 4), 1.0)
    assert cosine_at_recall(scored, 0.0)["threshold"] is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # a person named by QQ number on one side and by the nickname alone on the other
        ("QQ号31415（昵称阿杰）把伞借给了QQ号27182（昵称小雨）。", "阿杰把伞借给了小雨（QQ号27182）。"),
        # a bare five-digit number is an amount, not a person; its unit may be written on one side only
        ("老鬼炒股亏了20000元。", "老鬼炒股亏了两万块。"),
        ("阿宁的房租每月3500元。", "阿宁每个月房租三千五。"),
        ("小梁家装修花了15万元。", "小梁家装修花了十五万元。"),
        ("老胡每天散步半小时。", "老胡每天散步30分钟。"),
        # 讨厌 says 不喜欢 in one word
        ("豆豆不喜欢吃香菜。", "豆豆讨厌吃香菜。"),
        # a bare 要 after a frequency is a habit or a duty, not an intention
        ("小卓的猫每天吃三顿猫粮。", "小卓的猫每天要吃三顿猫粮。"),
        # weekdays in Chinese numerals beside digits, 逢 as 每
        ("老周每周二和周四晚上7点去游泳。", "老周逢周二周四19:00游泳。"),
        # 每个周末 and 每周末 (with 都) are the same weekend
        ("小明每个周末去香山爬山。", "小明每周末都去香山爬山。"),
        # a word said twice adds nothing; 天天 is 每天
        ("可可每天晚上11点睡觉。", "可可天天晚上十一点睡觉睡觉。"),
        # reworded on both sides, no word in the place of another
        ("阿豪的女朋友在成都读大学。", "阿豪女朋友大学是在成都读的。"),
    ],
)
def test_paraphrases_written_in_other_words(first: str, second: str) -> None:
    verdict = judge_pair(first, second, CLOSE)
    assert verdict.duplicate, verdict


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        # swapped roles around a directional word
        (
            "QQ号31415（昵称阿杰）把伞借给了QQ号27182（昵称小雨）。",
            "QQ号27182（昵称小雨）把伞借给了QQ号31415（昵称阿杰）。",
            ROLES,
        ),
        ("小葵从上海搬到了杭州。", "小葵从杭州搬到了上海。", ROLES),
        ("Tom lent the bike to Anna.", "Anna lent the bike to Tom.", ROLES),
        # another frequency
        ("可可每天晚上11点睡觉。", "可可每周六晚上11点睡觉。", WHEN),
        # a named group of weekdays is those days: the weekend is not Monday, nor the working days
        ("小明每个周末去香山爬山。", "小明每个周一去香山爬山。", WHEN),
        ("阿梅工作日早上跑步。", "阿梅周末早上跑步。", WHEN),
        ("Tom goes hiking every weekend.", "Tom goes hiking every Monday.", WHEN),
        ("阿宁的房租每月3500元。", "阿宁的房租每季度3500元。", WHEN),
        # like / dislike
        ("豆豆喜欢吃香菜。", "豆豆讨厌吃香菜。", WHETHER),
        # a word in the place of another, however close the vectors
        ("小韦每个月的话费大概是58元。", "小韦每个月的网费大概是58元。", WORDING),
        ("阿鹏的女儿今年6岁。", "阿鹏的儿子今年6岁。", WORDING),
        ("老孙扭伤了左脚。", "老孙扭伤了右脚。", WORDING),
        ("可可每天晚上11点睡觉。", "可可每天晚上11点起床。", WORDING),
        # two QQ numbers are two people even when one side writes a nickname
        ("QQ号31415（昵称阿杰）买了伞。", "QQ号31416（昵称阿杰）买了伞。", WHO),
    ],
)
def test_a_conflicting_part_is_another_fact(first: str, second: str, reason: str) -> None:
    verdict = judge_pair(first, second, 0.99)
    assert not verdict.duplicate and verdict.reason == reason, verdict


def test_part_of_day_nickname_before_the_number_and_giving_back() -> None:
    # 上午 / 下午 without a clock time are two times
    verdict = judge_pair("婷婷每周六上午带儿子去上课。", "婷婷每周六下午带儿子去上课。", 0.99)
    assert not verdict.duplicate and verdict.reason == WHEN
    # the name written before a bracketed QQ number, named alone on the other side
    assert judge_pair(
        "Mia (QQ 13579) moved to Shenzhen in October 2026.", "Mia moved to Shenzhen in October 2026.", CLOSE
    ).duplicate
    assert judge_pair("阿凯（QQ号23456）在健身房扭伤了腰。", "阿凯在健身房扭伤了腰。", CLOSE).duplicate
    # 还给 (give back) is no filler
    assert not judge_pair("老杨借给大刘一万元。", "老杨还给大刘一万元。", 0.99).duplicate


def test_kinship_words_qq_as_a_thing_and_a_date_before_a_name() -> None:
    assert judge_pair("阿庆的老婆生了一对双胞胎。", "阿庆的妻子生了一对双胞胎。", CLOSE).duplicate
    # QQ not followed by a number names a thing
    assert not judge_pair("小于把微信头像换成了橘猫。", "小于把QQ头像换成了橘猫。", 0.99).duplicate
    # a date written just before a name in front of a bracketed QQ number stays a date
    parts = read_parts("11月3日大刘（QQ号56780）借了1万元。")
    assert parts.dates == frozenset({(None, 11, 3)})


@pytest.mark.parametrize(
    ("first", "second", "doubted"),
    [
        ("小明周末在咖啡店兼职。", "小明周末在咖啡店打工。", True),  # only the words differ: 兼职 / 打工
        ("小红喜欢画油画。", "小红喜欢画水彩。", True),  # a word in the place of another: still only wording
        ("小明周一在咖啡店兼职。", "小明周二在咖啡店打工。", False),  # when
        ("小明不在咖啡店兼职。", "小明在咖啡店打工。", False),  # whether
        ("小明打算去咖啡店兼职。", "小明在咖啡店打工。", False),  # plan vs done
        ("小明借给小红三百元。", "小红借给小明三百元。", False),  # roles
        ("小明借给小红三百元。", "小明借给小红五百元。", False),  # how much
        ("小明喜欢吃火锅。", "小明很喜欢吃火锅。", False),  # a duplicate: nothing to doubt
    ],
)
def test_a_pair_is_doubted_only_when_nothing_but_its_wording_differs(first: str, second: str, doubted: bool) -> None:
    verdict = judge_pair(first, second, 0.9)
    assert doubted_by_wording(verdict) is doubted, verdict
    if doubted:
        assert verdict.reason == "wording" and {"whether", "plan_vs_done", "roles"} <= set(verdict.matched)
