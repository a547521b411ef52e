"""The judge of a reply to "delete this?" (``domain/consent.py``): yes, no or other, and whether the
message is nothing but its answer."""

from __future__ import annotations

import time

import pytest

from amrita_plugin_cognition.domain.consent import JUDGED_MAX_CHARS, Answer, judge

YES_REPLIES = [
    "确认",
    "确认删除",
    "确定",
    "确定删除",
    "同意删除",
    "好的删吧",
    "好的，删吧。",
    "删吧",
    "删",
    "删删删",
    "嗯删掉吧",
    "嗯嗯，删吧",
    "对，删了吧。",
    "那就删吧",
    "把它删了",
    "帮我删了吧",
    "好的，确认删除！",
    "可以",
    "行吧",
    "是的",
    "没问题，删吧",
    "全部删除",
    "清空吧",
    "OK",
    "ok的",
    "Yes",
    "確認刪除",  # traditional characters
    "删吧😀",
    "好的👌删吧",
    "删吧！！！",
    "好的删吧，谢谢",
    "确认删除 #12",  # the request's own number
    "第12条删掉",
]

NO_REPLIES = [
    "不",
    "不不不",
    "不要",
    "不用了",
    "别删",
    "不不不，别删",
    "先别",
    "先别删",
    "还是别了吧",
    "算了",
    "算了，删吧",  # a cancel word wins over the yes beside it
    "取消",
    "取消删除",
    "确认取消",
    "不确定",
    "确定不删",
    "别确认",
    "好的不删了",
    "我不同意",
    "不行",
    "不是这条",
    "能不能别删",  # a question, but one that asks not to delete
    "别删，能恢复吗",
    "留着吧",
    "别给我删",
    "不要帮我删了",
    "no",
    "N",
    "不删了，谢谢",
]

OTHER_REPLIES = [
    "删吧？",  # a question
    "确认？",
    "确认删除吗",
    "确认一下是哪条",
    "确认一下",  # "check", not "confirm"
    "删了能恢复吗",
    "删了还能找回来吗？",
    "要不要删",
    "删不删都行",
    "是不是要删",
    "你确定",
    "为什么要删",
    "今天中午吃了牛肉面",
    "我朋友把我删了",  # tells something, agrees to nothing
    "嗯",
    "谢谢",
    "等等",
    "再想想",
    "不一定",
    "不客气",
    "对不起",
    "我不知道",
    "今天天气不错",
    "",
    "   ",
    "👍",
    "确认删除13",  # another number: another memory
    "好的删吧，顺便说下13号我不在",
    "/memory group delete 12",
]


@pytest.mark.parametrize("reply", YES_REPLIES)
def test_a_clear_yes_agrees(reply: str) -> None:
    verdict = judge(reply, "12")
    assert verdict.answer is Answer.YES, verdict
    assert verdict.bare, verdict


@pytest.mark.parametrize("reply", NO_REPLIES)
def test_a_negation_or_a_cancel_word_refuses(reply: str) -> None:
    assert judge(reply, "12").answer is Answer.NO, judge(reply, "12")


@pytest.mark.parametrize("reply", OTHER_REPLIES)
def test_questions_hesitation_and_other_talk_are_no_answer(reply: str) -> None:
    assert judge(reply, "12").answer is Answer.OTHER, judge(reply, "12")


def test_bare_tells_an_answer_from_an_answer_with_other_talk() -> None:
    mixed = judge("好的删吧，这事我已经想清楚了")
    assert mixed.answer is Answer.YES and not mixed.bare
    mixed_no = judge("不不不，别删，我还得拿它复习")
    assert mixed_no.answer is Answer.NO and not mixed_no.bare
    assert judge("不不不，别删").bare and judge("确认").bare
    assert not judge("谢谢").bare  # fillers alone answer nothing


def test_a_number_other_than_the_requests_own_is_no_yes() -> None:
    assert judge("确认删除 12", "12").answer is Answer.YES
    assert judge("确认删除 12", "7").answer is Answer.OTHER
    assert judge("确认删除 12").answer is Answer.OTHER  # a delete-all has no number
    assert judge("确认", None).answer is Answer.YES


def test_the_judge_is_linear_and_bounded() -> None:
    assert judge("删吧" + "。" * JUDGED_MAX_CHARS).answer is Answer.OTHER  # too long to be an answer
    started = time.perf_counter()
    for text in ("删了" * 999, "不" * 1999, "，".join(["删了吧"] * 499), "确认一下" * 499):
        judge(text)
    assert time.perf_counter() - started < 1.0
