"""Delete-all of a user leaves nothing that names them (issue 20, item 5), and opt-out finds a user
the same way (item 6).

A realistic bank: two groups, the target's private chat, three other users, written through the
engine's own paths (tools, ``end``, transcript capture, memo, pins, cards). The target is written
every way people write a QQ number (digits, full-width, Chinese numerals digit by digit and with
units, split by spaces and dashes) and by the nicknames they used. After the erasure every table
of the plugin (the ORM models' tables and the raw keyword tables), the vector collections and, on
SQLite, the raw bytes of the database file and its write-ahead log are searched for any of these.
Real SQL (both backends), real Chroma, the fake model for the historian and the merges; the chat
tests drive the real Amrita chat flow (nonebug).
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import cn2an
import pytest
from chat_helpers import (
    SELF_ID,
    connect_bot,
    deliver,
    group_message,
    memory_engine,
    private_message,
    tool_results,
)
from engine_helpers import NOW, group, historian_llm, make_engine, new_bot, private, register_preset
from fake_openai import FakeOpenAI, tool_call
from nonebot_plugin_orm import Model
from nonebug import App
from sqlalchemy import select, text

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.governance import OTHER_OPTED_OUT_MESSAGE, SwitchState
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.profiles import Card
from amrita_plugin_cognition.engine import erasure, notes, profiles, switches
from amrita_plugin_cognition.engine.historian import TOOL_NAME as HISTORIAN_TOOL
from amrita_plugin_cognition.engine.profile_prompt import TOOL_NAME as MERGE_TOOL
from amrita_plugin_cognition.engine.turns import InputMessage, flush_transcripts
from amrita_plugin_cognition.store import sqlite as sqlite_store
from amrita_plugin_cognition.store.models import (
    AuditRow,
    JobRow,
    MemoRevisionRow,
    MemoRow,
    MemoryRow,
    NoteRow,
    PinRow,
    ProfileRevisionRow,
    ProfileRow,
    TranscriptRow,
)

PRESET = "cognition-erasure-test"
LLM = historian_llm(PRESET)
G1, G2 = "40101", "40102"
V, W, X = "40111", "40112", "40113"
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
_CHINESE = str.maketrans("0123456789", "零一二三四五六七八九")


#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


class Person:
    """The user to erase (or who opts out): a fresh QQ number and fresh nicknames per test, so
    that a search of the whole database finds only what this test wrote."""

    def __init__(self) -> None:
        self.qq = str(random.randint(10**8, 10**9 - 1))
        tag = "".join(random.sample("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥", 3))
        self.name = f"星河{tag}"  # as she shows in the first group
        self.other_name = f"{tag}澈"  # in the second group and her private chat
        self.short_name = "澈"  # too short to be looked for alone

    @property
    def full_width(self) -> str:
        return self.qq.translate(_FULL_WIDTH)

    @property
    def chinese(self) -> str:
        return self.qq.translate(_CHINESE)

    @property
    def with_units(self) -> str:
        return str(cn2an.an2cn(self.qq))

    @property
    def split(self) -> str:
        return f"{self.qq[:3]} {self.qq[3:6]}-{self.qq[6:]}"

    def forms(self) -> list[str]:
        """Every writing of them this module uses."""
        return [self.qq, self.full_width, self.chinese, self.with_units, self.split, self.name, self.other_name]

    def index_terms(self) -> list[str]:
        """What the keyword index would hold of them: the number, and the bigrams of their names
        that only they have (CJK text is indexed as characters and bigrams, never as words)."""
        bigrams = {name[i : i + 2] for name in (self.name, self.other_name) for i in range(len(name) - 1)}
        return [self.qq, *sorted(bigrams - {"星河"})]

    def named_in(self, value: str) -> list[str]:
        return [form for form in self.forms() if form in value]


def said(text: str, user: str, name: str, minutes: int) -> InputMessage:
    return InputMessage(f"m{user}-{minutes}", user, name, text, NOW + timedelta(minutes=minutes))


# ----------------------------------------------------------------------------- searching everything


async def stored_mentions(engine: Any, bot: str, person: Person, backend: str) -> list[tuple[str, str]]:
    """(table, text) of every stored row of the plugin that holds any writing of ``person``: the
    tables of the ORM models, then the raw keyword tables (the rows of this bot's facts and cards,
    and rows that belong to none: other tests share the database)."""
    await engine.index.drain()  # the vector work an erasure queued is applied within seconds
    found: list[tuple[str, str]] = []
    async with engine.session() as session:
        for table in Model.metadata.sorted_tables:
            if not table.name.startswith("cognition_"):
                continue
            for row in (await session.execute(select(table))).all():
                value = " ".join(str(item) for item in row)
                if person.named_in(value):
                    found.append((table.name, value))
        others = {"bot": bot}
        if backend == "server":
            raw = {
                "cognition_memory_kw": "SELECT doc::text FROM cognition_memory_kw WHERE memory_id NOT IN "
                "(SELECT id FROM cognition_memory WHERE bot_id != :bot)",
                "cognition_profile_kw": "SELECT doc::text FROM cognition_profile_kw WHERE profile_id NOT IN "
                "(SELECT id FROM cognition_profile WHERE bot_id != :bot)",
            }
        else:
            raw = {
                "cognition_memory_fts": "SELECT scope, people, tokens, context FROM cognition_memory_fts WHERE rowid "
                "NOT IN (SELECT id FROM cognition_memory WHERE bot_id != :bot)",
                "cognition_profile_fts": "SELECT card, tokens FROM cognition_profile_fts WHERE rowid NOT IN "
                "(SELECT id FROM cognition_profile WHERE bot_id != :bot)",
            }
        for table, statement in raw.items():
            for row in (await session.execute(text(statement), others)).all():
                terms = " ".join(str(item) for item in row).replace("'", " ").replace(":", " ").split()
                hits = [term for term in person.index_terms() if term in terms]
                if hits:
                    found.append((table, " ".join(hits)))
        if backend != "server":  # the vocabulary of every fact indexed: her number is no term of it
            vocabulary = text("SELECT term FROM cognition_memory_fts_vocab WHERE term = :qq")
            if (await session.execute(vocabulary, {"qq": person.qq})).first():
                found.append(("cognition_memory_fts_vocab", person.qq))
    return found


async def vector_mentions(engine: Any, bot: str, person: Person) -> list[str]:
    """What the vector index holds (collection metadata, ids, vector metadata, documents) that
    names ``person``, in every collection of the bot account."""

    def scan() -> list[str]:
        client = engine.vectors._connect()
        found = []
        for item in client.list_collections():
            name = item.name if hasattr(item, "name") else str(item)
            collection = client.get_collection(name, embedding_function=None)
            owner = json.dumps(collection.metadata or {}, ensure_ascii=False)
            if bot not in owner:
                continue
            content = collection.get(include=["metadatas", "documents"])
            value = owner + json.dumps(
                [content["ids"], content["metadatas"], content["documents"]], ensure_ascii=False, default=str
            )
            if person.named_in(value):
                found.append(f"{collection.name}: {owner}")
        return found

    await engine.index.drain()
    return await engine.vectors.off_loop("scan", scan)  # type: ignore[no-any-return]


def only_the_audit(found: list[tuple[str, str]], person: Person) -> list[tuple[str, str]]:
    """What was found outside the documented keep: the audit record of the erasure itself."""
    return [(table, value) for table, value in found if table != "cognition_audit"]


# ----------------------------------------------------------------------------- the matcher


def test_a_text_names_a_user_by_number_in_any_writing_or_by_a_nickname() -> None:
    from amrita_plugin_cognition.domain.people import PersonMatcher, numbers_in

    person = Person()
    matcher = PersonMatcher(
        {person.qq: [person.name, person.other_name, person.short_name, "哈哈", "今天", "Kiki"]},
        {V: ["小岚", f"{person.name}二号"], W: ["Kiki"]},
    )
    for form in (person.full_width, person.chinese, person.with_units, person.split):
        assert matcher.names(f"加一下{form}，周五一起打球", person.qq), form
    assert matcher.names(f"第一{person.qq}", person.qq)  # a Chinese numeral beside it is another word
    assert not matcher.names(f"订单号{person.qq}7", person.qq)  # inside a longer number: another number
    assert matcher.names(f"{person.other_name}明天生日", person.qq)
    assert not matcher.names(f"{person.name}二号说好", person.qq)  # inside another user's longer nickname
    assert not matcher.names("澈底搞定了，哈哈，今天真开心", person.qq)
    kept = {item.name: item.reason for item in matcher.kept(person.qq)}
    assert kept == {person.short_name: "too_short", "哈哈": "common", "今天": "common", "Kiki": "shared"}
    assert PersonMatcher({"10001": ["Tom"]}).names("tom说好") and not PersonMatcher({"10001": ["Tom"]}).names(
        "tomorrow"
    )
    assert {"10001"} <= numbers_in("幺零零零幺") and {"123456"} <= numbers_in("十二万三千四百五十六")


# ----------------------------------------------------------------------------- delete-all of a user


def wrong_historian(person: Person) -> Any:
    """A model that turns any mention of the person it is shown into a new fact about her, and
    otherwise writes what the first source says."""

    def respond(body: dict[str, Any]) -> dict[str, Any] | None:
        if not any(tool["function"]["name"] == HISTORIAN_TOOL for tool in body.get("tools", [])):
            return None
        prompt = json.dumps(body["messages"], ensure_ascii=False)
        if person.named_in(prompt):
            fact = f"QQ号{person.qq}（昵称{person.name}）答应请全群吃烤肉。"
        else:
            fact = "QQ号40113（昵称Kiki）周六去看展。"
        return tool_call(HISTORIAN_TOOL, {"facts": [{"text": fact, "sources": [1], "kind": "fact"}]})

    return respond


async def build_bank(engine: Any, bot: str, person: Person) -> dict[str, Any]:
    """Two groups, her private chat, three other users; she is named every way."""
    me1, me2 = group(bot, G1, person.qq, person.name), group(bot, G2, person.qq, person.other_name)
    mine = private(bot, person.qq, person.short_name)
    lan, lan_admin = group(bot, G1, V, "小岚"), group(bot, G1, V, "小岚", role="admin")
    zhou, kiki = group(bot, G2, W, "老周"), group(bot, G1, X, "Kiki")

    # her own words: a tool write, a turn, an ``end`` with a note, her private chat
    await engine.memories.write(me2, "user", "我下个月去成都出差。", now=NOW)
    await engine.turns.record(me1, said("周六我请大家吃烤肉", person.qq, person.name, 1), "好呀，烤肉走起", ended=False)
    batch = [said("周六我请大家吃烤肉", person.qq, person.name, 2)]
    await engine.turns.end(
        me1, f"{person.name}说周六请客", [f"QQ号{person.qq}（昵称{person.name}）周六请客"], batch=batch, now=NOW
    )
    await notes.append_memo(engine, mine, "我对花生过敏", now=NOW)
    await notes.add_pin(engine, mine, "提醒我周五交房租", now=NOW)
    await engine.memories.write(mine, "user", "我在学吉他。", now=NOW)
    await engine.turns.record(mine, said("我在学吉他", person.qq, person.short_name, 3), "加油", ended=False)

    # the others about her: every writing of her number, her nicknames
    await engine.turns.record(
        lan, said(f"{person.chinese}是{person.name}的QQ，大家加一下", V, "小岚", 4), "收到", ended=False
    )
    await engine.turns.record(lan, said("周五谁去打球", V, "小岚", 5), "我去", ended=False)
    await engine.turns.end(
        lan,
        f"小岚说{person.name}欠她一顿饭",
        [f"小岚说{person.other_name}欠她一顿饭", "QQ号40111（昵称小岚）周五去打球"],
        batch=[said("周五谁去打球", V, "小岚", 6)],
        now=NOW + timedelta(minutes=6),
    )
    await engine.turns.end(zhou, "", [f"老周听说{person.split}要换工作"], batch=[], now=NOW + timedelta(minutes=7))
    await engine.memories.write(
        lan, "group", f"QQ号{person.full_width}（昵称{person.name}）和小岚是大学同学。", now=NOW
    )
    await engine.memories.write(kiki, "group", f"{person.other_name}周末要搬家。", now=NOW)
    kept_fact = await engine.memories.write(kiki, "group", "群40101每周五晚上打羽毛球。", now=NOW)
    liked = await engine.memories.write(lan, "group", f"{person.name}喜欢猫。", now=NOW)
    corrected = await engine.memories.update(lan, liked.id, "小岚喜欢猫。", now=NOW)
    await notes.update_memo(engine, lan_admin, f"每周五晚上打羽毛球\n{person.name}负责订场地\n场地费AA", now=NOW)
    await notes.append_memo(engine, lan, "下周改到周六", now=NOW)
    await notes.add_pin(engine, me1, "记得带球拍", now=NOW)
    await notes.add_pin(engine, lan, f"提醒{person.name}还钱", now=NOW)
    kept_pin = await notes.add_pin(engine, lan, "周五开会", now=NOW)

    # the transcript: one batch already queued as a job, turns still waiting
    assert await flush_transcripts(engine, NOW + timedelta(minutes=10), everything=True) >= 1
    await engine.turns.record(zhou, said(f"{person.with_units}这个号是谁的", W, "老周", 11), "不知道", ended=False)
    await engine.turns.record(lan, said(f"听说{person.other_name}也去", V, "小岚", 12), "好的", ended=False)
    await engine.turns.record(kiki, said("周六去看展", X, "Kiki", 13), "好的", ended=False)

    # cards: hers, the group's, and two others that mention her
    card_at = NOW + timedelta(minutes=14)
    await profiles.save(engine, Card(bot, "user", person.qq, "group", name=person.name, body="喜欢烤肉"), now=card_at)
    first_group_card = Card(bot, "group", G1, "group", evaluation="一个爱运动的群。", body="每周五打羽毛球")
    await profiles.save(engine, first_group_card, now=card_at)
    group_card = Card(
        bot, "group", G1, "group", evaluation="一个爱运动的群。", body=f"每周五打羽毛球\n{person.name}总是负责订场地"
    )
    await profiles.save(engine, group_card, now=card_at)
    third = f"每周五打羽毛球\n{person.name}总是负责订场地\n周六也打"
    await profiles.save(engine, Card(bot, "group", G1, "group", evaluation="一个爱运动的群。", body=third), now=card_at)
    lan_card = Card(
        bot, "user", V, "group", evaluation="小岚很热情。", body=f"和QQ号{person.full_width}是大学同学\n喜欢猫",
        roast=f"{person.other_name}的头号债主。",
    )  # fmt: skip
    await profiles.save(engine, lan_card, now=card_at)
    await profiles.save(engine, Card(bot, "user", X, "group", tags=[f"{person.other_name}的室友", "爱看展"],
                                     body="周六去看展"), now=card_at)  # fmt: skip
    await engine.index.drain()
    return {"kept_fact": kept_fact.id, "corrected": corrected.id, "kept_pin": kept_pin.id, "me1": me1}


async def rows_of(engine: Any, model: Any, *where: Any) -> list[Any]:
    async with engine.session() as session:
        return list((await session.execute(select(model).where(*where).order_by(model.id))).scalars())


async def test_a_user_erased_is_named_nowhere_and_never_extracted_again(
    tmp_root, chroma_port, backend, fake_openai: FakeOpenAI
) -> None:
    register_preset(PRESET, fake_openai.base_url)
    engine = await make_engine(tmp_root, chroma_port, llm=LLM, profiles={"merge": False})
    bot, person = new_bot(), Person()
    built = await build_bank(engine, bot, person)
    assert await stored_mentions(engine, bot, person, backend)  # she is everywhere before

    report = await erasure.delete_all(
        engine, ErasureTarget.user(bot, person.qq), actor=private(bot, person.qq), now=NOW
    )

    left = only_the_audit(await stored_mentions(engine, bot, person, backend), person)
    assert left == [], left
    assert await vector_mentions(engine, bot, person) == []
    from amrita_plugin_cognition.domain.erasure import AMRITA_HISTORY

    (audit_row,) = await rows_of(engine, AuditRow, AuditRow.bot_id == bot)
    assert (audit_row.actor, audit_row.target) == (person.qq, f"user:{person.qq}")  # the one keep, by design
    assert {(item.name, item.reason) for item in report.kept_names} == {(person.short_name, "too_short")}
    assert any("审计记录" in line for line in report.kept()) and report.amrita_history() == AMRITA_HISTORY

    # what did not name her stays: the other lines, pins, facts, turns, jobs and card sentences
    (memo,) = await rows_of(engine, MemoRow, MemoRow.bot_id == bot, MemoRow.scope_id == G1)
    assert memo.content == "每周五晚上打羽毛球\n场地费AA\n下周改到周六"
    revisions = await rows_of(engine, MemoRevisionRow, MemoRevisionRow.bot_id == bot)
    assert [row.content for row in revisions] == ["每周五晚上打羽毛球\n场地费AA"]
    pins = await rows_of(engine, PinRow, PinRow.bot_id == bot)
    assert [pin.id for pin in pins] == [built["kept_pin"]]
    facts = await rows_of(engine, MemoryRow, MemoryRow.bot_id == bot)
    assert [row.id for row in facts] == [built["kept_fact"], built["corrected"]]
    turns = await rows_of(engine, TranscriptRow, TranscriptRow.bot_id == bot)
    assert sorted(row.input_text for row in turns) == ["周五谁去打球", "周六去看展"]
    jobs = [json.loads(row.payload) for row in await rows_of(engine, JobRow, JobRow.bot_id == bot)]
    lan_job = next(job for job in jobs if job.get("speaker", {}).get("id") == V)
    assert lan_job["observations"] == ["QQ号40111（昵称小岚）周五去打球"] and lan_job["memo"] == ""
    assert [message["text"] for message in lan_job["recent"]] == ["周五谁去打球", "我去"]  # not hers, nor the reply
    group_card = await profiles.get(engine, bot, "group", G1)
    assert group_card is not None and group_card.body == "每周五打羽毛球\n周六也打"
    lan_card = await profiles.get(engine, bot, "user", V, "group")
    assert lan_card is not None and (lan_card.body, lan_card.roast) == ("喜欢猫", "")
    kiki_card = await profiles.get(engine, bot, "user", X, "group")
    assert kiki_card is not None and kiki_card.tags == ["爱看展"]
    assert await profiles.get(engine, bot, "user", person.qq, "group") is None
    kept_versions = await rows_of(engine, ProfileRevisionRow, ProfileRevisionRow.bot_id == bot)
    assert [row.body for row in kept_versions] == ["每周五打羽毛球"]
    assert await rows_of(engine, NoteRow, NoteRow.bot_id == bot) == []  # both notes named her
    assert await rows_of(engine, ProfileRow, ProfileRow.bot_id == bot, ProfileRow.entity_id == person.qq) == []

    # the historian, with a model that writes about her whenever it is shown her, runs everything
    # that waited: nothing it is shown names her, so nothing it writes does
    fake_openai.responder = wrong_historian(person)
    await flush_transcripts(engine, NOW + timedelta(hours=1), everything=True)
    await engine.historian.run_until_idle(NOW + timedelta(hours=1))
    prompts = [json.dumps(body["messages"], ensure_ascii=False) for body in fake_openai.chat_requests]
    assert prompts and not [form for prompt in prompts for form in person.named_in(prompt)]
    assert only_the_audit(await stored_mentions(engine, bot, person, backend), person) == []

    # the next turn in her group takes its context from the recent turns kept in this process:
    # the erasure's commit dropped them, so none of hers is read back from memory
    later = NOW + timedelta(hours=2)
    lan = group(bot, G1, V, "小岚")
    assert (await engine.turns.end(lan, "", ["QQ号40111（昵称小岚）周日休息"], batch=[], now=later)).queued == 1
    newest = max(await rows_of(engine, JobRow, JobRow.bot_id == bot), key=lambda row: row.id)
    assert not person.named_in(newest.payload) and json.loads(newest.payload)["recent"]


async def test_a_job_running_during_the_erasure_commits_nothing_and_runs_again_without_her(
    tmp_root, chroma_port, fake_openai: FakeOpenAI
) -> None:
    from amrita_plugin_cognition.engine import historian
    from amrita_plugin_cognition.store import jobs

    register_preset(PRESET, fake_openai.base_url)
    engine = await make_engine(tmp_root, chroma_port, llm=LLM, profiles={"merge": False})
    bot, person = new_bot(), Person()
    her, lan = group(bot, G1, person.qq, person.name), group(bot, G1, V, "小岚")
    await engine.turns.record(her, said("周六我请大家吃烤肉", person.qq, person.name, 1), "好呀", ended=False)
    await engine.turns.end(lan, "", ["QQ号40111（昵称小岚）周六去吃烤肉"], batch=[], now=NOW + timedelta(minutes=2))
    async with engine.unit_of_work() as uow:
        (in_flight,) = await jobs.lease(uow.session, NOW, 1, 600)
        await uow.commit()
    assert person.named_in(json.dumps(in_flight.payload, ensure_ascii=False))  # her turn is its context

    await erasure.delete_all(engine, ErasureTarget.user(bot, person.qq), actor=private(bot, person.qq), now=NOW)
    fake_openai.responder = wrong_historian(person)
    report = await historian.process(engine, in_flight, NOW)  # the worker read the job before the erasure
    assert report.outcome == "lost" and report.written == 0
    await engine.historian.run_until_idle(NOW + timedelta(hours=1))  # the job again, on what is left
    last = json.dumps(fake_openai.chat_requests[-1]["messages"], ensure_ascii=False)
    assert "周六去吃烤肉" in last and not person.named_in(last)
    facts = await rows_of(engine, MemoryRow, MemoryRow.bot_id == bot)
    assert len(facts) == 1 and not person.named_in(facts[0].text)


# ----------------------------------------------------------------------------- the database file


def _database_file(engine: Any) -> Path:
    return Path(str(engine.session().get_bind().url.database))


@pytest.mark.embedded_only
async def test_erased_text_cannot_be_read_back_from_the_sqlite_file(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, person = new_bot(), Person()
    secret = "zq" + "".join(random.choices("bcdfghjklmnpqrvwxz", k=12)) + "x"
    mine, lan = private(bot, person.qq, person.name), group(bot, G1, V, "小岚")
    await engine.memories.write(mine, "user", f"我的备用邮箱前缀是 {secret}", now=NOW)
    await engine.memories.write(lan, "group", f"QQ号{person.qq}（昵称{person.name}）的邮箱前缀是 {secret}", now=NOW)
    await engine.turns.record(lan, said(f"{person.qq} 的邮箱前缀是 {secret}", V, "小岚", 1), "记下了", ended=False)
    await engine.turns.end(lan, "记下了邮箱前缀", [f"QQ号{person.qq}的邮箱前缀是{secret}"], batch=[], now=NOW)
    await notes.add_pin(engine, lan, f"{person.qq} 的邮箱前缀 {secret}", now=NOW)
    await profiles.save(
        engine, Card(bot, "user", V, "group", body=f"认识{person.qq}（前缀 {secret}）\n喜欢猫"), now=NOW
    )
    await engine.index.drain()
    database = _database_file(engine)

    def raw() -> bytes:
        wal = database.with_name(database.name + "-wal")
        return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")

    assert secret.encode() in raw()
    await erasure.delete_all(engine, ErasureTarget.user(bot, person.qq), actor=Operator(), now=NOW)
    data = raw()
    assert secret.encode() not in data and secret.upper().encode() not in data
    # her number is left in one place only: the audit record of the erasure ("user:<QQ>"), by design
    places = [data[max(0, at - 40) : at + 20] for at in (m.start() for m in re.finditer(person.qq.encode(), data))]
    assert places and all(f"user:{person.qq}".encode() in place for place in places), places


@pytest.mark.embedded_only
async def test_a_reader_holding_the_log_delays_an_erasure_by_seconds_not_minutes(tmp_root, chroma_port) -> None:
    """The log is truncated after the erasure is committed; a reader that holds it (another
    process's open read) makes each try say busy at once, not after the 5 s busy timeout."""
    engine = await make_engine(tmp_root, chroma_port)
    bot, person = new_bot(), Person()
    await engine.memories.write(private(bot, person.qq, person.name), "user", "我在学吉他", now=NOW)
    reader = sqlite3.connect(_database_file(engine))
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()  # a read snapshot, held
        started = time.monotonic()
        report = await erasure.delete_all(engine, ErasureTarget.user(bot, person.qq), actor=Operator(), now=NOW)
        took = time.monotonic() - started
    finally:
        reader.close()
    assert not report.log_truncated and report.counts["memories"] == 1
    assert took < 15, took  # 20 tries of 0.1 s and the erasure; it was 20 × 5 s
    async with engine.session() as session:  # the connection's busy timeout is back
        assert (await session.execute(text("PRAGMA busy_timeout"))).scalar_one() > 0
    async with engine.unit_of_work() as uow:  # and with the reader gone, the log truncates
        assert await sqlite_store.truncate_log(uow.session)


# ----------------------------------------------------------------------------- opt-out: card merges


def merge_answer(entity_type: str, entity_id: str, body: str, roast: str = "") -> dict[str, Any]:
    return tool_call(
        MERGE_TOOL,
        {"action": "update_profile", "entity_type": entity_type, "entity_id": entity_id, "name": "",
         "tags": [], "evaluation": "最近很活跃。", "body": body, "roast": roast},
    )  # fmt: skip


async def test_a_card_merge_never_writes_an_opted_out_user_into_any_card(
    tmp_root, chroma_port, fake_openai: FakeOpenAI
) -> None:
    register_preset(PRESET, fake_openai.base_url)
    engine = await make_engine(
        tmp_root,
        chroma_port,
        llm=LLM,
        historian={"capture": "end"},
        profiles={"merge": True, "merge_window_seconds": 0},
    )
    bot, person = new_bot(), Person()
    her, lan = group(bot, G1, person.qq, person.name), group(bot, G1, V, "小岚")
    # before she opts out: she talks, and others write about her by nickname and in Chinese numerals
    await engine.turns.record(her, said("大家好", person.qq, person.name, 1), "你好", ended=False)
    await engine.memories.write(lan, "group", f"{person.name}周末要搬家。", now=NOW)
    await engine.memories.write(lan, "group", f"{person.chinese}是小岚的大学同学。", now=NOW)
    await switches.set_opt_out(engine, bot, person.qq, out=True, actor=private(bot, person.qq), now=NOW)

    # a new fact of the group, and a model that writes her into the group's card and 小岚's anyway
    observations = ["QQ号40111（昵称小岚）周六去看展"]
    answers = [
        tool_call(
            HISTORIAN_TOOL,
            {
                "facts": [
                    {"text": text + "。", "sources": [number], "kind": "fact"}
                    for number, text in enumerate(observations, start=1)
                ]
            },
        ),
    ]
    merges = {
        ("group", G1): merge_answer("group", G1, f"群友周六看展\n{person.name}负责订票", f"{person.name}又迟到了。"),
        ("user", V): merge_answer("user", V, f"周六去看展\n和{person.with_units}是同学"),
    }
    fake_openai.script.extend(answers)

    def respond(body: dict[str, Any]) -> dict[str, Any] | None:
        prompt = json.dumps(body["messages"], ensure_ascii=False)
        found = re.search(r"entity_type=(\w+)，entity_id=(\d+)", prompt)
        return merges.get((found.group(1), found.group(2))) if found else None

    fake_openai.responder = respond
    assert (await engine.turns.end(lan, "", observations, batch=[], now=NOW)).queued == 1
    await engine.historian.run_until_idle(NOW + timedelta(seconds=1))
    await engine.historian.run_until_idle(NOW + timedelta(seconds=5))

    merge_prompts = [
        json.dumps(body["messages"], ensure_ascii=False)
        for body in fake_openai.chat_requests
        if any(tool["function"]["name"] == MERGE_TOOL for tool in body.get("tools", []))
    ]
    assert len(merge_prompts) >= 2  # the group's card and 小岚's
    assert not [form for prompt in merge_prompts for form in person.named_in(prompt)]  # past facts kept out
    group_card = await profiles.get(engine, bot, "group", G1)
    lan_card = await profiles.get(engine, bot, "user", V, f"group:{G1}")  # strict: her part in G1
    assert group_card is not None and lan_card is not None
    assert group_card.body == "群友周六看展" and group_card.roast == ""
    assert lan_card.body == "周六去看展"
    for card in (group_card, lan_card):
        assert not person.named_in(json.dumps(card.as_dict(), ensure_ascii=False))
    facts = await rows_of(engine, MemoryRow, MemoryRow.bot_id == bot, MemoryRow.recorded_at > NOW)
    assert [row.text for row in facts] == ["QQ号40111（昵称小岚）周六去看展。"]


def test_an_opt_out_state_finds_her_by_nickname_and_chinese_numerals() -> None:
    from amrita_plugin_cognition.domain.people import PersonMatcher

    person = Person()
    matcher = PersonMatcher({person.qq: [person.name]}, {V: ["小岚"]})
    state = SwitchState(frozenset(), frozenset({person.qq}), matcher)
    assert state.touches_opted_out([], [f"{person.name}明天生日"])
    assert state.touches_opted_out([], [f"{person.with_units}明天生日"])
    assert not state.touches_opted_out([], ["小岚明天生日"])
    messages = [
        {"speaker_id": V, "speaker": "小岚", "text": f"{person.chinese}生日"},
        {"speaker_id": "", "speaker": "机器人", "text": "祝她生日快乐"},
        {"speaker_id": V, "speaker": "小岚", "text": "周五打球"},
    ]
    assert state.without_opted_out_messages(messages) == [messages[2]]


# ----------------------------------------------------------------------------- the chat flow

BOT = str(SELF_ID)


async def _chat_rows(model: Any, *where: Any) -> list[Any]:
    return await rows_of(await memory_engine(), model, *where)


@pytest.mark.chatflow
async def test_memory_user_clear_in_the_chat_leaves_nothing_that_names_her(
    app: App, fake_openai: FakeOpenAI, monkeypatch, backend
) -> None:
    person = Person()
    her_qq, group_a, group_b = int(person.qq), 40201, 40202
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        engine = await memory_engine()
        # she talks in both groups and in private; the model ends her turns with notes and observations
        fake_openai.script.append(
            tool_call(
                "end",
                {"memo": f"{person.name}说周六请客", "observations": [f"QQ号{person.qq}（昵称{person.name}）周六请客"]},
            )
        )
        await deliver(bot, group_message("周六我请大家吃烤肉", group_a, her_qq, person.name))
        await deliver(bot, group_message("我下个月去成都", group_b, her_qq, person.other_name))
        await deliver(bot, private_message("我在学吉他", her_qq, person.other_name))
        # the others name her: Chinese numerals, a nickname, the number split by spaces
        fake_openai.script.append(
            tool_call(
                "end", {"memo": f"小岚说{person.name}欠她一顿饭", "observations": ["QQ号40211（昵称小岚）周五去打球"]}
            )
        )
        await deliver(bot, group_message(f"{person.chinese}是{person.name}的QQ", group_a, 40211, "小岚"))
        await deliver(bot, group_message(f"{person.split}这个号是谁", group_b, 40212, "老周"))
        await deliver(bot, group_message(f"听说{person.other_name}要搬家", group_a, 40213, "Kiki"))
        await deliver(bot, group_message("周五谁去打球", group_a, 40211, "小岚"))
        assert await stored_mentions(engine, BOT, person, backend)

        await deliver(bot, private_message("/memory user clear", her_qq, person.other_name))
        await deliver(bot, private_message("确认", her_qq, person.other_name))
        answer = qq.sent[-1]
        assert answer.startswith("已删除你在所有会话中的全部记忆")
        assert "别人的对话记录" in answer and "按设计保留：审计记录" in answer
        assert "Amrita 自己的聊天记录" in answer and "/session forget" in answer

        left = only_the_audit(await stored_mentions(engine, BOT, person, backend), person)
        assert left == [], left
        assert await vector_mentions(engine, BOT, person) == []
        turns = await _chat_rows(TranscriptRow, TranscriptRow.bot_id == BOT, TranscriptRow.scope_id == str(group_a))
        assert "周五谁去打球" in [row.input_text for row in turns]  # what did not name her stays


@pytest.mark.chatflow
async def test_after_optout_a_nickname_or_chinese_numerals_are_not_written(
    app: App, fake_openai: FakeOpenAI, monkeypatch
) -> None:
    person = Person()
    her_qq, group_a = int(person.qq), 40301
    async with app.test_api() as ctx:
        bot, qq = await connect_bot(ctx, monkeypatch, BOT)
        try:
            await deliver(bot, group_message("大家好", group_a, her_qq, person.name))  # she was seen as 星河…
            await deliver(bot, group_message("/memory optout", group_a, her_qq, person.name, to_me=False))
            assert qq.sent[-1].startswith("已为你关闭记忆")

            # others about her: by nickname alone, by her number in Chinese numerals
            for text in (f"{person.name}明天生日，大家准备礼物", f"{person.with_units}是谁的号"):
                await deliver(bot, group_message(text, group_a, 40311, "小岚"))
            fake_openai.reset()
            fake_openai.script.append(
                tool_call("end", {"memo": f"{person.name}要过生日", "observations": [f"{person.name}明天过生日"]})
            )
            await deliver(bot, group_message("记一下，明天有人过生日", group_a, 40311, "小岚"))
            result = tool_results(fake_openai.chat_requests[-1])[-1]
            assert result["ok"] is True and result["noted"] is False and result["observations"] == 0
            fake_openai.reset()
            fake_openai.script.append(
                tool_call(
                    "cognition_memory_write", {"content": f"{person.chinese}下周过生日。", "scope": "group"}, "c9"
                )
            )
            await deliver(bot, group_message("帮我记住这个", group_a, 40311, "小岚"))
            result = tool_results(fake_openai.chat_requests[-1])[-1]
            assert result == {"ok": False, "error": OTHER_OPTED_OUT_MESSAGE}

            engine = await memory_engine()
            found = [
                (table, value)
                for table, value in await stored_mentions(engine, BOT, person, "embedded")
                if table not in ("cognition_audit", "cognition_optout")
            ]
            # her own turn from before the opt-out stays (what she had stays until she deletes it)
            assert [table for table, _ in found] == ["cognition_transcript"], found
            assert "大家好" in found[0][1]
        finally:
            await deliver(bot, group_message("/memory optin", group_a, her_qq, person.name, to_me=False))
