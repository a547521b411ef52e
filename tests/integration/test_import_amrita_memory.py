"""Importing amrita-plugin-memory (issue 24) on a real engine, from a data folder the plugin
itself wrote (``tests/apm_fixture.py``): what lands where (a "user" memory becomes that user's
private-chat fact, never a group's), provenance, a dry run that writes nothing, a second run that
writes nothing new, the write path's refusals (a secret, an opted-out user, a forgotten fact, a
chat switched off), one audit row, and damaged sources (a missing file, bad JSON, a Chroma folder
of another version, vectors of a dimension our embedder does not have, a failure half-way that a
re-run resumes). Real SQL and Chroma on both backends."""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import datetime

import pytest
from engine_helpers import NOW, facts_of, make_engine, new_bot, private
from import_helpers import (
    APM_CAT_TEXT,
    APM_GROUP,
    APM_GROUP_TEXT,
    APM_OTHER_USER,
    APM_PRIVATE_TEXT,
    APM_USER,
    apm_copy,
    chroma_of_dimension,
    other_chroma_version,
)

from amrita_plugin_cognition.domain.clock import as_utc
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.engine import import_records
from amrita_plugin_cognition.engine.imports import ImportFailed
from amrita_plugin_cognition.importers import ImportSourceError, amrita_memory

IMPORTER = amrita_memory.IMPORTER


# the job queue is one table for every bot: an import queues jobs (pending ones, the chats' cycles)
pytestmark = pytest.mark.usefixtures("clean_job_queue")


async def _import(engine, bot: str, folder, dry_run: bool = False, profile_user: str = APM_USER, **kwargs):  # type: ignore[no-untyped-def]
    found = await asyncio.to_thread(amrita_memory.read, folder, None, profile_user)
    report = await engine.imports.run(bot, IMPORTER, str(folder), found.items, dry_run=dry_run, **kwargs)
    return report.as_dict()["kinds"], found


