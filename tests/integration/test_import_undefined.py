"""Importing Undefined's cognitive memory (issue 24) on a real engine, from a folder laid out as
Undefined writes it (``tests/undefined_fixture.py`` says where each field comes from): events
into their chats with their time and speaker, cards with their history as revisions, end
summaries as notes of the chats their names resolve to, pins into the chosen chat, pending jobs
as our pending jobs; a dry run writes nothing, a second run writes nothing new; damaged files are
named. Real SQL and Chroma on both backends."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from engine_helpers import facts_of, make_engine, new_bot
from sqlalchemy import select
from undefined_fixture import GROUP, USER, make

from amrita_plugin_cognition.domain.clock import as_utc
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import ChatContext, Scope
from amrita_plugin_cognition.importers import ImportSourceError, undefined
from amrita_plugin_cognition.store.models import JobRow, NoteRow

# the job queue is one table for every bot: an import queues jobs (pending ones, the chats' cycles)
pytestmark = pytest.mark.usefixtures("clean_job_queue")


async def _import(engine, bot: str, folder, dry_run: bool = False, pins: Scope | None = None):  # type: ignore[no-untyped-def]
    found = await asyncio.to_thread(undefined.read, folder, pins)
    report = await engine.imports.run(bot, undefined.IMPORTER, str(folder), found.items, dry_run=dry_run)
    return report.as_dict()["kinds"]


async def _rows(engine, model, bot: str) -> list:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        return list((await session.execute(select(model).where(model.bot_id == bot).order_by(model.id))).scalars())


@pytest.fixture
def cognitive(tmp_root):  # type: ignore[no-untyped-def]
    return make(tmp_root / f"undefined-{uuid.uuid4().hex[:8]}")


async def test_imports_undefined_once_where_each_record_belongs(tmp_root, chroma_port, cognitive) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    pins = Scope("private", USER)
    expected = {
        "memory": {"imported": 2, "skipped": 0, "refused": {"credential": 1}},
        "note": {"imported": 3, "skipped": 0, "refused": {"no_owner": 1}},
        "pin": {"imported": 1, "skipped": 0, "refused": {}},
        "profile": {"imported": 2, "skipped": 0, "refused": {}},
        "job": {"imported": 1, "skipped": 0, "refused": {}},
    }
    assert await _import(engine, bot, cognitive, dry_run=True, pins=pins) == expected
    assert await facts_of(engine, bot) == [] and await _rows(engine, NoteRow, bot) == []
    assert await _rows(engine, JobRow, bot) == []

    assert await _import(engine, bot, cognitive, pins=pins) == expected
    facts = {row.text: row for row in await facts_of(engine, bot)}
    group_fact = facts["2026年12月1日，群30001约定每周六下午三点在线下桌游店聚会。"]
    private_fact = facts["QQ号40001（昵称阿杰）在私聊中说他下个月要去杭州出差。"]
    assert (group_fact.scope_kind, group_fact.scope_id, group_fact.speaker_id) == ("group", GROUP, USER)
    assert (private_fact.scope_kind, private_fact.scope_id, private_fact.subject_id) == ("private", USER, USER)
    source = json.loads(private_fact.source) if isinstance(private_fact.source, str) else private_fact.source
    assert source["is_absolute"] is False and source["record"] == "req2_0_1764900100000"
    assert as_utc(private_fact.recorded_at).isoformat() == "2026-12-02T02:00:00+00:00"
    assert {row.provenance for row in facts.values()} == {"imported"}

    card = await engine.profiles.get(bot, "user", USER, "private")
    assert card is not None and card.roast == "行李箱比桌游盒还多。" and card.tags == ["桌游", "出差"]
    assert await engine.profiles.get(bot, "user", USER, "group") is None  # never shown in a group
    revisions = await engine.profiles.revisions(bot, "user", USER, "private")
    assert [revision.card.evaluation for revision in revisions] == ["爱玩桌游的上班族。"]
    group_card = await engine.profiles.get(bot, "group", GROUP)
    assert group_card is not None and group_card.name == "桌游群"

    notes = {(row.scope_kind, row.scope_id, row.content) for row in await _rows(engine, NoteRow, bot)}
    assert notes == {
        ("group", GROUP, "和桌游群讨论了周六聚会的时间"),
        ("private", USER, "帮阿杰查了去杭州的高铁"),
        ("group", "99999", "在一个不认识的群里回答了问题"),
    }
    jobs = await _rows(engine, JobRow, bot)
    assert [(job.state, job.scope_kind, job.scope_id) for job in jobs] == [("pending", "group", GROUP)]
    assert "最近开始学吉他" in jobs[0].payload
    pins_now = await engine.notes.list_pins(ChatContext(bot, pins, USER))
    assert [pin.content for pin in pins_now] == ["用户要求以后回复尽量简短"]

    again = await _import(engine, bot, cognitive, pins=pins)
    assert {kind: tally["imported"] for kind, tally in again.items()} == dict.fromkeys(expected, 0)
    assert len(await _rows(engine, NoteRow, bot)) == 3 and len(await _rows(engine, JobRow, bot)) == 1
    assert [entry.count for entry in await engine.governance.audit(bot)] == [9]


async def test_undefined_refusals_and_damage(tmp_root, chroma_port, cognitive) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await engine.governance.set_opt_out(bot, USER, True, Operator())

    # a card longer than our limits is refused, in the dry run as in the run
    long_card = cognitive / "profiles" / "groups" / "30002.md"
    long_card.write_text("---\nname: 长群\n---\n评价\n---\n" + "很长的正文。" * 200 + "\n", encoding="utf-8")
    # a job file that is no JSON is refused by name; the others go on
    (cognitive / "queues" / "pending" / "broken_0_1.json").write_text('{"observations": [', encoding="utf-8")
    kinds = await _import(engine, bot, cognitive, dry_run=True)
    assert kinds["job"] == {"imported": 0, "skipped": 0, "refused": {"opted_out": 1, "unreadable": 1}}
    assert kinds["pin"] == {"imported": 0, "skipped": 0, "refused": {"no_owner": 1}}  # no --pins-chat
    # the opted-out user's events, card, private note and job are refused; the group's stay
    assert kinds["memory"]["refused"]["opted_out"] == 2 and kinds["memory"]["imported"] == 0
    assert kinds["profile"] == {"imported": 1, "skipped": 0, "refused": {"opted_out": 1, "too_long": 1}}

    # end_summaries.json with a bad line: named with its line, nothing written
    summaries = cognitive.parent / "end_summaries.json"
    lines = summaries.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3] + " oops"
    summaries.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ImportSourceError) as bad:
        await _import(engine, bot, cognitive)
    assert "end_summaries.json" in bad.value.zh and "第 4 行" in bad.value.zh
    assert await facts_of(engine, bot) == []
    assert [entry.action for entry in await engine.governance.audit(bot)] == ["optout"]  # no import row

    # a missing file is said, the rest imported
    summaries.unlink()
    found = await asyncio.to_thread(undefined.read, cognitive, None)
    assert any(missing.endswith("end_summaries.json") for missing in found.missing)
