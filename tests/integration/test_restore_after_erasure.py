"""Restoring an older backup never undoes a delete-all, an opt-out or a chat switch made since.

A restore replays every delete-all the audit records from the backup's time on (less ten minutes:
an erasure may run while a backup is written) through the erasure a live delete-all runs, and the
backup carries the chat switches, opt-outs and audit records, merged with today's on restore.
Real SQL (both backends), real Chroma; the CLI path runs ``python -m amrita_plugin_cognition`` in
fresh processes on a standalone folder, as an operator would.
"""

from __future__ import annotations

import gzip
import json
import random
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import group, make_engine, new_bot, register_preset
from fake_openai import FakeOpenAI
from sqlalchemy import delete, select
from test_erasure_complete import (
    G1,
    G2,
    LLM,
    PRESET,
    Person,
    V,
    W,
    X,
    build_bank,
    only_the_audit,
    rows_of,
    stored_mentions,
    vector_mentions,
)

from amrita_plugin_cognition.domain.clock import UTC, as_utc
from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.engine import backup, erasure, notes, profiles, switches
from amrita_plugin_cognition.errors import InvalidInput
from amrita_plugin_cognition.store import switches as switch_store
from amrita_plugin_cognition.store.models import AuditRow, MemoRow, MemoryRow, OptOutRow, PinRow, ProfileRow

#: An erasure this long before a backup's time is still replayed (``store/restore_erasures.py``).
OVERLAP = timedelta(minutes=10)


#: The job queue and the transcript are one table each for every bot: empty before and after.
pytestmark = pytest.mark.usefixtures("clean_job_queue")


async def delete_alls_since(engine: Any, created_at: str) -> int:
    """The delete-alls of every bot account (the test database is shared) audited from the
    backup's time less the overlap on: what a restore of that backup must replay."""
    start = datetime.fromisoformat(created_at) - OVERLAP
    rows = await rows_of(engine, AuditRow, AuditRow.action.startswith("delete_all_"))
    return sum(1 for row in rows if (as_utc(row.at) or row.at) >= start)


async def test_a_restore_replays_a_delete_all_made_after_its_backup(
    tmp_root, chroma_port, backend, fake_openai: FakeOpenAI
) -> None:
    register_preset(PRESET, fake_openai.base_url)
    engine = await make_engine(tmp_root, chroma_port, llm=LLM, profiles={"merge": False})
    bot, person = new_bot(), Person()
    built = await build_bank(engine, bot, person)
    info = await backup.create_backup(engine)  # she is all over it
    await erasure.delete_all(engine, ErasureTarget.user(bot, person.qq), actor=Operator(person.qq))
    assert only_the_audit(await stored_mentions(engine, bot, person, backend), person) == []
    # after the backup, too: V opts out, the second group switches its memory off
    await switches.set_opt_out(engine, bot, V, True, actor=Operator(V))
    await switches.set_chat_memory(engine, bot, Scope("group", G2), False, Operator())
    replays = await delete_alls_since(engine, info.created_at)

    report = await backup.restore_backup(engine, info.path)

    left = only_the_audit(await stored_mentions(engine, bot, person, backend), person)
    assert left == [], left  # her facts, memo lines, pins, cards, card versions, barrier reasons
    assert report["erasures_replayed"] == replays >= 1
    assert await vector_mentions(engine, bot, person) == []
    # what did not name her is back, as the erasure had left it
    facts = await rows_of(engine, MemoryRow, MemoryRow.bot_id == bot)
    assert [row.id for row in facts] == [built["kept_fact"], built["corrected"]]
    (memo,) = await rows_of(engine, MemoRow, MemoRow.bot_id == bot, MemoRow.scope_id == G1)
    assert memo.content == "每周五晚上打羽毛球\n场地费AA\n下周改到周六"
    assert [pin.id for pin in await rows_of(engine, PinRow, PinRow.bot_id == bot)] == [built["kept_pin"]]
    group_card = await profiles.get(engine, bot, "group", G1)
    assert group_card is not None and group_card.body == "每周五打羽毛球\n周六也打"
    lan_card = await profiles.get(engine, bot, "user", V, "group")
    assert lan_card is not None and (lan_card.body, lan_card.roast) == ("喜欢猫", "")
    kiki_card = await profiles.get(engine, bot, "user", X, "group")
    assert kiki_card is not None and kiki_card.tags == ["爱看展"]
    assert await rows_of(engine, ProfileRow, ProfileRow.bot_id == bot, ProfileRow.entity_id == person.qq) == []
    # the choices made after the backup hold
    state = await switches.switch_state(engine, bot)
    assert V in state.opted_out and f"group:{G2}" in state.off_chats
    assert {row.action for row in await rows_of(engine, AuditRow, AuditRow.bot_id == bot)} == {
        "delete_all_user",
        "optout",
        "switch_off",
    }


