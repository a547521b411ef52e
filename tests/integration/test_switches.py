"""The per-chat memory switch (``/memory off|on``) and the per-user opt-out (``/memory optout|optin``).

Engine and store tests run on the database of the run (SQLite, or PostgreSQL with
``COGNITION_TEST_BACKEND=server``); the chat-flow tests drive the real Amrita chat flow (nonebug)
with the fake OpenAI-compatible server as the model, and assert on what the model received and
on the rows in SQL.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from chat_helpers import (
    SELF_ID,
    connect_bot,
    deliver,
    group_message,
    memory_engine,
    private_message,
    system_text,
    tool_results,
)
from engine_helpers import NOW, group, historian_llm, make_engine, new_bot, private
from fake_openai import tool_call
from nonebug import App
from sqlalchemy import select

from amrita_plugin_cognition.domain.governance import (
    CHAT_OFF_MESSAGE,
    OTHER_OPTED_OUT_MESSAGE,
    SELF_OPTED_OUT_MESSAGE,
    SwitchState,
)
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import ChatContext, MemoryDraft, Scope
from amrita_plugin_cognition.engine import notes, switches
from amrita_plugin_cognition.engine.historian import TOOL_NAME
from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.errors import InvalidInput, PermissionDenied
from amrita_plugin_cognition.store import audit, jobs
from amrita_plugin_cognition.store import switches as switch_store
from amrita_plugin_cognition.store.models import (
    AuditRow,
    ChatSwitchRow,
    JobRow,
    MemoryRow,
    NoteRow,
    OptOutRow,
    TranscriptRow,
)

PRESET = "cognition-switches-test"
LLM = historian_llm(PRESET)


#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


def said(text: str, user: str, name: str, message_id: str = "m1", at=NOW) -> InputMessage:  # type: ignore[no-untyped-def]
    return InputMessage(message_id=message_id, user_id=user, user_name=name, text=text, at=at)


async def rows(engine, model, *where) -> list[Any]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return list((await session.execute(select(model).where(*where))).scalars())


async def audit_rows(engine, bot: str) -> list[audit.AuditEntry]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return list(reversed(await audit.entries(session, bot)))


def facts_answer(*facts: dict[str, Any]) -> dict[str, Any]:
    return tool_call(TOOL_NAME, {"facts": list(facts)})


def fact(text: str, *sources: int) -> dict[str, Any]:
    return {"text": text, "sources": list(sources) or [1], "kind": "fact"}


def user_prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content")) for message in body["messages"] if message["role"] == "user")


# ------------------------------------------------------------------------------------ the store


async def test_store_keeps_switches_and_opt_outs_per_bot_account(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other_bot = new_bot(), new_bot()
    chat = Scope("group", "30401")
    async with engine.unit_of_work() as uow:
        assert await switch_store.chat_on(uow.session, bot, chat)  # no row: on
        assert await switch_store.set_chat(uow.session, bot, chat, False, "10001", NOW)
        assert await switch_store.opt_out(uow.session, bot, "10002", NOW)
        await uow.commit()
    async with engine.unit_of_work() as uow:
        assert not await switch_store.set_chat(uow.session, bot, chat, False, "10001", NOW)  # already off
        assert not await switch_store.opt_out(uow.session, bot, "10002", NOW)
        assert not await switch_store.chat_on(uow.session, bot, chat)
        assert await switch_store.chat_on(uow.session, other_bot, chat)
        assert await switch_store.load(uow.session, bot) == ({"group:30401"}, {"10002"})
        assert await switch_store.load(uow.session, other_bot) == (set(), set())
        assert await switch_store.opted_out_among(uow.session, bot, ["10001", "10002", ""]) == {"10002"}
        assert await switch_store.opted_out_among(uow.session, other_bot, ["10002"]) == set()
    async with engine.unit_of_work() as uow:
        assert await switch_store.set_chat(uow.session, bot, chat, True, "10003", NOW)
        assert await switch_store.opt_in(uow.session, bot, "10002")
        assert not await switch_store.opt_in(uow.session, bot, "10002")
        await uow.commit()
    (switch,) = await rows(engine, ChatSwitchRow, ChatSwitchRow.bot_id == bot)
    assert switch.memory_on is True and switch.changed_by == "10003"  # who switched it last stays
    assert await rows(engine, OptOutRow, OptOutRow.bot_id == bot) == []


def test_what_an_opt_out_covers() -> None:
    state = SwitchState(frozenset({"group:1"}), frozenset({"10002"}))
    assert not state.chat_on(Scope("group", "1")) and state.chat_on(Scope("group", "2"))
    assert state.touches_opted_out(["10002"]) and not state.touches_opted_out(["10001", ""])
    assert state.touches_opted_out([], ["QQ号10002（昵称小红）喜欢猫"])
    assert state.touches_opted_out([], ["QQ号１０００２喜欢猫"])  # full-width digits are the same number
    assert not state.touches_opted_out([], ["QQ号100021喜欢猫"])  # a longer number is another one
    assert state.without_opted_out(["小明喜欢狗", "10002 喜欢猫"]) == ["小明喜欢狗"]
    nobody = SwitchState()
    texts = ["10002 喜欢猫"]
    assert nobody.without_opted_out(texts) is texts  # nothing scanned when nobody opted out


# ------------------------------------------------------------------------------ the chat switch


async def test_the_switch_persists_in_sql_across_an_engine_restart(tmp_root, chroma_port) -> None:
    bot = new_bot()
    chat = Scope("group", "30402")
    first = await make_engine(tmp_root, chroma_port)
    assert await switches.memory_on(first, bot, chat)
    admin = group(bot, "30402", "10001", "群管", role="admin")
    change = await switches.switch_chat_memory(first, admin, on=False, now=NOW)
    assert change.changed and change.count == 1
    assert not await switches.memory_on(first, bot, chat)  # at once in this process (after commit)

    restarted = await make_engine(tmp_root, chroma_port)
    assert not await switches.memory_on(restarted, bot, chat)
    assert await switches.memory_on(restarted, bot, Scope("group", "30403"))  # another chat is on
    assert await switches.memory_on(restarted, new_bot(), chat)  # the same group of another bot account
    assert not (await switches.switch_chat_memory(restarted, admin, on=False)).changed  # already off

    assert (await switches.switch_chat_memory(restarted, admin, on=True, now=NOW)).changed
    assert await switches.memory_on(restarted, bot, chat)
    entries = await audit_rows(restarted, bot)
    assert [(entry.action, entry.actor, entry.target, entry.count) for entry in entries] == [
        ("switch_off", "10001", "group:30402", 1),
        ("switch_on", "10001", "group:30402", 1),
    ]


async def test_who_may_switch_a_chat(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    with pytest.raises(PermissionDenied, match="群管理员"):
        await switches.switch_chat_memory(engine, group(bot, "30404", "10001", "成员"), on=False)
    assert await switches.memory_on(engine, bot, Scope("group", "30404"))
    assert await audit_rows(engine, bot) == []
    owner = group(bot, "30404", "10002", "群主", role="owner")
    assert (await switches.switch_chat_memory(engine, owner, on=False)).changed
    bot_admin = ChatContext(bot, Scope("group", "30405"), "10003", "机器人管理员", is_bot_admin=True)
    assert (await switches.switch_chat_memory(engine, bot_admin, on=False)).changed
    assert (await switches.switch_chat_memory(engine, private(bot, "10001"), on=False)).changed


async def test_a_switched_off_chat_writes_nothing_by_any_path(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = group(bot, "30406", "10001", "群管", role="admin")
    elsewhere = group(bot, "30407", "10001", "群管")
    await switches.switch_chat_memory(engine, chat, on=False)

    ended = await engine.turns.end(
        chat, "小明说要去杭州", ["QQ号10001（昵称群管）下周去杭州"], batch=[said("下周去杭州", "10001", "群管")]
    )
    assert not ended.note_written and ended.queued == 0 and not ended.opted_out
    assert not await engine.turns.record(chat, said("下周去杭州", "10001", "群管"), "好的", ended=False)
    with pytest.raises(InvalidInput) as refused:
        await engine.memories.write(chat, "group", "群30406每周五开黑。")
    assert refused.value.zh == CHAT_OFF_MESSAGE
    result = await engine.memories.remember(
        bot, [MemoryDraft(text="群30406每周五开黑。", scope=chat.scope, speaker_id="10001")]
    )
    assert result.written == [] and result.refused == [(0, "", "switched_off")]
    for write in (notes.append_memo, notes.update_memo, notes.add_pin):
        with pytest.raises(InvalidInput) as refused:
            await write(engine, chat, "本群每周五开黑")
        assert refused.value.zh == CHAT_OFF_MESSAGE
    in_chat = (NoteRow.bot_id == bot,)
    assert await rows(engine, NoteRow, *in_chat) == []
    assert await rows(engine, TranscriptRow, TranscriptRow.bot_id == bot) == []
    assert await rows(engine, JobRow, JobRow.bot_id == bot) == []
    assert await rows(engine, MemoryRow, MemoryRow.bot_id == bot) == []

    # another chat of the same bot account is unaffected
    assert (await engine.turns.end(elsewhere, "别的群的笔记", [], batch=[])).note_written
    assert await engine.turns.record(elsewhere, said("你好", "10001", "群管"), "你好", ended=False)


async def test_switching_off_calls_off_waiting_work_and_a_job_in_flight_writes_nothing(
    tmp_root, chroma_port, model
) -> None:
    engine = await make_engine(tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 3})
    bot = new_bot()
    admin = group(bot, "30408", "10001", "群管", role="admin")
    batch = [said("我下周去杭州", "10001", "群管")]
    for observation in ("QQ号10001（昵称群管）下周去杭州", "QQ号10001（昵称群管）喜欢爬山"):
        await engine.turns.end(admin, "", [observation], batch=batch, now=NOW)
    for index in range(2):
        await engine.turns.record(admin, said(f"第{index}句", "10001", "群管", f"t{index}"), "好", ended=False)
    async with engine.unit_of_work() as uow:
        (in_flight,) = await jobs.lease(uow.session, NOW, 1, 600)  # a worker holds the first job
        await uow.commit()

    # another process switches the chat off while the model is answering: this engine's cache
    # still says "on", so it asks the model; the commit reads the switch again and writes nothing
    assert await switches.memory_on(engine, bot, admin.scope)
    other_process = await make_engine(tmp_root, chroma_port)
    change = await switches.switch_chat_memory(other_process, admin, on=False, now=NOW)
    assert change.count == 1 + 1 + 2  # the switch row, the queued job, the two waiting turns
    (left,) = await rows(engine, JobRow, JobRow.bot_id == bot)
    assert left.id == in_flight.job_id and left.state == "processing"
    assert all(not turn.pending for turn in await rows(engine, TranscriptRow, TranscriptRow.bot_id == bot))

    from amrita_plugin_cognition.engine import historian

    model.script.append(facts_answer(fact("QQ号10001（昵称群管）计划于2026-12-07去杭州。", 1)))
    report = await historian.process(engine, in_flight, NOW)
    assert len(model.chat_requests) == 1 and report.written == 0
    assert [reason for _, text, reason in report.refused] == ["switched_off"]
    assert await rows(engine, MemoryRow, MemoryRow.bot_id == bot) == []
    assert await rows(engine, JobRow, JobRow.bot_id == bot) == []  # the job is done with

    # a job that reaches a switched-off chat later (queued by another process) is dropped unseen
    assert (await other_process.turns.end(admin, "", ["QQ号10001（昵称群管）喜欢爬山"], batch=batch)).queued == 0
    async with engine.unit_of_work() as uow:
        await jobs.enqueue(uow.session, "observations", bot, admin.scope, {"observations": ["x"]}, NOW)
        await uow.commit()
    model.reset()
    await other_process.historian.run_until_idle(NOW)
    assert model.chat_requests == [] and await rows(engine, MemoryRow, MemoryRow.bot_id == bot) == []
    assert await rows(engine, JobRow, JobRow.bot_id == bot) == []


async def test_another_process_sees_a_switch_within_the_cache_lifetime(tmp_root, chroma_port) -> None:
    bot = new_bot()
    chat = Scope("group", "30409")
    reader = await make_engine(tmp_root, chroma_port)
    reader.switches = switches.SwitchCache(ttl=0.2)
    assert await switches.memory_on(reader, bot, chat)
    writer = await make_engine(tmp_root, chroma_port)
    await switches.set_chat_memory(writer, bot, chat, on=False, actor=Operator())
    import asyncio

    await asyncio.sleep(0.3)
    assert not await switches.memory_on(reader, bot, chat)


# ------------------------------------------------------------------------------------- opt-out


async def test_an_opted_out_user_gets_nothing_new_in_any_chat(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    red, ming = group(bot, "30410", "10002", "小红"), group(bot, "30410", "10001", "小明")
    red_private = private(bot, "10002", "小红")
    kept = await engine.memories.write(red, "user", "QQ号10002（昵称小红）养了一只猫。")
    await engine.turns.record(red, said("我今天好累", "10002", "小红", "t0"), "辛苦了", ended=False)

    change = await switches.set_opt_out(engine, bot, "10002", out=True, actor=private(bot, "10002"), now=NOW)
    assert change.changed and change.count == 1 + 1  # the opt-out row, the waiting turn released
    assert not (await switches.set_opt_out(engine, bot, "10002", out=True, actor=private(bot, "10002"))).changed

    for chat in (red, red_private):
        ended = await engine.turns.end(chat, "小红说她想养狗", ["QQ号10002（昵称小红）想养狗"], batch=[])
        assert ended.opted_out and not ended.note_written and ended.queued == 0
        assert not await engine.turns.record(chat, said("我想养狗", "10002", "小红", "t1"), "好呀", ended=False)
        with pytest.raises(InvalidInput) as refused:
            await engine.memories.write(chat, "user", "QQ号10002（昵称小红）想养狗。")
        assert refused.value.zh == SELF_OPTED_OUT_MESSAGE
        for write in (notes.append_memo, notes.add_pin):
            with pytest.raises(InvalidInput) as refused:
                await write(engine, chat, "小红想养狗")
            assert refused.value.zh == SELF_OPTED_OUT_MESSAGE
    with pytest.raises(InvalidInput) as refused:
        await engine.memories.update(red, kept.id, "QQ号10002（昵称小红）养了两只猫。")
    assert refused.value.zh == SELF_OPTED_OUT_MESSAGE

    # someone else talking about her: what names her QQ number is not written; the rest is
    ended = await engine.turns.end(
        ming,
        "小明说周末去爬山",
        ["QQ号10002（昵称小红）想养狗", "QQ号10001（昵称小明）周末去爬山"],
        batch=[said("小红想养狗，我周末去爬山", "10001", "小明")],
        now=NOW,
    )
    assert ended.note_written and ended.queued == 1
    (job,) = await rows(engine, JobRow, JobRow.bot_id == bot)
    assert json.loads(job.payload)["observations"] == ["QQ号10001（昵称小明）周末去爬山"]
    assert not await engine.turns.record(ming, said("10002 想养狗", "10001", "小明", "t2"), "好", ended=False)
    assert await engine.turns.record(ming, said("我周末去爬山", "10001", "小明", "t3"), "好", ended=False)
    with pytest.raises(InvalidInput) as refused:
        await engine.memories.write(ming, "group", "QQ号10002（昵称小红）想养狗。")
    assert refused.value.zh == OTHER_OPTED_OUT_MESSAGE
    about_her = MemoryDraft(text="她想养狗。", scope=ming.scope, speaker_id="10001", subject_id="10002")
    assert (await engine.memories.remember(bot, [about_her])).refused == [(0, "", "opted_out")]
    assert (await engine.memories.write(ming, "group", "QQ号10001（昵称小明）周末去爬山。")).id

    # what she already had stays
    (still,) = await rows(engine, MemoryRow, MemoryRow.id == kept.id)
    assert still.status == "active"
    turns = await rows(engine, TranscriptRow, TranscriptRow.bot_id == bot, TranscriptRow.user_id == "10002")
    assert [turn.message_id for turn in turns] == ["t0"] and not turns[0].pending  # never extracted

    # opting back in: from then on she is remembered again
    assert (await switches.set_opt_out(engine, bot, "10002", out=False, actor=private(bot, "10002"), now=NOW)).changed
    assert not (await switches.set_opt_out(engine, bot, "10002", out=False, actor=private(bot, "10002"))).changed
    assert (await engine.turns.end(red, "小红说她想养狗", [], batch=[])).note_written
    assert (await engine.memories.write(red, "user", "QQ号10002（昵称小红）想养狗。")).id
    assert await rows(engine, OptOutRow, OptOutRow.bot_id == bot) == []

    entries = await audit_rows(engine, bot)
    assert [(entry.action, entry.actor, entry.target, entry.count) for entry in entries] == [
        ("optout", "10002", "user:10002", 2),
        ("optin", "10002", "user:10002", 1),
    ]
    async with engine.session() as session:
        stored = (await session.execute(select(AuditRow).where(AuditRow.bot_id == bot))).scalars().all()
    dumped = json.dumps([[row.action, row.actor, row.target, row.count] for row in stored], ensure_ascii=False)
    assert "狗" not in dumped and "猫" not in dumped and "小红" not in dumped  # counts, never content


def test_a_name_stands_for_whom_the_text_is_by_or_about() -> None:
    """Two users called 小明 (only one opted out): where the text's own speaker, subject or a
    ``QQ号<id>（昵称小明）`` of the other is written, 小明 is that person; a longer name holding
    the speaker's (小明明) still stands for its own owner."""
    from amrita_plugin_cognition.domain.people import PersonMatcher

    state = SwitchState(frozenset(), frozenset({"10001"}), PersonMatcher({"10001": ["小明"]}))
    assert state.names_opted_out("小明第三次说起羽毛球")  # nobody else is known: 小明 is 10001
    assert not state.names_opted_out("小明第三次说起羽毛球", beside=["小明"])  # said by the other 小明
    assert not state.names_opted_out("QQ号10002（昵称小明）第三次说起羽毛球")
    assert state.names_opted_out("QQ号10001（昵称小明）第三次说起羽毛球", beside=["小明"])  # her number
    longer = SwitchState(frozenset(), frozenset({"10001"}), PersonMatcher({"10001": ["小明明"]}))
    assert longer.names_opted_out("小明明周五打球", beside=["小明"])
    assert not longer.names_opted_out("小明明周五打球", beside=["小明明"])


