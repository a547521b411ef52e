"""Delete-all (a chat, a user in every chat, a bot account) with its audit record, inspection with
lineage, and one user's export. Real SQL and real Chroma; nothing mocked."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from engine_helpers import NOW, group, make_engine, new_bot, private
from sqlalchemy import func, select

from amrita_plugin_cognition.domain.erasure import ErasureTarget, scrub_job
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.engine import erasure, inspection, notes
from amrita_plugin_cognition.engine.turns import InputMessage
from amrita_plugin_cognition.errors import InvalidInput, NotFound
from amrita_plugin_cognition.store import audit, repository
from amrita_plugin_cognition.store.models import (
    BarrierRow,
    JobRow,
    MemoRow,
    MemoryRow,
    NoteRow,
    PinRow,
    TranscriptRow,
)

U, V = "10001", "10002"


async def _count(engine, model, *clauses) -> int:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return int((await session.execute(select(func.count()).select_from(model).where(*clauses))).scalar_one())


async def _jobs(engine, bot: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    async with engine.session() as session:
        rows = (await session.execute(select(JobRow.payload).where(JobRow.bot_id == bot))).scalars().all()
    return [json.loads(row) for row in rows]


async def _turn(engine, chat, user: str, name: str, text: str, minutes: int) -> None:  # type: ignore[no-untyped-def]
    at = NOW + timedelta(minutes=minutes)
    await engine.turns.record(chat, InputMessage(f"m{minutes}", user, name, text, at), "好的", ended=False)


async def _end(engine, chat, memo: str, observation: str, minutes: int) -> None:  # type: ignore[no-untyped-def]
    at = NOW + timedelta(minutes=minutes)
    batch = [InputMessage(f"e{minutes}", chat.user_id, chat.user_name, observation, at)]
    await engine.turns.end(chat, memo, [observation], batch=batch, now=at)


async def _vectors_match_sql(engine, bot: str) -> None:  # type: ignore[no-untyped-def]
    """The bot's vectors are exactly its active facts (other tests' bots share the database)."""
    await engine.index.drain()
    report = await engine.index.repair()
    mine = [key for key in (*report.missing, *report.extra, *report.unmapped) if key.startswith(f"{bot}|")]
    assert mine == [], report


async def test_deleting_a_chat_removes_all_of_it_leaves_barriers_and_an_audit_without_content(
    tmp_root, chroma_port
) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    in_a, in_b = group(bot, "20001", U, "小明", role="admin"), group(bot, "20002", U, "小明")
    first = await engine.memories.write(in_a, "group", "群A周五晚上八点一起打羽毛球。", now=NOW)
    corrected = await engine.memories.update(in_a, first.id, "群A周六晚上八点一起打羽毛球。", now=NOW)
    await engine.memories.write(in_a, "user", "小明喜欢吃火锅。", now=NOW)
    kept = await engine.memories.write(in_b, "group", "群B下周一交作业。", now=NOW)
    await notes.update_memo(engine, in_a, "群A的备忘：周六打球", now=NOW)
    await notes.add_pin(engine, in_a, "提醒群A订场地", now=NOW)
    await _turn(engine, in_a, U, "小明", "我们周六去打球吧", 1)
    await _end(engine, in_a, "约了周六打球", "QQ号10001（昵称小明）周六去打球", 2)
    await _end(engine, in_b, "群B作业", "QQ号10001（昵称小明）下周一交作业", 3)
    await engine.index.drain()

    report = await erasure.delete_all(engine, ErasureTarget.chat(bot, in_a.scope), actor=Operator(U), now=NOW)

    assert report.counts["memories"] == 3  # two active facts and the version the correction replaced
    assert report.counts["notes"] == 1 and report.counts["turns"] == 1 and report.counts["jobs"] == 1
    assert report.counts["memos"] == 1 and report.counts["pins"] == 1
    a = (MemoryRow.bot_id == bot, MemoryRow.scope_id == "20001")
    assert await _count(engine, MemoryRow, *a) == 0
    for model in (NoteRow, TranscriptRow, MemoRow, PinRow, JobRow):
        assert await _count(engine, model, model.bot_id == bot, model.scope_id == "20001") == 0, model
    async with engine.session() as session:
        for memory_id in (first.id, corrected.id):
            assert await repository.barrier_for(session, memory_id)
        assert await repository.get_rows(session, bot, [kept.id])  # the other group is untouched
        entries = await audit.entries(session, bot)
    assert await _count(engine, NoteRow, NoteRow.bot_id == bot, NoteRow.scope_id == "20002") == 1
    assert len(await _jobs(engine, bot)) == 1
    assert [(e.action, e.actor, e.target, e.count) for e in entries] == [("delete_all_chat", U, "group:20001", 3)]
    # the audit says who, when and how many, never what
    assert "羽毛球" not in json.dumps([vars(e) if hasattr(e, "__dict__") else repr(e) for e in entries], default=str)
    assert (await engine.memories.recall(in_a, ["打羽毛球"], now=NOW)).hits == []
    assert await notes.read_memo(engine, in_a) == ""
    with pytest.raises(InvalidInput, match="遗忘"):  # what was deleted does not come back
        await engine.memories.write(in_a, "group", corrected.text, now=NOW)  # as stored: its 周六 anchored
    await _vectors_match_sql(engine, bot)


async def test_deleting_a_user_takes_their_data_from_every_chat_and_only_theirs(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    u_in_a, u_private = group(bot, "20001", U, "小明"), private(bot, U, "小明")
    v_in_a = group(bot, "20001", V, "小红", role="admin")
    theirs = await engine.memories.write(u_in_a, "user", "小明在杭州工作。", now=NOW)
    about = await engine.memories.write(v_in_a, "group", "QQ号10001（昵称小明）下个月结婚。", now=NOW)
    others = await engine.memories.write(v_in_a, "user", "小红喜欢爬山。", now=NOW)
    private_fact = await engine.memories.write(u_private, "user", "小明在准备考研。", now=NOW)
    await notes.update_memo(engine, u_private, "私聊备忘：考研", now=NOW)
    await notes.update_memo(engine, v_in_a, "群A的备忘：周末聚餐", now=NOW)  # the group's, stays
    await _turn(engine, u_in_a, U, "小明", "我下个月结婚，大家来喝喜酒", 1)
    await _turn(engine, v_in_a, V, "小红", "恭喜恭喜", 2)
    await _end(engine, u_in_a, "小明说结婚", "QQ号10001（昵称小明）下个月结婚", 3)  # his job: dropped
    await _end(engine, v_in_a, "小红去爬山", "QQ号10002（昵称小红）周末去爬山", 4)  # hers: kept, scrubbed
    await engine.index.drain()
    # the scrubbed job carried his words as recent context
    assert any("喜酒" in json.dumps(job, ensure_ascii=False) for job in await _jobs(engine, bot))

    report = await erasure.delete_all(engine, ErasureTarget.user(bot, U), actor=Operator(), now=NOW)

    async with engine.session() as session:
        left = await repository.get_rows(session, bot, [theirs.id, about.id, others.id, private_fact.id])
    assert set(left) == {others.id}
    assert report.counts["memories"] == 3 and report.counts["memos"] == 1
    assert await _count(engine, NoteRow, NoteRow.bot_id == bot, NoteRow.user_id == U) == 0
    assert await _count(engine, TranscriptRow, TranscriptRow.bot_id == bot, TranscriptRow.user_id == U) == 0
    assert await _count(engine, TranscriptRow, TranscriptRow.bot_id == bot, TranscriptRow.user_id == V) == 1
    jobs = await _jobs(engine, bot)
    assert len(jobs) == 1 and jobs[0]["speaker"]["id"] == V
    text = json.dumps(jobs, ensure_ascii=False)
    assert "喜酒" not in text and U not in text
    assert await notes.read_memo(engine, v_in_a) == "群A的备忘：周末聚餐"
    assert await notes.read_memo(engine, u_private) == ""
    # the recent messages of the chat no longer carry his words into new jobs
    await _end(engine, v_in_a, "小红说", "QQ号10002（昵称小红）明天加班", 5)
    assert "喜酒" not in json.dumps(await _jobs(engine, bot), ensure_ascii=False)
    await _vectors_match_sql(engine, bot)


async def test_deleting_a_bot_account_leaves_other_accounts(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other = new_bot(), new_bot()
    await engine.memories.write(group(bot, "20001", U), "group", "群A周五开会。", now=NOW)
    await engine.memories.write(private(bot, V), "user", "小红养了一只猫。", now=NOW)
    survivor = await engine.memories.write(group(other, "20001", U), "group", "群A周五开会。", now=NOW)
    report = await erasure.delete_all(engine, ErasureTarget.bot(bot), actor=Operator(), now=NOW)
    assert report.counts["memories"] == 2
    assert await _count(engine, MemoryRow, MemoryRow.bot_id == bot) == 0
    assert await _count(engine, BarrierRow, BarrierRow.bot_id == bot) == 2
    async with engine.session() as session:
        assert await repository.get_rows(session, other, [survivor.id])
        entries = await audit.entries(session, bot)
    assert [(e.action, e.target, e.count) for e in entries] == [("delete_all_bot", "bot", 2)]
    await _vectors_match_sql(engine, bot)


def test_a_job_is_scrubbed_of_a_user_or_dropped_when_it_is_theirs() -> None:
    theirs = {"speaker": {"id": U}, "observations": ["x"], "recent": []}
    about = {"speaker": {"id": V}, "observations": ["QQ号10001（昵称小明）搬家了"], "recent": []}
    context = {
        "speaker": {"id": V},
        "observations": ["QQ号10002 周末爬山"],
        "recent": [{"speaker_id": U, "text": "a"}, {"speaker_id": V, "text": "b"}],
    }
    transcript_only_theirs = {"turns": [{"speaker_id": U, "input": "a"}]}
    untouched = {"speaker": {"id": V}, "observations": ["QQ号100011 不是他"], "recent": []}
    assert scrub_job(theirs, U) is None and scrub_job(about, U) is None
    assert scrub_job(transcript_only_theirs, U) is None
    assert scrub_job(context, U) == {**context, "recent": [{"speaker_id": V, "text": "b"}]}
    assert scrub_job(untouched, U) is untouched


async def test_inspect_shows_provenance_and_the_whole_lineage(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = private(bot, U, "小明")
    first = await engine.memories.write(chat, "user", "小明的生日是3月1日。", now=NOW)
    second = await engine.memories.update(chat, first.id, "小明的生日是3月2日。", now=NOW)
    third = await engine.memories.update(chat, second.id, "小明的生日是3月3日。", now=NOW)
    await engine.memories.write(private(bot, V), "user", "小红的生日是5月1日。", now=NOW)

    items, total = await inspection.inspect(engine, inspection.InspectFilter(bot_id=bot, user_id=U))
    assert total == 3 and [item.record.id for item in items] == [third.id, second.id, first.id]
    newest, middle, oldest = items
    assert newest.supersedes == [second.id, first.id] and newest.superseded_by == []
    assert middle.supersedes == [first.id] and middle.superseded_by == [third.id]
    assert oldest.superseded_by == [second.id, third.id]
    document = inspection.memory_document(newest)
    assert document["status"] == "active" and document["source"]["supersedes"] == second.id
    assert document["chat"] == f"private:{U}" and document["recorded_at"].startswith("2026-11-30")
    active, count = await inspection.inspect(
        engine, inspection.InspectFilter(bot_id=bot, scope=Scope("private", U), status=inspection.MemoryStatus.ACTIVE)
    )
    assert count == 1 and active[0].record.id == third.id
    assert (await inspection.inspect_one(engine, bot, first.id)).superseded_by == [second.id, third.id]
    await engine.governance.forget(chat, third.id, now=NOW)
    with pytest.raises(NotFound, match="已被删除"):
        await inspection.inspect_one(engine, bot, first.id)
    with pytest.raises(InvalidInput):
        await inspection.inspect(engine, inspection.InspectFilter(), limit=0)


async def test_export_of_a_user_holds_their_data_and_nobody_else(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    u_in_a, v_in_a = group(bot, "20001", U, "小明"), group(bot, "20001", V, "小红")
    mine = await engine.memories.write(u_in_a, "user", "小明在杭州工作。", now=NOW)
    await engine.memories.update(u_in_a, mine.id, "小明在上海工作。", now=NOW)
    await engine.memories.write(v_in_a, "user", "小红喜欢爬山。", now=NOW)
    await engine.memories.write(v_in_a, "group", "QQ号10001（昵称小明）请大家喝奶茶。", now=NOW)  # about him
    await engine.memories.write(v_in_a, "group", "QQ号100012 不是他。", now=NOW)
    await notes.add_pin(engine, private(bot, U), "提醒小明交房租", now=NOW)
    await _turn(engine, u_in_a, U, "小明", "我换工作了", 1)
    await _turn(engine, v_in_a, V, "小红", "我去爬山了", 2)

    documents = await inspection.export_user(engine, U, bot, now=NOW)
    lines = list(inspection.json_lines(documents))
    parsed = [json.loads(line) for line in lines]
    assert parsed[0]["type"] == "export" and parsed[0]["user_id"] == U
    kinds = [document["type"] for document in parsed[1:]]
    assert kinds.count("memory") == 3 and kinds.count("turn") == 1 and kinds.count("pin") == 1
    assert parsed[-1] == {"type": "settings", "bot_id": bot, "opted_out": False, "opted_out_at": None}
    text = "\n".join(lines)
    assert "杭州" in text and "上海" in text and "换工作" in text and "奶茶" in text
    assert "爬山" not in text and "100012" not in text
    with pytest.raises(InvalidInput):
        await inspection.export_user(engine, "小明")


@pytest.mark.slow  # starts another process: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # its processes use their own SQLite home: the backend does not reach them
def test_the_cli_deletes_with_confirmation_audits_and_exports(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from processes import one_line_error, only_json, run_cli

    home = str(tmp_path / "home")
    refused = run_cli("delete-all", "--home", home, "--bot", "90001", "--user", "10001")
    assert refused.returncode == 2 and "--yes" in one_line_error(refused)
    both = run_cli("delete-all", "--home", home, "--bot", "90001", "--user", "10001", "--everything", "--yes")
    assert both.returncode == 2 and "只给出" in both.stderr
    done = run_cli("delete-all", "--home", home, "--bot", "90001", "--chat", "group:20001", "--yes", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert only_json(done.stdout) == {
        "bot_id": "90001",
        "target": "group:20001",
        "counts": {
            "memories": 0,
            "notes": 0,
            "turns": 0,
            "jobs": 0,
            "memos": 0,
            "pins": 0,
            "profiles": 0,
            "knowledge": 0,
        },
        "kept": [],
        "kept_names": [],
        "log_truncated": True,
        "amrita_history": "",
    }
    listed = run_cli("audit", "--home", home, "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    (entry,) = only_json(listed.stdout)
    assert (entry["action"], entry["actor"], entry["target"], entry["count"]) == (
        "delete_all_chat",
        "cli",
        "group:20001",
        0,
    )
    # a user's erasure says what it keeps by design and what Amrita's own chat history keeps
    user = run_cli("delete-all", "--home", home, "--bot", "90001", "--user", "10001", "--yes", "--json")
    assert user.returncode == 0, user.stderr[-2000:]
    answer = only_json(user.stdout)
    assert answer["target"] == "user:10001" and answer["kept"][0].startswith("审计记录")
    assert "Amrita 自己的聊天记录" in answer["amrita_history"] and "/session forget" in answer["amrita_history"]
    exported = run_cli("export", "--home", home, "--user", "10001")
    assert exported.returncode == 0, exported.stderr[-2000:]
    (header,) = [json.loads(line) for line in exported.stdout.splitlines()]
    assert header["type"] == "export" and header["user_id"] == "10001"


def test_inspect_and_audit_tables_show_source_and_lineage(capsys) -> None:  # type: ignore[no-untyped-def]
    from amrita_plugin_cognition.cli import render_governance

    memory = {
        "id": 7,
        "bot_id": "90001",
        "chat": "group:20001",
        "text": "小明周六去成都。",
        "kind": "event",
        "provenance": "historian",
        "source": {"messages": ["m1", "m2"], "job": 12},
        "speaker": {"id": "10001", "name": "小明"},
        "subject": {"id": "", "name": ""},
        "happened_at": "2026-11-28T04:00:00+00:00",
        "recorded_at": "2026-11-27T04:00:00+00:00",
        "status": "superseded",
        "supersedes": [3],
        "superseded_by": [9, 11],
    }
    render_governance.inspected({"page": 1, "per_page": 20, "total": 1, "memories": [memory]})
    render_governance.audit_list(
        [
            {
                "id": 1,
                "bot_id": "90001",
                "action": "delete_all_user",
                "actor": "cli",
                "target": "user:10001",
                "count": 4,
                "at": "2026-11-28T04:00:00+00:00",
            }
        ]
    )
    out = capsys.readouterr().out
    for expected in ("#7", "已被取代", "消息 m1,m2", "任务 #12", "取代 #3", "#9 → #11", "共 1 条，第 1/1 页"):
        assert expected in out, expected
    assert "删除用户全部数据" in out and "user:10001" in out


def test_the_chat_and_the_cli_describe_a_source_with_the_same_words() -> None:
    """``/memory ... show`` and ``inspect`` describe where a fact came from with one function
    (``domain/sources.describe``; the chat's lines are checked in tests/integration/test_governance_chat.py):
    the same words, the CLI naming the messages where the chat counts them. A correction says who
    corrected it in both."""
    from amrita_plugin_cognition.cli import render_governance
    from amrita_plugin_cognition.domain.sources import describe

    corrected = {"via": "correction", "messages": ["m9"], "edited_by": "10001", "supersedes": 3, "absolute": True}
    assert describe(corrected) == "由更正写入，来自 1 条消息，经 QQ号10001 更正"
    assert render_governance._source_text(corrected) == "由更正写入，来自消息 m9，经 QQ号10001 更正"
    historian = {"via": "historian", "job": 12, "job_kind": "transcript", "messages": ["m1", "m2"]}
    assert describe(historian) == "由史官整理（任务 #12，读的是聊天记录），来自 2 条消息"
    assert render_governance._source_text(historian) == "由史官整理（任务 #12，读的是聊天记录），来自消息 m1,m2"
    assert render_governance._source_text({}) == "—"
