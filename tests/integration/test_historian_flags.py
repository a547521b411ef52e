"""The historian model's flags as a second opinion on admission (issue 21), against the fake model:
a fact flagged ``secret``, ``do_not_remember`` or ``about_someone_else`` is never written, never
reaches a card (the merge runs) or a note; an unflagged one is written as before; a model that
omits the flags (or sends them loosely typed) still works; and an observation or a turn the rules
refused on the way in never reaches the model's prompt."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from engine_helpers import NOW, facts_of, group, historian_llm, jobs_left, make_engine, new_bot
from fake_openai import tool_call

from amrita_plugin_cognition.domain.admission import FLAGGED_REASONS, SecondOpinion, admit, judge
from amrita_plugin_cognition.engine import historian, profiles
from amrita_plugin_cognition.engine.historian import TOOL_NAME
from amrita_plugin_cognition.engine.historian_facts import RewriteAnswer
from amrita_plugin_cognition.engine.profile_prompt import TOOL_NAME as MERGE_TOOL
from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.store import jobs, short_term

PRESET = "cognition-historian-test"
LLM = historian_llm(PRESET)
WINDOW = 120
LATER = NOW + timedelta(seconds=WINDOW + 1)

KEPT = "QQ号10001（昵称小明）喜欢打羽毛球。"
#: Observations the rules let through; the model's flags are all that keeps them out.
SOMEONE_ELSE = "QQ号10001（昵称小明）说同事老王最近确诊了抑郁症，正在吃药"
DOOR_CODE = "QQ号10001（昵称小明）家里的门禁是井号后面加上他妈妈的生日"
NOT_AGAIN = "QQ号10001（昵称小明）说体检结果的事他不想以后再被提起"


#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


def facts_answer(*facts: dict[str, Any]) -> dict[str, Any]:
    return tool_call(TOOL_NAME, {"facts": list(facts)})


def fact(text: str, *sources: int, **flags: Any) -> dict[str, Any]:
    return {"text": text, "sources": list(sources) or [1], "kind": "fact", **flags}


def user_prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content")) for message in body["messages"] if message["role"] == "user")


def tool_of(body: dict[str, Any]) -> str:
    return next((tool["function"]["name"] for tool in body.get("tools", [])), "")


async def end(engine, chat, *observations: str, memo: str = "", said: str = "今天聊了些家常"):  # type: ignore[no-untyped-def]
    batch = [InputMessage("m1", chat.user_id, chat.user_name, said, NOW)]
    return await engine.turns.end(chat, memo, list(observations), batch=batch, now=NOW)


async def run_one(engine) -> historian.JobReport:  # type: ignore[no-untyped-def]
    async with engine.unit_of_work() as uow:
        (held,) = await jobs.lease(uow.session, NOW, 1, 600)
        await uow.commit()
    return await historian.process(engine, held, NOW)


# ------------------------------------------------------------------------------ the schema and the rule


def test_flags_are_false_when_absent_and_read_loosely_when_given() -> None:
    answer = RewriteAnswer.model_validate_json(
        json.dumps(
            {
                "facts": [
                    {"text": "a"},
                    {"text": "b", "secret": "true", "do_not_remember": None, "about_someone_else": 0},
                    {"text": "c", "secret": 0, "do_not_remember": 1, "about_someone_else": "false"},
                    {"text": "d", "about_someone_else": "是", "secret": "否", "do_not_remember": ""},
                ]
            }
        )
    )
    assert [fact.opinion for fact in answer.facts] == [
        SecondOpinion(),
        SecondOpinion(secret=True),
        SecondOpinion(do_not_remember=True),
        SecondOpinion(about_someone_else=True),
    ]


def test_judge_puts_the_rules_first_and_the_flags_after_them() -> None:
    secret = "我的支付密码是739156，你帮我记着"
    assert judge(secret, SecondOpinion(about_someone_else=True)).reason == "credential"  # the rules' reason stands
    assert judge(KEPT).admit and judge(KEPT, SecondOpinion()).admit
    for opinion, reason in [
        (SecondOpinion(secret=True), "flagged_secret"),
        (SecondOpinion(do_not_remember=True), "flagged_do_not_remember"),
        (SecondOpinion(about_someone_else=True), "flagged_about_someone_else"),
    ]:
        verdict = judge(KEPT, opinion)
        assert not verdict.admit and verdict.reason == reason and verdict.message
    redacted = "小明的wifi密码是 lz88996677，他明天搬家去杭州住新房子"
    assert admit(redacted).redacted  # the rules would keep it, redacted; a flag refuses it whole
    assert not judge(redacted, SecondOpinion(secret=True)).admit


# ------------------------------------------------------------------------------ the historian's path


async def test_a_flagged_fact_is_never_written_nor_merged_into_a_card_nor_a_note(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(
        tmp_root,
        chroma_port,
        llm=LLM,
        historian={"job_max_attempts": 2, "capture": "end"},
        profiles={"merge": True, "merge_window_seconds": WINDOW},
    )
    bot = new_bot()
    chat = group(bot, "30001", "10001", "小明")
    await end(engine, chat, KEPT, SOMEONE_ELSE, DOOR_CODE, NOT_AGAIN, memo="小明喜欢打羽毛球")
    merge_prompts: list[str] = []

    def respond(body: dict[str, Any]) -> dict[str, Any] | None:
        if tool_of(body) == TOOL_NAME:  # the flags loosely typed, as a lax model sends them
            return facts_answer(
                fact(KEPT, 1),
                fact(SOMEONE_ELSE + "。", 2, about_someone_else=True),
                fact(DOOR_CODE + "。", 3, secret="true"),
                fact(NOT_AGAIN + "。", 4, do_not_remember=1),
            )
        if tool_of(body) == MERGE_TOOL:
            merge_prompts.append(user_prompt(body))
            arguments = {"action": "update_profile", "evaluation": "普通人", "body": "喜欢打羽毛球", "roast": "话少"}
            entity = "group" if "entity_type=group" in user_prompt(body) else "user"
            number = "30001" if entity == "group" else "10001"
            return tool_call(
                MERGE_TOOL, {**arguments, "entity_type": entity, "entity_id": number, "name": "", "tags": []}
            )
        return None

    model.responder = respond
    report = await run_one(engine)
    assert report.llm_calls == 1  # a flagged fact is no gate failure and covers its observation: no retry
    assert report.written == 1
    assert sorted(reason for _, _, reason in report.refused) == sorted(FLAGGED_REASONS)
    assert all(text == "" for _, text, _ in report.refused)  # reported without the text
    assert [row.text for row in await facts_of(engine, bot)] == [KEPT]  # never kept "as said" instead

    await engine.historian.run_until_idle(LATER)  # the card merges the written facts call for
    assert merge_prompts, "the kept fact should have asked for a merge"
    for prompt in merge_prompts:
        assert KEPT in prompt
        assert not any(word in prompt for word in ("抑郁症", "门禁", "体检"))
    for entity, number, part in (("group", "30001", "group"), ("user", "10001", "group:30001")):
        card = await profiles.get(engine, bot, entity, number, part)
        assert card is not None and not any(word in card.body for word in ("抑郁症", "门禁", "体检"))
    async with engine.session() as session:
        notes = await short_term.recent_notes(session, bot, chat.scope, 20)
    assert [note.content for note in notes] == ["小明喜欢打羽毛球"]  # the memo alone: no fact becomes a note
    assert [(job.kind, job.state, job.attempts, job.last_error[:120]) for job in await jobs_left(engine)] == []


async def test_a_model_that_omits_the_flags_is_written_as_before(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(
        tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 2}, profiles={"merge": False}
    )
    bot = new_bot()
    await end(engine, group(bot, "30002", "10001", "小明"), KEPT, SOMEONE_ELSE)
    model.script.append(
        facts_answer(
            {"text": KEPT, "sources": [1]},  # no flags at all
            fact(SOMEONE_ELSE + "。", 2, secret=False, do_not_remember="false", about_someone_else=None),
        )
    )
    report = await run_one(engine)
    assert report.written == 2 and report.refused == []
    assert [row.text for row in await facts_of(engine, bot)] == [KEPT, SOMEONE_ELSE + "。"]


async def test_a_request_covers_every_fact_of_its_observation(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(
        tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 2}, profiles={"merge": False}
    )
    bot = new_bot()
    await end(engine, group(bot, "30003", "10001", "小明"), NOT_AGAIN, KEPT)
    model.script.append(
        facts_answer(
            fact("QQ号10001（昵称小明）做了体检。", 1, do_not_remember=True),
            fact("QQ号10001（昵称小明）不想再提体检结果。", 1),  # the same observation, unflagged
            fact(KEPT, 2),
        )
    )
    report = await run_one(engine)
    assert [row.text for row in await facts_of(engine, bot)] == [KEPT]
    assert [reason for _, _, reason in report.refused] == ["flagged_do_not_remember"] * 2


async def test_an_observation_kept_as_said_carries_the_flags_of_its_facts(tmp_root, chroma_port, model) -> None:
    """A fact that loses an id twice is replaced by its observation as said; when another fact of
    that observation was flagged, what was said is flagged too (it holds the flagged matter)."""
    engine = await make_engine(
        tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 2}, profiles={"merge": False}
    )
    bot = new_bot()
    said = "QQ号10001（昵称小明）说表姐在闹离婚，自己下周把订单20261130889寄给她"
    assert admit(said).stored_as_is
    await end(engine, group(bot, "30004", "10001", "小明"), said, KEPT)
    answer = facts_answer(
        fact("QQ号10001（昵称小明）的表姐在闹离婚。", 1, about_someone_else=True),
        fact("QQ号10001（昵称小明）下周要寄一个订单给表姐。", 1),  # the order number went missing
        fact(KEPT, 2),
    )
    model.script.extend([answer, answer])
    report = await run_one(engine)
    assert report.llm_calls == 2  # the drift is retried; the flagged fact is not named in the feedback
    retry = user_prompt(model.chat_requests[1])
    assert "20261130889" in retry and "闹离婚。”" not in retry
    assert [row.text for row in await facts_of(engine, bot)] == [KEPT]
    assert [reason for _, _, reason in report.refused] == ["flagged_about_someone_else"] * 2


async def test_a_flag_stays_with_its_text_through_an_extraction_retry(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(
        tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 2, "transcript_batch_turns": 2},
        profiles={"merge": False},
    )  # fmt: skip
    bot = new_bot()
    chat = group(bot, "30005", "10001", "小明")
    for index, text in enumerate(["我表姐最近在闹离婚", "我明天去北京"]):
        message = InputMessage(f"t{index}", "10001", "小明", text, NOW + timedelta(seconds=index))
        await engine.turns.record(chat, message, "好的", ended=False)
    private_matter = "QQ号10001（昵称小明）的表姐在闹离婚。"
    model.script.append(facts_answer(fact(private_matter, 1, about_someone_else=True), fact("他明天去北京。", 2)))
    model.script.append(facts_answer(fact(private_matter, 1), fact("QQ号10001（昵称小明）计划于2026-12-01去北京。", 2)))
    await engine.historian.run_until_idle(NOW + timedelta(minutes=5))
    assert len(model.chat_requests) == 2  # the gate's retry, which the second answer takes whole
    assert [row.text for row in await facts_of(engine, bot)] == ["QQ号10001（昵称小明）计划于2026-12-01去北京。"]


# ------------------------------------------------------------------------------ refused on the way in


SECRET_CODE = "583920"
REFUSED_SECRET = f"验证码 {SECRET_CODE}，五分钟内有效"
REFUSED_REQUEST = "这个别记下来：我下周要去医院复查"


async def test_an_observation_the_rules_refused_never_reaches_the_model(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(
        tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 2}, profiles={"merge": False}
    )
    bot = new_bot()
    chat = group(bot, "30006", "10001", "小明")
    result = await end(engine, chat, KEPT, REFUSED_SECRET, REFUSED_REQUEST, said=f"我喜欢打羽毛球，{REFUSED_SECRET}")
    assert result.queued == 1 and sorted(reason for _, reason in result.refused) == ["credential", "do_not_remember"]
    model.script.append(facts_answer(fact(KEPT, 1)))
    await engine.historian.run_until_idle(NOW)
    (request,) = model.chat_requests
    prompt = "\n".join(str(message.get("content")) for message in request["messages"])
    assert "羽毛球" in prompt
    assert SECRET_CODE not in prompt and "医院复查" not in prompt and "别记下来" not in prompt
    assert "[观察#2]" not in prompt  # one observation was queued: the refused ones are not numbered either
    assert [row.text for row in await facts_of(engine, bot)] == [KEPT]


async def test_a_turn_the_rules_refused_never_reaches_an_extraction_or_a_later_job(
    tmp_root, chroma_port, model
) -> None:
    engine = await make_engine(
        tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 2, "transcript_batch_turns": 3},
        profiles={"merge": False},
    )  # fmt: skip
    bot = new_bot()
    chat = group(bot, "30007", "10001", "小明")
    said = ["我喜欢打羽毛球", REFUSED_SECRET, REFUSED_REQUEST, "周末我去爬山", "我养了一只猫"]
    waiting = []
    for index, text in enumerate(said):
        message = InputMessage(f"t{index}", "10001", "小明", text, NOW + timedelta(seconds=index))
        waiting.append(await engine.turns.record(chat, message, "好的", ended=False))
    assert waiting == [True, False, False, True, True]  # the refused turns are not even logged
    model.script.append(facts_answer(fact("QQ号10001（昵称小明）喜欢打羽毛球。", 1)))
    await engine.historian.run_until_idle(NOW + timedelta(minutes=5))
    # a later end job's recent messages come from the same transcript
    await end(engine, chat, KEPT)
    model.script.append(facts_answer(fact(KEPT, 1)))
    await engine.historian.run_until_idle(NOW + timedelta(minutes=6))
    assert len(model.chat_requests) == 2
    for request in model.chat_requests:
        prompt = "\n".join(str(message.get("content")) for message in request["messages"])
        assert SECRET_CODE not in prompt and "医院复查" not in prompt
    assert "爬山" in user_prompt(model.chat_requests[0]) and "爬山" in user_prompt(model.chat_requests[1])