async def test_an_opt_out_does_not_silence_someone_who_shares_her_nickname(tmp_root, chroma_port) -> None:
    """10001 and 10002 are both 小明; 10001 opts out. 10002's facts (known only from facts, no
    transcript, no note) and his turns that say 小明 are his and are written; a text that gives
    10001's number is not."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    her, him = group(bot, "30420", "10001", "小明"), group(bot, "30420", "10002", "小明")
    await engine.memories.write(her, "user", "小明周五要去打羽毛球。")
    assert (await switches.set_opt_out(engine, bot, "10001", out=True, actor=private(bot, "10001"), now=NOW)).changed

    assert (await engine.memories.write(him, "user", "小明第二次说起考研的事。")).id
    draft = MemoryDraft(
        text="QQ号10002（昵称小明）周末搬家。", scope=him.scope, speaker_id="10002", speaker_name="小明"
    )
    assert len((await engine.memories.remember(bot, [draft])).written) == 1
    ended = await engine.turns.end(him, "小明说周末搬家", ["小明周末搬家"], batch=[said("我周末搬家", "10002", "小明")])
    assert ended.note_written and ended.queued == 1
    assert await engine.turns.record(him, said("小明我周末搬家", "10002", "小明", "t1"), "好", ended=False)
    with pytest.raises(InvalidInput) as refused:
        await engine.memories.write(him, "group", "QQ号10001（昵称小明）周末搬家。")
    assert refused.value.zh == OTHER_OPTED_OUT_MESSAGE


async def test_the_historian_drops_every_fact_about_an_opted_out_user(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(
        tmp_root,
        chroma_port,
        llm=LLM,
        historian={"job_max_attempts": 3, "transcript_batch_turns": 10},
        profiles={"merge": False},  # the facts are what this test counts; merges have their own tests
    )
    bot = new_bot()
    red, ming = group(bot, "30411", "10002", "小红"), group(bot, "30411", "10001", "小明")
    # queued while she was still in: her own ``end`` job, and turns waiting for extraction
    await engine.turns.end(red, "", ["QQ号10002（昵称小红）想养狗"], batch=[said("我想养狗", "10002", "小红")], now=NOW)
    await engine.turns.record(red, said("我下个月搬去杭州", "10002", "小红", "r1"), "好的", ended=False)
    await engine.turns.record(ming, said("我周末去爬山", "10001", "小明", "m1"), "好的", ended=False)
    from amrita_plugin_cognition.engine.turns import flush_transcripts

    assert await flush_transcripts(engine, NOW + timedelta(hours=1), everything=True) == 1
    await switches.set_opt_out(engine, bot, "10002", out=True, actor=private(bot, "10002"), now=NOW)

    # her ``end`` job never reaches the model; the transcript job reaches it without her turn,
    # and of what comes back, the fact that names her is dropped
    model.script.append(
        facts_answer(
            fact("QQ号10001（昵称小明）于2026-12-05去爬山。", 1),
            fact("QQ号10001（昵称小明）说QQ号10002（昵称小红）计划于2026-12搬到杭州。", 1),
        )
    )
    await engine.historian.run_until_idle(NOW + timedelta(hours=1))
    assert len(model.chat_requests) == 1
    prompt = user_prompt(model.chat_requests[0])
    assert "我周末去爬山" in prompt and "搬去杭州" not in prompt and "想养狗" not in prompt
    facts = await rows(engine, MemoryRow, MemoryRow.bot_id == bot)
    assert [row.text for row in facts] == ["QQ号10001（昵称小明）于2026-12-05去爬山。"]
    assert await rows(engine, JobRow, JobRow.bot_id == bot) == []


async def test_an_opt_out_made_while_the_model_answers_still_drops_her_facts(tmp_root, chroma_port, model) -> None:
    engine = await make_engine(tmp_root, chroma_port, llm=LLM, historian={"job_max_attempts": 3})
    bot = new_bot()
    ming = group(bot, "30412", "10001", "小明")
    observations = ["QQ号10001（昵称小明）喜欢爬山", "QQ号10002（昵称小红）周末去爬山"]
    await engine.turns.end(ming, "", observations, batch=[], now=NOW)
    async with engine.unit_of_work() as uow:
        (in_flight,) = await jobs.lease(uow.session, NOW, 1, 600)
        await uow.commit()
    assert await switches.memory_on(engine, bot, ming.scope)  # this engine's cache: nobody opted out
    other_process = await make_engine(tmp_root, chroma_port)
    await switches.set_opt_out(other_process, bot, "10002", out=True, actor=private(bot, "10002"), now=NOW)

    from amrita_plugin_cognition.engine import historian

    model.script.append(
        facts_answer(
            fact("QQ号10001（昵称小明）喜欢爬山。", 1),
            fact("QQ号10002（昵称小红）计划于2026-12-05去爬山。", 2),
        )
    )
    report = await historian.process(engine, in_flight, NOW)
    assert report.written == 1 and [reason for _, text, reason in report.refused] == ["opted_out"]
    assert [row.text for row in await rows(engine, MemoryRow, MemoryRow.bot_id == bot)] == [
        "QQ号10001（昵称小明）喜欢爬山。"
    ]


# ----------------------------------------------------------------------------- the chat flow

BOT = str(SELF_ID)


async def _seed(scope: Scope, text: str, speaker: str = "10001", name: str = "小明") -> None:
    engine = await memory_engine()
    await engine.memories.remember(BOT, [MemoryDraft(text=text, scope=scope, speaker_id=speaker, speaker_name=name)])
    await engine.index.drain()


async def _chat_rows(model, *where) -> list[Any]:  # type: ignore[no-untyped-def]
    return await rows(await memory_engine(), model, *where)


@pytest.mark.chatflow
async def test_memory_off_in_a_group(app: App, fake_openai, monkeypatch) -> None:
    fact_text = "群30421约定每周六晚上九点在网吧开黑。"
    await _seed(Scope("group", "30421"), fact_text, speaker="10421", name="阿杰")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, group_message("我们每周六几点开黑？", 30421, 10421, "阿杰"))
        assert fact_text in system_text(fake_openai.chat_requests[0])  # memory is on: injected

        await deliver(bot, group_message("/memory off", 30421, 10421, "阿杰", to_me=False))
        assert "只有群管理员" in qq.sent[-1]  # a plain member may not
        await deliver(bot, group_message("/memory off", 30421, 10422, "群管", role="admin", to_me=False))
        assert qq.sent[-1].startswith("本群的记忆已关闭：关闭期间不会记录、注入或整理本群的任何内容；已有记忆保留。")
        await deliver(bot, group_message("/cogmem off", 30421, 10422, "群管", role="admin", to_me=False))
        assert qq.sent[-1].startswith("本群的记忆已经是关闭的")
        chat = Scope("group", "30421")
        turns_before = len(await _chat_rows(TranscriptRow, TranscriptRow.scope_id == chat.id))

        fake_openai.reset()
        fake_openai.script.append(tool_call("end", {"memo": "阿杰问开黑时间", "observations": ["QQ号10421喜欢开黑"]}))
        fake_openai.script.append(
            tool_call("cognition_memory_write", {"content": "群30421改成周日开黑。", "scope": "group"}, "c2")
        )
        await deliver(bot, group_message("我们每周六几点开黑？以后改周日吧", 30421, 10421, "阿杰"))
        bodies = list(fake_openai.chat_requests)
        assert bodies and all(fact_text not in system_text(body) for body in bodies)  # nothing injected
        results = [result for body in bodies for result in tool_results(body)]
        assert results and all(result == {"ok": False, "error": "本会话已关闭记忆功能"} for result in results)
        assert len(await _chat_rows(TranscriptRow, TranscriptRow.scope_id == chat.id)) == turns_before
        assert await _chat_rows(NoteRow, NoteRow.scope_id == chat.id) == []
        assert await _chat_rows(JobRow, JobRow.scope_id == chat.id) == []
        texts = [row.text for row in await _chat_rows(MemoryRow, MemoryRow.scope_id == chat.id)]
        assert texts == [fact_text]  # what was there stays

        # the switch belongs to this group only
        fake_openai.reset()
        await deliver(bot, group_message("随便聊聊", 30422, 10421, "阿杰"))
        assert await _chat_rows(TranscriptRow, TranscriptRow.scope_id == "30422")

        await deliver(bot, group_message("/memory on", 30421, 10422, "群管", role="admin", to_me=False))
        assert qq.sent[-1] == "本群的记忆已开启：之后的对话会照常记录和使用。"
        fake_openai.reset()
        await deliver(bot, group_message("我们每周六几点开黑？", 30421, 10421, "阿杰"))
        assert fact_text in system_text(fake_openai.chat_requests[0])
        assert len(await _chat_rows(TranscriptRow, TranscriptRow.scope_id == chat.id)) == turns_before + 1

    engine = await memory_engine()
    async with engine.session() as session:
        entries = [entry for entry in await audit.entries(session, BOT) if entry.target == "group:30421"]
    assert [(entry.action, entry.actor) for entry in reversed(entries)] == [
        ("switch_off", "10422"),
        ("switch_on", "10422"),
    ]


@pytest.mark.chatflow
async def test_memory_off_in_a_private_chat(app: App, fake_openai, monkeypatch) -> None:
    fact_text = "小周养了一只叫年糕的柯基。"
    await _seed(Scope("private", "10431"), fact_text, speaker="10431", name="小周")
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, private_message("/memory off", 10431, "小周"))
        assert qq.sent[-1].startswith("我们私聊的记忆已关闭")
        fake_openai.reset()
        await deliver(bot, private_message("我的狗叫什么来着", 10431, "小周"))
        assert fact_text not in system_text(fake_openai.chat_requests[0])
        assert await _chat_rows(TranscriptRow, TranscriptRow.scope_id == "10431") == []
        await deliver(bot, private_message("/memory on", 10431, "小周"))
        assert qq.sent[-1].startswith("我们私聊的记忆已开启")
        fake_openai.reset()
        await deliver(bot, private_message("我的狗叫什么来着", 10431, "小周"))
        assert fact_text in system_text(fake_openai.chat_requests[0])


@pytest.mark.chatflow
async def test_optout_and_optin_in_the_chat_flow(app: App, fake_openai, monkeypatch) -> None:
    def of(user: str):  # type: ignore[no-untyped-def]
        return _chat_rows(TranscriptRow, TranscriptRow.bot_id == BOT, TranscriptRow.user_id == user)

    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        try:
            await deliver(bot, group_message("/memory optout", 30441, 10441, "小红", to_me=False))
            assert qq.sent[-1].startswith("已为你关闭记忆：从现在起，在所有会话里都不会再记录关于你的新内容")
            await deliver(bot, group_message("/memory optout", 30441, 10441, "小红", to_me=False))
            assert qq.sent[-1].startswith("你已经选择了不被记住")

            fake_openai.reset()
            fake_openai.script.append(tool_call("end", {"memo": "小红想养狗", "observations": ["QQ号10441想养狗"]}))
            await deliver(bot, group_message("我想养一只狗", 30441, 10441, "小红"))
            result = tool_results(fake_openai.chat_requests[-1])[-1]
            assert result["ok"] is True and result["noted"] is False and "不被记忆" in result["note"]
            fake_openai.reset()
            fake_openai.script.append(
                tool_call("cognition_memory_write", {"content": "QQ号10441想养狗。", "scope": "user"}, "c3")
            )
            await deliver(bot, private_message("记住我想养狗", 10441, "小红"))
            result = tool_results(fake_openai.chat_requests[-1])[-1]
            assert result == {"ok": False, "error": SELF_OPTED_OUT_MESSAGE}
            await deliver(bot, group_message("我周末去爬山", 30441, 10442, "小明"))  # someone else: as usual
            assert await of("10441") == [] and len(await of("10442")) == 1
            assert await _chat_rows(NoteRow, NoteRow.bot_id == BOT, NoteRow.user_id == "10441") == []
            assert await _chat_rows(JobRow, JobRow.bot_id == BOT) == []
        finally:
            await deliver(bot, private_message("/memory optin", 10441, "小红"))
        assert qq.sent[-1] == "已为你恢复记忆：之后关于你的内容会照常记录。"
        await deliver(bot, private_message("/memory optin", 10441, "小红"))
        assert qq.sent[-1] == "你没有关闭过记忆，无需恢复。"
        await deliver(bot, group_message("我想养一只狗", 30441, 10441, "小红"))
        assert len(await of("10441")) == 1


@pytest.mark.chatflow
async def test_the_usage_and_the_menu_name_the_switches(app: App, fake_openai, monkeypatch) -> None:
    from amrita_plugin_cognition.bot.commands import MENU_ENTRY, USAGE

    assert "/memory off | on" in USAGE and "/memory optout | optin" in USAGE
    assert any("/memory optout" in line for line in MENU_ENTRY["usage"])  # type: ignore[union-attr]
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        await deliver(bot, private_message("/memory off now", 10451, "小钱"))
        assert qq.sent[-1].startswith("/memory off 后面不需要参数")
    assert await _chat_rows(ChatSwitchRow, ChatSwitchRow.scope_id == "10451") == []
