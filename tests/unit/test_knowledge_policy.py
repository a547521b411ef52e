"""The knowledge base's policy (``domain/knowledge.py``), by class of content: general entries
(rules, FAQs, how-tos, with times, prices, versions and links) pass; a private chat's content, a
person's details, secrets and over-long fields are refused with a Chinese reason; suggestions are
stored only whole and clean."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.domain.knowledge import (
    SUGGESTION_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
    SourceFacts,
    judge_entry,
    judge_suggestion,
    suggestion_allowed,
)
from amrita_plugin_cognition.domain.people import PersonMatcher
from amrita_plugin_cognition.errors import InvalidInput

GROUP_SOURCES = SourceFacts({1: "group", 2: "group"})
PEOPLE = PersonMatcher({"10001": {"小葵"}, "2345678901": {"阿福哥"}})
BODY_MAX = 2000


def verdict(body: str, title: str = "条目", summary: str = "", sources: SourceFacts = GROUP_SOURCES, ids=(1, 2)):  # type: ignore[no-untyped-def]
    return judge_entry(title, summary, body, list(ids), sources, BODY_MAX, PEOPLE)


GENERAL = [
    "本群每周五晚上八点组织开黑，迟到十分钟以上的人请全队喝奶茶。",
    "游戏服务器每周二凌晨两点到六点维护，期间无法登录。",
    "新人入群先看群公告，有问题在群里直接问，不要私聊管理员。",
    "安装步骤：下载 v2.3.1 安装包，解压后运行 setup.exe，按提示选择安装目录。",
    "报名费 480 元，2027 年 1 月 15 日截止，名额 30 人。",
    "官方文档地址 https://docs.example.org/zh/install ，遇到报错先查 FAQ。",
    "How to reset the router: hold the reset button for 10 seconds, then wait 2 minutes.",
    "火锅店推荐：周末人多，建议提前一小时排号。",
]


@pytest.mark.parametrize("body", GENERAL)
def test_general_knowledge_passes(body: str) -> None:
    result = verdict(body)
    assert result.allowed, result.message
    assert result.check().body == body


@pytest.mark.parametrize(
    "sources",
    [
        SourceFacts({1: "group", 2: "private"}),
        SourceFacts({1: "private"}),
    ],
)
def test_a_private_chat_source_is_refused(sources: SourceFacts) -> None:
    result = verdict(GENERAL[0], sources=sources, ids=sources.scope_kinds)
    assert result.reason == "private_source" and "私聊" in result.message


def test_a_source_that_is_not_an_active_fact_is_refused() -> None:
    result = verdict(GENERAL[0], ids=(1, 2, 3))
    assert result.reason == "unknown_source" and "#3" in result.message


def test_an_entry_without_sources_is_allowed() -> None:
    # an operator's or a suggestion's entry derived from no memory
    assert verdict(GENERAL[1], sources=SourceFacts(), ids=()).allowed


@pytest.mark.parametrize(
    "body",
    [
        "有问题加群主 QQ 87654321 私聊。",  # an unknown number next to a QQ cue
        "管理员的qq号是：123456789",
        "报名找扣扣 55667788。",
        "找企鹅号 99887766 的人。",
        "联系 10001 处理退款。",  # a known user's number
        "联系 一零零零一 处理退款。",  # the same in Chinese numerals
        "联系２３４５６７８９０１处理。",  # a known user's number in full-width digits
        "有问题找小葵。",  # a known user's nickname
        "阿福哥负责周末活动。",
        "客服电话 138 1234 5678，工作日可打。",  # a mobile number
        "客服电话 +86 13912345678。",
        "发邮件到 someone.name@example.com 报名。",  # an e-mail address
    ],
)
def test_a_persons_details_are_refused(body: str) -> None:
    result = verdict(body)
    assert result.reason == "person" and "个人信息" in result.message, body


def test_a_persons_details_in_the_title_or_summary_are_refused_too() -> None:
    assert verdict(GENERAL[0], title="小葵的群规").reason == "person"
    assert verdict(GENERAL[0], summary="详情问 QQ 87654321").reason == "person"


@pytest.mark.parametrize(
    "body",
    [
        "服务器 root 密码是 Xk9#pw2027，别外传。",
        "WiFi 密码：qwe12345asd",
        "API key: sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
        "数据库连接串 postgresql://admin:S3cretPass@10.0.0.5:5432/prod",
        "验证码 583920，五分钟内有效。",
    ],
)
def test_secrets_are_refused(body: str) -> None:
    result = verdict(body)
    assert result.reason == "secret" and "敏感" in result.message, body


def test_fields_over_their_limit_or_empty_are_refused() -> None:
    assert verdict("开" * (BODY_MAX + 1)).reason == "too_long"
    assert verdict("开" * BODY_MAX).allowed
    assert verdict(GENERAL[0], title="标" * (TITLE_MAX_CHARS + 1)).reason == "too_long"
    assert verdict(GENERAL[0], summary="摘" * (SUMMARY_MAX_CHARS + 1)).reason == "too_long"
    assert verdict("   ").reason == "empty"
    assert verdict(GENERAL[0], title="\n ").reason == "empty"
    message = verdict("开" * (BODY_MAX + 1)).message
    assert f"{BODY_MAX}" in message and f"{BODY_MAX + 1}" in message


def test_a_refusal_raises_with_the_chinese_reason_and_no_text_in_the_log_detail() -> None:
    result = verdict("有问题找小葵。")
    with pytest.raises(InvalidInput) as caught:
        result.check()
    assert caught.value.zh == result.message and "小葵" not in str(caught.value)


def test_text_is_cleaned_before_it_is_judged() -> None:
    result = verdict("开黑\u200b规则\r\n第二行", title="  群规\n标题  ")
    assert result.allowed and result.draft.title == "群规 标题" and result.draft.body == "开黑规则\n第二行"
    assert verdict("有问题找小\u200b葵。").reason == "person"  # an invisible character hides nothing


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("建议记下：WiFi 密码是 qwe12345asd。", "secret"),
        ("群服务器的 root 密码是 Xk9#pw2027", "secret"),
        ("这个别记：我下周要去面试。", "do_not_remember"),
        ("", "empty"),
        ("建" * (SUGGESTION_MAX_CHARS + 1), "too_long"),
    ],
)
def test_suggestions_are_stored_only_whole_and_clean(text: str, reason: str) -> None:
    result = judge_suggestion(text)
    assert result.reason == reason and result.message
    with pytest.raises(InvalidInput):
        result.check()


def test_a_plain_suggestion_passes() -> None:
    assert judge_suggestion("  建议把周五开黑写进群规。 ").check() == "建议把周五开黑写进群规。"


def test_the_rate_limit() -> None:
    assert suggestion_allowed(0, 3) and suggestion_allowed(2, 3)
    assert not suggestion_allowed(3, 3)
    assert not suggestion_allowed(0, 0)  # 0 turns suggestions off