async def test_only_the_erasures_since_the_backup_are_replayed(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, old, recent = new_bot(), Person(), Person()
    now = datetime.now(UTC)
    lan, old_in_g1 = group(bot, G1, V, "小岚"), group(bot, G1, old.qq, old.name)
    # erased an hour before the backup, then back in the chat: what she said since is hers to keep
    await engine.memories.write(old_in_g1, "user", "我喜欢喝茶。")
    await erasure.delete_all(
        engine, ErasureTarget.user(bot, old.qq), actor=Operator(old.qq), now=now - timedelta(hours=1)
    )
    since = await engine.memories.write(old_in_g1, "user", "我最近在学游泳。")
    kept_pin = await notes.add_pin(engine, lan, f"提醒{old.name}带泳镜")
    # erased five minutes before the backup's time: the backup may have read a table before the
    # erasure reached it (the pin stands for such a page)
    await erasure.delete_all(
        engine, ErasureTarget.user(bot, recent.qq), actor=Operator(), now=now - timedelta(minutes=5)
    )
    await notes.add_pin(engine, lan, f"提醒QQ号{recent.qq}还钱")
    info = await backup.create_backup(engine)
    replays = await delete_alls_since(engine, info.created_at)

    report = await backup.restore_backup(engine, info.path)

    assert [row.id for row in await rows_of(engine, MemoryRow, MemoryRow.bot_id == bot)] == [since.id]
    assert [pin.id for pin in await rows_of(engine, PinRow, PinRow.bot_id == bot)] == [kept_pin.id]
    assert report["erasures_replayed"] == replays
    audited = await rows_of(engine, AuditRow, AuditRow.bot_id == bot)
    assert sorted(row.target for row in audited) == sorted([f"user:{old.qq}", f"user:{recent.qq}"])


async def test_switches_opt_outs_and_audit_records_travel_in_the_backup_and_merge(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, first, second = new_bot(), Scope("group", G1), Scope("group", G2)
    await switches.set_opt_out(engine, bot, W, True, actor=Operator(W))
    await switches.set_chat_memory(engine, bot, first, False, Operator())
    info = await backup.create_backup(engine)
    assert info.counts["optout"] >= 1 and info.counts["chat_switch"] >= 1 and info.counts["audit"] >= 2
    await switches.set_chat_memory(engine, bot, first, True, Operator())  # on again since: the newer choice
    await switches.set_opt_out(engine, bot, X, True, actor=Operator(X))
    # the database lost W's opt-out and the audit records (a new server, a table emptied by hand)
    async with engine.session() as session:
        await session.execute(delete(OptOutRow).where(OptOutRow.bot_id == bot, OptOutRow.user_id == W))
        await session.execute(delete(AuditRow).where(AuditRow.bot_id == bot))
        await session.commit()

    report = await backup.restore_backup(engine, info.path)

    async with engine.session() as session:
        off_chats, opted_out = await switch_store.load(session, bot)
        actions = sorted((await session.execute(select(AuditRow.action).where(AuditRow.bot_id == bot))).scalars())
    assert opted_out == {W, X}  # the file's and today's
    assert off_chats == set()  # the first group was switched on after the backup
    assert await switches.memory_on(engine, bot, second)  # never switched
    assert actions == ["optout", "switch_off"]  # the file's records, kept by id
    assert report["optout"] >= 1 and report["audit"] >= 2


# ----------------------------------------------------------------------------- the CLI


def _mentions(database: Path, person: Person) -> list[tuple[str, str]]:
    """(table, row) of every row of the plugin's tables in a standalone folder's SQLite file that
    names ``person``, the audit records left out (they name her by design)."""
    found = []
    with sqlite3.connect(database) as connection:
        tables = [
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name.startswith("cognition_") and name != "cognition_audit"
        ]
        for table in tables:
            for row in connection.execute(f'SELECT * FROM "{table}"'):
                value = " ".join(str(item) for item in row)
                if person.named_in(value):
                    found.append((table, value))
    return found


def header_time(file: Path) -> str:
    header, _ = backup.read_header(file)
    return str(header["created_at"])


def _delete_alls_since(database: Path, start: datetime) -> int:
    with sqlite3.connect(database) as connection:
        times = connection.execute("SELECT at FROM cognition_audit WHERE action LIKE 'delete_all_%'").fetchall()
    return sum(1 for (at,) in times if (as_utc(datetime.fromisoformat(at)) or start) >= start)


@pytest.mark.slow  # starts another process: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # the restore and delete-all run on a standalone SQLite home (server backups: elsewhere)
async def test_the_cli_restore_replays_a_cli_delete_all_and_says_so(tmp_root, chroma_port, tmp_path: Path) -> None:
    from processes import only_json, run_cli

    engine = await make_engine(tmp_root, chroma_port, profiles={"merge": False})
    bot, person = str(random.randint(10**8, 10**9 - 1)), Person()  # the CLI takes a QQ number
    await build_bank(engine, bot, person)
    file = (await backup.create_backup(engine, tmp_path / "bank.jsonl.gz")).path
    home = str(tmp_path / "home")
    database = tmp_path / "home" / "cognition.sqlite3"

    loaded = run_cli("backup", "restore", str(file), "--yes", "--home", home)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert _mentions(database, person)  # she is in the standalone folder's bank now
    erased = run_cli("delete-all", "--home", home, "--bot", bot, "--user", person.qq, "--yes", "--json")
    assert erased.returncode == 0, erased.stderr[-2000:]
    assert only_json(erased.stdout)["counts"]["memories"] > 0
    assert _mentions(database, person) == []

    restored = run_cli("backup", "restore", str(file), "--yes", "--home", home)

    assert restored.returncode == 0, restored.stderr[-2000:]
    assert _mentions(database, person) == []
    replays = _delete_alls_since(database, datetime.fromisoformat(header_time(file)) - OVERLAP)
    assert replays >= 1  # hers; the other tests' erasures of the shared database just before it too
    assert f"重放了备份之后的删除全部 {replays} 次" in restored.stdout, restored.stdout


def _rewrite(source: Path, target: Path, change: Any) -> None:
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle]
    with gzip.open(target, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in change(items))


def _as_version_1(items: list[Any]) -> list[Any]:
    """The file as version 1 wrote it: no switches, opt-outs or audit records."""
    header, *rows, end = items
    kept = [item for item in rows if item["table"] not in ("chat_switch", "optout", "audit")]
    counts = {table: count for table, count in end["end"].items() if table not in ("chat_switch", "optout", "audit")}
    return [{**header, "version": 1}, *kept, {"end": counts}]


def _optout_twice(items: list[Any]) -> list[Any]:
    header, *rows, end = items
    first = next(item for item in rows if item["table"] == "optout")
    counts = {**end["end"], "optout": end["end"]["optout"] + 1}
    return [header, *rows, first, {"end": counts}]


async def test_an_old_backup_still_restores_and_a_bad_switch_or_opt_out_row_is_refused(
    tmp_root, chroma_port, tmp_path: Path
) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    fact = await engine.memories.write(group(bot, G1, V, "小岚"), "group", "群40101每周五打羽毛球。")
    await switches.set_opt_out(engine, bot, W, True, actor=Operator(W))
    good = (await backup.create_backup(engine, tmp_path / "good.jsonl.gz")).path
    old, twice, newer = tmp_path / "old.jsonl.gz", tmp_path / "twice.jsonl.gz", tmp_path / "newer.jsonl.gz"
    _rewrite(good, old, _as_version_1)
    _rewrite(good, twice, _optout_twice)
    _rewrite(good, newer, lambda items: [{**items[0], "version": backup.VERSION + 1}, *items[1:]])
    for path, words in ((twice, "出现了两次"), (newer, "格式版本")):
        with pytest.raises(InvalidInput) as refused:
            await backup.restore_backup(engine, path)
        assert words in refused.value.zh, refused.value.zh
    await switches.set_chat_memory(engine, bot, Scope("group", G2), False, Operator())

    report = await backup.restore_backup(engine, old)

    assert fact.id in [row.id for row in await rows_of(engine, MemoryRow, MemoryRow.bot_id == bot)]
    state = await switches.switch_state(engine, bot)
    assert W in state.opted_out and f"group:{G2}" in state.off_chats  # today's, untouched
    assert report["optout"] == report["chat_switch"] == report["audit"] == 0
