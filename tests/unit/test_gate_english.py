"""The gate reads English as it reads Chinese: relative time, places relative to the speaker and
pronouns with nobody named are caught; facts in the style of LoCoMo's (a named person, a date,
"her" pointing back to her) pass; words inside identifiers, quotes and names are not read; a fact
in a script the gate cannot read is not taken for absolute."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.domain.gate import check_fact

pytestmark = pytest.mark.embedded_only

USER = "QQ号10001（昵称Alice）"


def problems(text: str) -> list[tuple[str, str]]:
    return [(problem.kind, problem.word) for problem in check_fact(text).problems]


@pytest.mark.parametrize(
    "text",
    [
        # LoCoMo-style facts: a named person, an absolute date, pronouns pointing back to her
        "Caroline attended an LGBTQ support group on 7 May 2023 and found the transgender stories inspiring.",
        "The support group made Caroline feel accepted and gave her courage to embrace herself.",
        "Melanie painted a lake sunrise in 2022, which holds special meaning to her.",
        "On 8 May 2023, Melanie went swimming with her kids.",
        "On 25 May, 2023, Caroline is inspired by her friends and mentors to start researching adoption agencies.",
        "Caroline plans to continue her education and explore career options in counseling.",
        "Gina opened an online clothing store in January 2023, and it has grown quickly.",
        "Jon has been into dancing since he was a kid and hopes to open a studio in Chicago.",
        "Audrey takes her dogs to the local park in Denver twice a week.",
        "Deborah celebrated Christmas 2022 with her family in Ohio.",
        # habits, ranges and anchors
        "Melanie runs every Saturday morning to destress.",
        "Melanie works Monday to Friday at a bakery in Seattle.",
        "Nate plays chess on Sundays.",
        "John moved to Boston on 2023-05-01; three days later he started a new job.",
        "On 2023-05-08, Caroline met Melanie; the next day they went hiking.",
        "John moved to Boston in March 2021 and the following year he bought a house there.",
        "Caroline finished the marathon two days before the exam.",
        "Anna lives next door to the bakery in Leeds.",
        "Caroline visited her parents in Ohio before Christmas 2023.",
        # existential there, Roman numerals, generic "those", "as soon as"
        "There are five cats in Nate's apartment in Portland.",
        "Mark's grandfather served in World War I as a medic.",
        "John volunteers at a food bank for those in need in Austin.",
        "Caroline calls Melanie as soon as she lands in Paris.",
        # quotes, identifiers and names are not the fact's wording
        'Caroline is reading a book called "Becoming Nicole" by Amy Ellis Nutt.',
        "Caroline loves “Here Comes the Sun” by the Beatles.",
        "QQ号21002164（昵称全栈老司机）的个人网站域名是here-and-now.dev，2027-01-15上线。",
        "QQ号30000002（昵称TodayIsTheDay）用GitHub用户名today-is-the-day提交了PR。",
        "QQ号10001（昵称小明）在 .env 里把 DB_PASSWORD 设为 your_password_here 的占位符。",
        "John uses the I/O library at work.",
        # mixed
        f"{USER}于2026-11-29在成都参加了 the PyCon China conference.",
        f"{USER}likes hiking and she goes to Mount Qingcheng every weekend.",
        f"{USER}的英文签名是 “I will be there tomorrow”。",
    ],
)
def test_absolute_english_facts_pass(text: str) -> None:
    assert check_fact(text).ok, problems(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("He went there tomorrow.", [("pronoun", "He"), ("relative_place", "there"), ("relative_time", "tomorrow")]),
        ("I went to the gym yesterday.", [("pronoun", "I"), ("relative_time", "yesterday")]),
        ("They moved to Shanghai last year.", [("pronoun", "They"), ("relative_time", "last year")]),
        (
            "She will meet me here next week.",
            [("pronoun", "She"), ("pronoun", "me"), ("relative_place", "here"), ("relative_time", "next week")],
        ),
        ("Caroline moved there recently.", [("relative_place", "there"), ("relative_time", "recently")]),
        ("It was great.", [("pronoun", "It")]),
        ("Melanie goes swimming with the kids tonight.", [("relative_time", "tonight")]),
        ("We had dinner at Nando's on Friday.", [("pronoun", "We"), ("relative_time", "Friday")]),
        ("Caroline will fly to Paris in two weeks.", [("relative_time", "in two weeks")]),
        ("John bought this car a few days ago.", [("pronoun", "this"), ("relative_time", "a few days ago")]),
        ("Maria went to a concert the other day.", [("relative_time", "the other day")]),
        ("John will finish the report by the end of the month.", [("relative_time", "the end of the month")]),
        ("Caroline visited her parents before Christmas.", [("relative_time", "before Christmas")]),
        ("Tom works nearby.", [("relative_place", "nearby")]),
        ("Caroline met Melanie the next day.", [("relative_time", "the next day")]),
        ("Anna lives next door.", [("relative_place", "next door")]),
        ("Caroline said that this was the best day of her life.", [("pronoun", "this")]),
        ("Today John started a job at Google.", [("relative_time", "Today")]),
        ("Lately Maria has been running at dawn.", [("relative_time", "Lately")]),
        ("Gina got noticed by fashion editors last Tuesday.", [("relative_time", "last Tuesday")]),
        ("Evan will visit Rome soon.", [("relative_time", "soon")]),
        ("Nate quit his job three years ago.", [("relative_time", "three years ago")]),
        ("Dave has been restoring cars these days.", [("relative_time", "these days")]),
        ("Andrew liked that guy from the gym.", [("pronoun", "that guy")]),
        # mixed English and Chinese
        (
            "We're going to Beijing tomorrow，我们明天见。",
            [("pronoun", "We"), ("relative_time", "tomorrow"), ("pronoun", "我们"), ("relative_time", "明天")],
        ),
        ("小明说 he will come to 成都 next Monday.", [("pronoun", "he"), ("relative_time", "next Monday")]),
        (f"{USER}说 she lives here.", [("relative_place", "here")]),
    ],
)
def test_relative_english_is_caught(text: str, expected: list[tuple[str, str]]) -> None:
    assert problems(text) == expected


@pytest.mark.parametrize(
    "text",
    ["이거 저장하지 마세요", "さっきの話は覚えないでね", "QQ号10001（昵称小明）说 Мы встретимся завтра"],
)
def test_a_fact_the_gate_cannot_read_is_not_absolute(text: str) -> None:
    verdict = check_fact(text)
    assert not verdict.ok and {problem.kind for problem in verdict.problems} == {"unreadable"}
    assert verdict.feedback() == ""  # a retry could not mend it: no feedback, it is kept as not absolute


def test_a_nickname_in_another_script_is_masked() -> None:
    assert check_fact("QQ号10001（昵称さくら）于2026-11-29在东京吃了拉面。").ok
