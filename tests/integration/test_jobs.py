"""The durable job queue, the ``end`` tool's transaction and transcript capture, on the real
database of the run (SQLite, or PostgreSQL in server mode)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from engine_helpers import NOW, empty_job_queue, group, make_engine, new_bot, private
from sqlalchemy import func, select, update

from amrita_plugin_cognition.domain.job_kinds import BACKGROUND_PATIENCE_SECONDS, MERGE_JOB
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.engine import queue
from amrita_plugin_cognition.engine.context import build_context
from amrita_plugin_cognition.engine.turns import InputMessage, flush_transcripts
from amrita_plugin_cognition.store import jobs
from amrita_plugin_cognition.store.models import JobRow, NoteRow, TranscriptRow


@pytest.fixture(autouse=True)
async def _empty_queue():  # type: ignore[no-untyped-def]
    await empty_job_queue()
    yield
    await empty_job_queue()


def message(text: str, user: str = "10001", name: str = "小明", at=NOW, message_id: str = "m1") -> InputMessage:
    return InputMessage(message_id=message_id, user_id=user, user_name=name, text=text, at=at)


async def job_rows(engine) -> list[JobRow]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return list((await session.execute(select(JobRow).order_by(JobRow.id))).scalars())


# ------------------------------------------------------------------------------ the queue


async def enqueue(engine, bot: str, count: int, at=NOW) -> None:  # type: ignore[no-untyped-def]
    async with engine.unit_of_work() as uow:
        for index in range(count):
            moment = at + timedelta(seconds=index)
            await jobs.enqueue(uow.session, "observations", bot, Scope("group", "1"), {"n": index}, moment)
        await uow.commit()


async def test_leases_are_fifo_exclusive_and_finish_only_with_the_token(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await enqueue(engine, bot, 3)

    async def lease_one():  # type: ignore[no-untyped-def]
        async with engine.unit_of_work() as uow:
            leased = await jobs.lease(uow.session, NOW + timedelta(minutes=1), 1, 60)
            await uow.commit()
        return leased

    # concurrent workers never get the same job
    results = await asyncio.gather(*(lease_one() for _ in range(5)))
    leased = [held for result in results for held in result]
    assert sorted(held.payload["n"] for held in leased) == [0, 1, 2]
    assert len({held.job_id for held in leased}) == 3
    first = min(leased, key=lambda held: held.payload["n"])

    # a stranger's token cannot complete it; the holder's can, once
    stranger = jobs.Lease(first.job_id, "0" * 32, first.kind, bot, first.scope, {}, 0, NOW)
    async with engine.unit_of_work() as uow:
        assert not await jobs.finish(uow.session, stranger)
        assert await jobs.finish(uow.session, first)
        assert not await jobs.finish(uow.session, first)
        await uow.commit()
    assert len(await job_rows(engine)) == 2


async def test_asked_for_facts_then_transcript_facts_are_leased_before_card_merges_that_have_not_waited_long(
    tmp_root, chroma_port
) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    now = NOW + timedelta(hours=1)
    async with engine.unit_of_work() as uow:
        # card merges queued ten minutes ago and due 30 s ago, in a burst (their coalescing window)
        for index in range(3):
            await jobs.enqueue(
                uow.session,
                MERGE_JOB,
                bot,
                Scope("group", "1"),
                {"m": index},
                now - timedelta(minutes=10),
                not_before=now - timedelta(seconds=30),
            )
        await jobs.enqueue(uow.session, "observations", bot, Scope("group", "1"), {"n": 0}, now - timedelta(seconds=5))
        # a merge due for longer than the patience is leased in its turn among them, oldest due first
        await jobs.enqueue(
            uow.session,
            MERGE_JOB,
            bot,
            Scope("group", "2"),
            {"m": "late"},
            now - timedelta(minutes=20),
            not_before=now - timedelta(seconds=BACKGROUND_PATIENCE_SECONDS + 60),
        )
        await jobs.enqueue(uow.session, "transcript", bot, Scope("group", "3"), {"n": 1}, now - timedelta(seconds=2))
        # a transcript batch due before the end call's observations still waits for them
        await jobs.enqueue(uow.session, "transcript", bot, Scope("group", "4"), {"n": 2}, now - timedelta(seconds=20))
        await uow.commit()

    async def lease_one() -> jobs.Lease:
        async with engine.unit_of_work() as uow:
            (held,) = await jobs.lease(uow.session, now, 1, 60)
            await uow.commit()
        return held

    order = [(held.kind, held.payload) for held in [await lease_one() for _ in range(7)]]
    assert order == [
        (MERGE_JOB, {"m": "late"}),
        ("observations", {"n": 0}),
        ("transcript", {"n": 2}),
        ("transcript", {"n": 1}),
        (MERGE_JOB, {"m": 0}),
        (MERGE_JOB, {"m": 1}),
        (MERGE_JOB, {"m": 2}),
    ]


async def test_failures_back_off_then_fail_and_can_be_retried_or_dropped(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    await enqueue(engine, new_bot(), 1)
    moment = NOW + timedelta(minutes=1)
    states = []
    for _ in range(3):
        async with engine.unit_of_work() as uow:
            (held,) = await jobs.lease(uow.session, moment, 1, 60)
            states.append(await jobs.fail(uow.session, held, "boom", moment, max_attempts=3))
            await uow.commit()
        row = (await job_rows(engine))[0]
        if row.next_attempt_at is not None:
            # not due again before its backoff
            async with engine.unit_of_work() as uow:
                assert await jobs.lease(uow.session, moment, 1, 60) == []
            moment = row.next_attempt_at + timedelta(seconds=1)
    assert states == ["pending", "pending", "failed"]
    (row,) = await job_rows(engine)
    assert row.state == "failed" and row.attempts == 3 and row.last_error == "boom"

    listed = await queue.list_jobs(engine, "dead")
    assert [item["id"] for item in listed] == [row.id]
    assert [item["state"] for item in listed] == ["dead"]  # stored as 'failed', said as the outbox says it
    assert [item["id"] for item in await queue.list_jobs(engine, "failed")] == [row.id]  # the old word still works
    assert await queue.retry_jobs(engine) == 1
    (row,) = await job_rows(engine)
    assert row.state == "pending" and row.attempts == 0
    assert await queue.drop_jobs(engine, [row.id]) == 1
    assert await job_rows(engine) == []


async def test_a_lease_that_outlives_its_timeout_is_recovered_while_running(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, historian={"job_lease_seconds": 30})
    await enqueue(engine, new_bot(), 1)
    async with engine.unit_of_work() as uow:
        (held,) = await jobs.lease(uow.session, NOW, 1, 30)
        await uow.commit()
    # the worker vanished; a later tick (no restart) takes the job back
    async with engine.unit_of_work() as uow:
        assert await jobs.recover_expired(uow.session, NOW + timedelta(seconds=10), 4) == (0, 0)
        assert await jobs.recover_expired(uow.session, NOW + timedelta(seconds=31), 4) == (1, 0)
        await uow.commit()
    (row,) = await job_rows(engine)
    assert row.state == "pending" and row.attempts == 1 and row.lease_token is None
    # the old holder can no longer complete it
    async with engine.unit_of_work() as uow:
        assert not await jobs.finish(uow.session, held)


async def test_failed_jobs_are_pruned_by_age_and_count(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    await enqueue(engine, new_bot(), 5)
    async with engine.unit_of_work() as uow:
        for held in await jobs.lease(uow.session, NOW + timedelta(minutes=1), 5, 60):
            await jobs.fail(uow.session, held, "boom", NOW + timedelta(days=held.payload["n"] * 10), max_attempts=1)
        await uow.commit()
    async with engine.unit_of_work() as uow:
        # older than 25 days at day 40: n=0,1 go; then only the newest 2 of the rest stay
        pruned = await jobs.prune_dead(uow.session, NOW + timedelta(days=40), keep=2, max_age_days=25)
        await uow.commit()
    assert pruned == 3
    remaining = await job_rows(engine)
    assert sorted(row.payload for row in remaining) == ['{"n": 3}', '{"n": 4}']


# ----------------------------------------------------------------------------- the end tool


async def test_end_writes_the_note_and_one_job_with_everything_the_historian_needs(tmp_root, chroma_port) -> None:
    engine = await make_engine(
        tmp_root, chroma_port, historian={"recent_messages_k": 3, "source_message_max_chars": 30}
    )
    bot = new_bot()
    chat = group(bot, "30001", "10001", "小明")
    for index in range(5):
        await engine.turns.record(chat, message(f"第{index}句话", message_id=f"old{index}"), f"回复{index}", ended=True)
    long_input = "我昨晚在春熙路吃了火锅，" + "很好吃" * 20
    result = await engine.turns.end(
        chat,
        "小明说了昨晚吃火锅",
        ["QQ号10001（昵称小明）昨晚在春熙路吃了火锅", "  "],
        batch=[message(long_input, message_id="m9")],
        perspective="机器人自己",
        now=NOW,
    )
    assert result.note_written and result.queued == 1
    (row,) = await job_rows(engine)
    import json

    payload = json.loads(row.payload)
    assert row.kind == "observations" and row.state == "pending" and row.scope_id == "30001"
    assert payload["observations"] == ["QQ号10001（昵称小明）昨晚在春熙路吃了火锅"]
    assert payload["speaker"] == {"id": "10001", "name": "小明"} and payload["message_ids"] == ["m9"]
    assert payload["time"]["utc"].startswith("2026-11-30T12:00") and payload["time"]["zone"] == "Asia/Shanghai"
    assert payload["time"]["local"].startswith("2026-11-30T20:00") and payload["time"]["epoch"] == NOW.timestamp()
    assert len(payload["batch"][0]["text"]) == 30  # clipped
    assert [item["text"] for item in payload["recent"]] == ["回复3", "第4句话", "回复4"]
    assert payload["perspective"] == "机器人自己"


async def test_end_with_nothing_or_only_secrets_writes_nothing(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    assert (await engine.turns.end(chat, "", [], batch=[], now=NOW)).queued == 0
    refused = await engine.turns.end(chat, "", ["我的密码是 hunter2xyz"], batch=[], now=NOW)
    assert refused.queued == 0 and refused.refused and refused.refused[0][1] == "credential"
    async with engine.session() as session:
        notes = (await session.execute(select(func.count()).select_from(NoteRow).where(NoteRow.bot_id == bot))).scalar()
    assert notes == 0 and await job_rows(engine) == []


async def test_a_switched_off_chat_writes_nothing(tmp_root, chroma_port) -> None:
    bot = new_bot()
    engine = await make_engine(tmp_root, chroma_port, disabled_scopes=["group:30002"])
    chat = group(bot, "30002", "10001", "小明")
    result = await engine.turns.end(chat, "笔记", ["QQ号10001（昵称小明）喜欢猫"], batch=[], now=NOW)
    assert not result.note_written and result.queued == 0
    assert not await engine.turns.record(chat, message("我喜欢猫"), "好的", ended=False)
    assert await job_rows(engine) == []


async def test_notes_of_the_same_chat_are_injected_with_their_times(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, recent_notes_inject_k=2)
    bot = new_bot()
    here, elsewhere = group(bot, "30003", "10001", "小明"), group(bot, "30004", "10002", "小红")
    for index in range(3):
        await engine.turns.end(here, f"第{index}条笔记", [], batch=[], now=NOW + timedelta(minutes=index))
    await engine.turns.end(elsewhere, "别的群的笔记", [], batch=[], now=NOW)
    built = await build_context(engine, here, ["随便聊聊"], now=NOW + timedelta(hours=1))
    assert "第1条笔记" in built.text and "第2条笔记" in built.text
    assert "第0条笔记" not in built.text and "别的群的笔记" not in built.text
    assert "2026-11-30 20:02" in built.text  # the note's time, in the configured zone


async def test_notes_give_way_first_when_the_block_is_over_budget(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, recall={"token_budget": 300})
    bot = new_bot()
    chat = group(bot, "30005", "10001", "小明")
    for index in range(20):
        note = f"第{index}条笔记：" + "内容" * 20
        await engine.turns.end(chat, note, [], batch=[], now=NOW + timedelta(minutes=index))
    built = await build_context(engine, chat, ["你好"], now=NOW + timedelta(hours=1))
    from amrita_plugin_cognition.domain.tokenize import estimate_tokens

    assert estimate_tokens(built.text) <= 300
    assert "第19条笔记" in built.text and "第0条笔记" not in built.text


# ------------------------------------------------------------------------- transcript capture


async def test_turns_without_end_are_batched_when_full_or_when_the_chat_pauses(tmp_root, chroma_port) -> None:
    engine = await make_engine(
        tmp_root, chroma_port, historian={"transcript_batch_turns": 3, "transcript_pause_seconds": 60}
    )
    bot = new_bot()
    chat = group(bot, "30006", "10001", "小明")
    for index in range(4):
        at = NOW + timedelta(seconds=index)
        assert await engine.turns.record(
            chat, message(f"第{index}句", at=at, message_id=f"t{index}"), "嗯", ended=False
        )
    # a turn that called end is logged for context but never waits for extraction
    assert not await engine.turns.record(chat, message("调用了end的一轮", message_id="t9"), "好", ended=True)
    assert await flush_transcripts(engine, NOW + timedelta(seconds=5)) == 1  # the full batch
    assert await flush_transcripts(engine, NOW + timedelta(seconds=10)) == 0  # the rest waits for a pause
    assert await flush_transcripts(engine, NOW + timedelta(seconds=70)) == 1
    rows = await job_rows(engine)
    import json

    batches = [[turn["input"] for turn in json.loads(row.payload)["turns"]] for row in rows]
    assert batches == [["第0句", "第1句", "第2句"], ["第3句"]]
    assert all(row.kind == "transcript" for row in rows)


async def test_capture_end_only_and_transcript_only(tmp_root, chroma_port) -> None:
    bot = new_bot()
    end_only = await make_engine(tmp_root, chroma_port, historian={"capture": "end"})
    chat = group(bot, "30007", "10001", "小明")
    assert not await end_only.turns.record(chat, message("我下周去北京"), "好", ended=False)
    transcript_only = await make_engine(tmp_root, chroma_port, historian={"capture": "transcript"})
    result = await transcript_only.turns.end(chat, "笔记", ["QQ号10001（昵称小明）下周去北京"], batch=[], now=NOW)
    assert result.note_written and result.queued == 0  # the transcript carries the turn instead
    assert await transcript_only.turns.record(chat, message("我下周去北京"), "好", ended=True)


async def test_a_turn_with_a_secret_never_reaches_the_transcript(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    assert not await engine.turns.record(chat, message("我的密码是 hunter2xyz"), "好的", ended=False)
    async with engine.session() as session:
        count = (
            await session.execute(select(func.count()).select_from(TranscriptRow).where(TranscriptRow.bot_id == bot))
        ).scalar()
    assert count == 0


async def test_a_long_turn_is_judged_whole_before_it_is_clipped(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port, historian={"source_message_max_chars": 40})
    bot = new_bot()
    chat = private(bot, "10001", "小明")
    # the request not to remember comes after the cut; a key straddles it
    assert not await engine.turns.record(chat, message("今天去医院做了复查，" * 10 + "这件事别记住"), "好", ended=False)
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8" * 3
    await engine.turns.record(chat, message("帮我看看这个报错，" * 3 + f"我的 api key 是 {key}"), "好", ended=False)
    async with engine.session() as session:
        rows = list((await session.execute(select(TranscriptRow).where(TranscriptRow.bot_id == bot))).scalars())
    assert all("复查" not in row.input_text for row in rows)
    assert all("A1b2C3d4" not in row.input_text for row in rows)


async def test_an_unreadable_job_is_failed_and_the_queue_goes_on(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    async with engine.unit_of_work() as uow:
        await jobs.enqueue(uow.session, "observations", bot, Scope("group", "1"), {}, NOW)
        await uow.session.execute(update(JobRow).where(JobRow.bot_id == bot).values(payload="{not json"))
        await jobs.enqueue(uow.session, "observations", bot, Scope("group", "1"), {"n": 1}, NOW + timedelta(seconds=1))
        await uow.commit()
    async with engine.unit_of_work() as uow:
        leased = await jobs.lease(uow.session, NOW + timedelta(minutes=1), 1, 60)
        await uow.commit()
    assert [held.payload for held in leased] == [{"n": 1}]
    states = {row.payload: (row.state, row.last_error) for row in await job_rows(engine)}
    assert states["{not json"][0] == "failed" and "unreadable" in states["{not json"][1]


# ------------------------------------------------------------------------------ shutdown


async def test_a_clean_shutdown_gives_a_running_job_back_and_the_next_start_runs_it_at_once(
    tmp_root, chroma_port, fake_openai
) -> None:
    """A job mid-call when the engine closes is cancelled and its lease released (pending, due at
    once, no attempt counted), instead of waiting out its 10-minute lease: a new engine runs it at
    once. Closing does not wait for the slow model either."""
    from engine_helpers import historian_llm, register_preset
    from fake_openai import tool_call

    from amrita_plugin_cognition.engine.historian import TOOL_NAME
    from amrita_plugin_cognition.store.models import MemoryRow

    preset = "cognition-shutdown-test"
    register_preset(preset, fake_openai.base_url)
    settings = {"llm": historian_llm(preset, timeout_seconds=60), "profiles": {"merge": False}}
    first = await make_engine(tmp_root, chroma_port, **settings)
    bot = new_bot()
    chat = group(bot, "40001", "10001", "小明")
    await first.turns.end(chat, "", ["QQ号10001（昵称小明）喜欢爬山"], batch=[message("我喜欢爬山")], now=NOW)
    answer = tool_call(TOOL_NAME, {"facts": [{"text": "QQ号10001（昵称小明）喜欢爬山。", "sources": [1]}]})
    fake_openai.script.extend([answer, answer])
    fake_openai.chat_delays.append(30.0)  # the first engine's call hangs
    first.historian.running = True
    first.historian.wake()
    for _ in range(300):
        await asyncio.sleep(0.05)
        if fake_openai.chat_requests:
            break
    (job,) = await job_rows(first)
    assert job.state == "processing" and job.lease_expires_at is not None

    await asyncio.wait_for(first.close(), timeout=10)  # the slow call is cancelled, not awaited
    (job,) = await job_rows(first)
    assert (job.state, job.attempts, job.lease_token, job.next_attempt_at) == ("pending", 0, None, None)

    second = await make_engine(tmp_root, chroma_port, **settings)
    await asyncio.wait_for(second.historian.run_until_idle(), timeout=30)  # the real clock: due at once
    assert len(fake_openai.chat_requests) == 2
    # this bot's jobs only: the worker's booted bot runs its own periodic work on the shared queue
    left = [(row.kind, row.bot_id, row.state) for row in await job_rows(second) if row.bot_id == bot]
    assert left == []
    async with second.session() as session:
        texts = (await session.execute(select(MemoryRow.text).where(MemoryRow.bot_id == bot))).scalars().all()
    assert list(texts) == ["QQ号10001（昵称小明）喜欢爬山。"]