async def _bank(engine, bot: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    facts = [(row.scope_kind, row.scope_id, row.text) for row in await facts_of(engine, bot)]
    memos = {
        key: await engine.notes.memo_of(bot, Scope.parse(key)) for key in (f"group:{APM_GROUP}", f"private:{APM_USER}")
    }
    entries = [listed.entry.title for listed in await engine.knowledge.list(bot)]
    card = await engine.profiles.get(bot, "user", APM_USER, "private")
    audit = [(entry.action, entry.target, entry.count) for entry in await engine.governance.audit(bot)]
    return {"facts": sorted(facts), "memos": memos, "entries": entries, "card": card, "audit": audit}


async def test_imports_each_record_once_where_it_belongs(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    folder = apm_copy(tmp_root)

    preview, _ = await _import(engine, bot, folder, dry_run=True)
    assert preview == {
        "memory": {"imported": 3, "skipped": 0, "refused": {"credential": 1}},
        "memo": {"imported": 2, "skipped": 0, "refused": {}},
        "profile": {"imported": 1, "skipped": 0, "refused": {}},
        "knowledge": {"imported": 1, "skipped": 0, "refused": {}},
        "suggestion": {"imported": 0, "skipped": 0, "refused": {"no_owner": 1}},
    }
    empty = await _bank(engine, bot)
    assert empty["facts"] == [] and empty["entries"] == [] and empty["card"] is None and empty["audit"] == []

    first, _ = await _import(engine, bot, folder)
    assert first == preview  # the dry run said exactly what the run did
    bank = await _bank(engine, bot)
    # a "user" memory (learned anywhere) is the user's private-chat fact; a "group" one the group's
    assert bank["facts"] == sorted(
        [
            ("group", APM_GROUP, APM_GROUP_TEXT),
            ("private", APM_USER, APM_PRIVATE_TEXT),
            ("private", APM_OTHER_USER, APM_CAT_TEXT),
        ]
    )
    assert bank["memos"] == {
        f"group:{APM_GROUP}": "本群是桌游爱好者群，群主是老王。",
        f"private:{APM_USER}": "阿明希望被称呼为明哥。",
    }
    assert bank["entries"] == ["周五游戏夜"]
    card = bank["card"]
    assert card is not None and card.evaluation == "阿明，程序员，喜欢桌游。" and "对花生过敏" in card.body
    assert bank["audit"] == [("import", IMPORTER, 7)]

    rows = {row.text: row for row in await facts_of(engine, bot)}
    fact = rows[APM_PRIVATE_TEXT]
    source = json.loads(fact.source) if isinstance(fact.source, str) else fact.source
    assert fact.provenance == "imported" and fact.subject_id == APM_USER and fact.importance == "high"
    assert source["via"] == "import" and source["path"] == str(folder / "vector_db.chroma") and source["record"]
    assert json.loads(fact.tags) == ["健康"] if isinstance(fact.tags, str) else fact.tags == ["健康"]
    # the source's time is kept as when the fact was recorded
    assert as_utc(fact.recorded_at) == datetime.fromisoformat(source["recorded_at"])

    # a private fact is never seen from the group; the group's fact is the group's
    hits = await engine.memories.recall(private(bot, APM_USER), ["花生过敏"])
    assert [hit.record.text for hit in hits.hits][:1] == [APM_PRIVATE_TEXT]
    from engine_helpers import group

    in_group = await engine.memories.recall(group(bot, APM_GROUP, APM_USER), ["花生过敏"])
    assert APM_PRIVATE_TEXT not in [hit.record.text for hit in in_group.hits]

    second, _ = await _import(engine, bot, folder)
    assert second == {
        "memory": {"imported": 0, "skipped": 3, "refused": {"credential": 1}},
        "memo": {"imported": 0, "skipped": 2, "refused": {}},
        "profile": {"imported": 0, "skipped": 1, "refused": {}},
        "knowledge": {"imported": 0, "skipped": 1, "refused": {}},
        "suggestion": {"imported": 0, "skipped": 0, "refused": {"no_owner": 1}},
    }
    assert await _bank(engine, bot) == bank  # nothing new, not even an audit row

    # the same source for another bot account is that account's own import
    other = new_bot()
    again, _ = await _import(engine, other, folder)
    assert again["memory"]["imported"] == 3


async def test_refusals_of_the_write_path(tmp_root, chroma_port) -> None:
    """Opt-out, the forget barrier, a chat switched off and a card already there refuse as they
    would refuse a chat's own write; nothing of a refused record is stored."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    await engine.governance.set_opt_out(bot, APM_OTHER_USER, True, Operator(), now=NOW)
    written = await engine.memories.remember(
        bot, [MemoryDraft(text=APM_PRIVATE_TEXT, scope=Scope("private", APM_USER))], now=NOW
    )
    await engine.governance.forget(private(bot, APM_USER), written.written[0].id, now=NOW)
    await engine.governance.set_chat_memory(bot, Scope("group", APM_GROUP), False, Operator(), now=NOW)

    kinds, _ = await _import(engine, bot, apm_copy(tmp_root))
    assert kinds["memory"] == {
        "imported": 0,
        "skipped": 0,
        "refused": {"credential": 1, "forgotten": 1, "opted_out": 1, "switched_off": 1},
    }
    assert kinds["memo"] == {"imported": 1, "skipped": 0, "refused": {"switched_off": 1}}
    assert await facts_of(engine, bot) == []
    assert await engine.notes.memo_of(bot, Scope("group", APM_GROUP)) == ""

    # a card the bot already keeps is not overwritten
    other = new_bot()
    from amrita_plugin_cognition.domain.profiles import Card

    await engine.profiles.save(Card(other, "user", APM_USER, "private", body="已有的画像"), now=NOW)
    kinds, _ = await _import(engine, other, apm_copy(tmp_root))
    assert kinds["profile"] == {"imported": 0, "skipped": 0, "refused": {"card_exists": 1}}
    assert (await engine.profiles.get(other, "user", APM_USER, "private")).body == "已有的画像"  # type: ignore[union-attr]

    # without --profile-user the profile has no owner: refused, said so
    third = new_bot()
    kinds, _ = await _import(engine, third, apm_copy(tmp_root), profile_user="")
    assert kinds["profile"] == {"imported": 0, "skipped": 0, "refused": {"no_owner": 1}}


async def test_damaged_sources(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()

    # a knowledge file missing: that entry refused, naming it; the rest imported
    folder = apm_copy(tmp_root)
    for file in (folder / "knowledge").iterdir():
        file.unlink()
    kinds, _ = await _import(engine, bot, folder, dry_run=True)
    assert kinds["knowledge"] == {"imported": 0, "skipped": 0, "refused": {"unreadable": 1}}
    assert kinds["memory"]["imported"] == 3

    # bad JSON: the file and the line are named, nothing is read further, nothing written
    folder = apm_copy(tmp_root)
    index = folder / "knowledge_index.json"
    index.write_text(index.read_text(encoding="utf-8").replace('"title"', '"title" oops', 1), encoding="utf-8")
    with pytest.raises(ImportSourceError) as bad_json:
        await _import(engine, bot, folder)
    assert "knowledge_index.json" in bad_json.value.zh and "行" in bad_json.value.zh

    # a Chroma folder of another Chroma release: named, nothing written, the source untouched
    folder = apm_copy(tmp_root)
    other_chroma_version(folder / "vector_db.chroma")
    before = (folder / "vector_db.chroma" / "chroma.sqlite3").read_bytes()
    with pytest.raises(ImportSourceError) as other_version:
        await _import(engine, bot, folder)
    assert "vector_db.chroma" in other_version.value.zh and "另一版本" in other_version.value.zh
    assert (folder / "vector_db.chroma" / "chroma.sqlite3").read_bytes() == before

    # an older layout without chroma.sqlite3 (Chroma 0.3's parquet files)
    folder = apm_copy(tmp_root)
    shutil.rmtree(folder / "vector_db.chroma")
    (folder / "vector_db.chroma").mkdir()
    (folder / "vector_db.chroma" / "chroma-embeddings.parquet").write_bytes(b"PAR1")
    with pytest.raises(ImportSourceError) as old_layout:
        await _import(engine, bot, folder)
    assert "chroma.sqlite3" in old_layout.value.zh
    assert await facts_of(engine, bot) == [] and await engine.governance.audit(bot) == []

    # the database missing: said in the report, the folder's records imported
    folder = apm_copy(tmp_root)
    (folder.parent / "nonebot_plugin_orm" / "db.sqlite3").unlink()
    kinds, found = await _import(engine, bot, folder, dry_run=True)
    assert "memo" not in kinds and any("db.sqlite3" in missing for missing in found.missing)

    # vectors of a dimension our embedder does not have: re-embedded, imported
    folder = apm_copy(tmp_root)
    shutil.rmtree(folder / "vector_db.chroma")
    await asyncio.to_thread(
        chroma_of_dimension, folder / "vector_db.chroma", 3, [("QQPlatform_Private_10003", "阿强周末常去爬山")]
    )
    kinds, _ = await _import(engine, bot, folder)
    assert kinds["memory"] == {"imported": 1, "skipped": 0, "refused": {}}
    await engine.index.drain()
    hits = await engine.memories.recall(private(bot, "10003"), ["爬山"])
    assert [hit.record.text for hit in hits.hits] == ["阿强周末常去爬山"]


async def test_a_failure_half_way_names_the_record_and_a_rerun_resumes(tmp_root, chroma_port, monkeypatch) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    folder = apm_copy(tmp_root)
    real_write = import_records._write

    async def broken(engine, bot_id, kind, payload, now):  # type: ignore[no-untyped-def]
        if kind == "knowledge":
            raise RuntimeError("disk full")
        return await real_write(engine, bot_id, kind, payload, now)

    monkeypatch.setattr(import_records, "_write", broken)
    with pytest.raises(ImportFailed) as failed:
        await _import(engine, bot, folder)
    assert "knowledge_index.json#" in failed.value.zh and "重新运行" in failed.value.zh
    assert len(await facts_of(engine, bot)) == 3  # written before the failure, kept
    assert [entry.count for entry in await engine.governance.audit(bot)] == [3]

    monkeypatch.setattr(import_records, "_write", real_write)
    kinds, _ = await _import(engine, bot, folder)
    assert kinds["memory"] == {"imported": 0, "skipped": 3, "refused": {"credential": 1}}
    assert kinds["knowledge"] == {"imported": 1, "skipped": 0, "refused": {}}
    assert len(await facts_of(engine, bot)) == 3
    # each run audited with what it wrote: the resumed one the memos, the card and the entry
    assert [entry.count for entry in await engine.governance.audit(bot)] == [4, 3]


async def test_memories_on_a_chroma_server(tmp_root, chroma_port) -> None:
    """Its ``vector_db_type = "remote"``: the memories are read from the Chroma server (the test
    session's own, server backend), the rest from the folder; an unreachable server is named."""
    from amrita_plugin_cognition.importers.chroma_source import read_collection

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    folder = apm_copy(tmp_root)
    with pytest.raises(ImportSourceError) as unreachable:
        await asyncio.to_thread(amrita_memory.read, folder, None, APM_USER, "http://127.0.0.1:9")
    assert "http://127.0.0.1:9" in unreachable.value.zh
    if not chroma_port:
        pytest.skip("the Chroma server part runs on the server backend")
    import chromadb

    records = await asyncio.to_thread(read_collection, folder / "vector_db.chroma", amrita_memory.MEMORY_COLLECTION)
    assert records is not None
    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_port)
    collection = client.get_or_create_collection(amrita_memory.MEMORY_COLLECTION)
    try:
        collection.add(
            ids=[record_id for record_id, _, _ in records],
            documents=[text for _, text, _ in records],
            metadatas=[metadata for _, _, metadata in records],
            embeddings=[[float(index + 1)] * 5 for index in range(len(records))],
        )
        url = f"http://127.0.0.1:{chroma_port}"
        found = await asyncio.to_thread(amrita_memory.read, folder, None, APM_USER, url)
        report = await engine.imports.run(bot, IMPORTER, str(folder), found.items)
        assert report.as_dict()["kinds"]["memory"] == {"imported": 3, "skipped": 0, "refused": {"credential": 1}}
        source = (await facts_of(engine, bot))[0].source
        assert (json.loads(source) if isinstance(source, str) else source)["path"] == url
    finally:
        client.delete_collection(amrita_memory.MEMORY_COLLECTION)


async def test_memos_and_state_in_a_postgresql_database(tmp_root, chroma_port) -> None:
    """A bot on PostgreSQL keeps its memos and state there: read from the URL (read only)."""
    from booting import BACKEND, STATE

    if BACKEND != "server":
        pytest.skip("PostgreSQL runs on the server backend")
    import asyncpg

    from amrita_plugin_cognition.importers.source import sqlite_rows

    folder = apm_copy(tmp_root)
    sqlite = folder.parent / "nonebot_plugin_orm" / "db.sqlite3"
    memos = sqlite_rows(sqlite, amrita_memory.MEMO_TABLE, "user_id, content") or []
    states = sqlite_rows(sqlite, amrita_memory.STATE_TABLE, "uid, payload") or []
    url = str(STATE["database_url"])
    connection = await asyncpg.connect("postgresql://" + url.split("://", 1)[1])
    try:
        await connection.execute(
            f"CREATE TABLE {amrita_memory.MEMO_TABLE} (user_id varchar(64) PRIMARY KEY, content text)"
        )
        await connection.execute(
            f"CREATE TABLE {amrita_memory.STATE_TABLE} (uid varchar(64) PRIMARY KEY, payload text)"
        )
        await connection.executemany(
            f"INSERT INTO {amrita_memory.MEMO_TABLE} VALUES ($1, $2)", [tuple(row) for row in memos]
        )
        await connection.executemany(
            f"INSERT INTO {amrita_memory.STATE_TABLE} VALUES ($1, $2)", [tuple(row) for row in states]
        )
        engine = await make_engine(tmp_root, chroma_port)
        bot = new_bot()
        sqlite.unlink()  # only the URL can be read
        found = await asyncio.to_thread(amrita_memory.read, folder, url, APM_USER)
        report = await engine.imports.run(bot, IMPORTER, str(folder), found.items)
        kinds = report.as_dict()["kinds"]
        assert kinds["memo"] == {"imported": 2, "skipped": 0, "refused": {}}
        assert kinds["suggestion"] == {"imported": 0, "skipped": 0, "refused": {"no_owner": 1}}
        assert await engine.notes.memo_of(bot, Scope("private", APM_USER)) == "阿明希望被称呼为明哥。"
    finally:
        await connection.execute(f"DROP TABLE IF EXISTS {amrita_memory.MEMO_TABLE}, {amrita_memory.STATE_TABLE}")
        await connection.close()
