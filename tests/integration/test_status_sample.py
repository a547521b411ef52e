"""``status`` in a bank of many chats: past ``FULL_CHECK_CHATS`` it compares the chats written most
recently with SQL, id by id, for ``SAMPLE_SECONDS``, and says how many it covered of how many; a
vector missing in a checked chat is found and named; without ``check_ids`` the sample's vectors are
only counted; ``full`` compares every chat as before."""

from __future__ import annotations

import asyncio
import contextlib
import io

import pytest
from engine_helpers import group, make_engine, new_bot
from rich.console import Console

from amrita_plugin_cognition.cli import render
from amrita_plugin_cognition.engine import status as status_module


async def test_many_chats_are_sampled_newest_first_and_a_gap_is_still_named(
    tmp_root, chroma_port, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chats = [group(bot, str(31000 + number), "10001", "小明") for number in range(4)]
    written = [
        await engine.memories.write(chat, "group", f"群{chat.scope.id}的小明喜欢第{number}种茶。")
        for number, chat in enumerate(chats)
    ]
    await engine.index.drain()
    newest, chat = written[-1], chats[-1]
    engine.vectors.delete(engine.generation, bot, chat.scope, [newest.id])  # the index lost one vector

    monkeypatch.setattr(status_module, "FULL_CHECK_CHATS", 2)  # "many chats": more than two
    monkeypatch.setattr(status_module, "SAMPLE_SECONDS", 0.0)  # one chat: the newest written
    # the sample's chats come from the newest rows: this test's (the worker's other tests wrote before it)
    monkeypatch.setattr(status_module, "SAMPLE_ROWS", len(chats))
    try:
        sampled = (await engine.index.status())["index"]
        assert sampled["healthy"] and sampled["checked"]["complete"] is False
        assert sampled["checked"]["chats"] == 1 and sampled["checked"]["of"] >= len(chats)
        assert sampled["missing"] == 1 and sampled["missing_ids"] == {f"{bot}|{chat.scope.key}": [newest.id]}
        assert sampled["stale"] == 0 and sampled["vectors_checked"] == 0 and "vectors" not in sampled

        monkeypatch.setattr(status_module, "SAMPLE_SECONDS", 60.0)  # time enough: every chat of the sample
        wider = (await engine.index.status())["index"]
        assert wider["checked"]["chats"] == len(chats) and wider["checked"]["complete"] is False
        assert wider["missing_ids"] == {f"{bot}|{chat.scope.key}": [newest.id]} and wider["vectors_checked"] == 3
        counted = (await engine.index.status(check_ids=False))["index"]  # counts, no id compared
        assert counted["vectors_checked"] == 3 and counted["checked"]["chats"] == len(chats)
        assert "missing" not in counted and "missing_ids" not in counted

        whole = (await engine.index.status(full=True))["index"]
        assert whole["checked"]["complete"] is True and whole["vectors"] >= len(chats) - 1
        assert whole["missing_ids"][f"{bot}|{chat.scope.key}"] == [newest.id]

        buffer = io.StringIO()
        original = render.console
        render.console = lambda: Console(file=buffer, width=200, highlight=False)  # type: ignore[assignment]
        try:
            render.status(await engine.index.status())
        finally:
            render.console = original  # type: ignore[assignment]
        out = buffer.getvalue()
        assert "只抽查了最近写入的" in out and "全部核对：加 --full" in out and f"#{newest.id}" in out
    finally:
        await engine.index.repair()  # the worker's index is shared by its tests: mend the gap
        await engine.index.drain()
    assert (await engine.index.status())["index"]["missing"] == 0  # the sample of this test's chats


async def test_the_sample_waits_on_the_index_while_the_chats_are_counted_and_a_small_bank_is_checked_whole(
    tmp_root, chroma_port, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count scans the whole table; the sample of recent chats runs meanwhile, and is thrown
    away when the count finds few chats (the whole comparison then reports, nothing of the sample)."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = group(bot, "31900", "10001", "小明")
    await engine.memories.write(chat, "group", "小明每周六去爬山。")
    await engine.index.drain()
    order: list[str] = []
    count, sample = status_module._count, status_module._check_recent_chats
    sampling = asyncio.Event()

    async def slow_count(*args):
        # a long scan: it ends once the sample has begun (or after 5 s, when nothing runs meanwhile)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(sampling.wait(), 5)
        try:
            return await count(*args)
        finally:
            order.append("counted")

    async def watched_sample(*args):
        order.append("sampling")
        sampling.set()
        return await sample(*args)

    monkeypatch.setattr(status_module, "_count", slow_count)
    monkeypatch.setattr(status_module, "_check_recent_chats", watched_sample)
    monkeypatch.setattr(status_module, "SAMPLE_SECONDS", 0.0)
    monkeypatch.setattr(status_module, "FULL_CHECK_CHATS", 0)  # many chats: the sample is kept
    sampled = (await engine.index.status())["index"]
    assert order == ["sampling", "counted"]
    assert sampled["checked"]["complete"] is False and sampled["checked"]["of"] >= 1 and "vectors" not in sampled

    order.clear()
    sampling.clear()
    monkeypatch.setattr(status_module, "FULL_CHECK_CHATS", 10**9)  # few chats: everything compared
    whole = await engine.index.status()
    assert order == ["sampling", "counted"]
    index = whole["index"]
    assert index["checked"]["complete"] is True and index["checked"]["chats"] == index["checked"]["of"]
    # (the worker's database holds other tests' facts, whose vectors are in their own engines' folders)
    assert "vectors_checked" not in index and index["vectors"] >= 1 and "missing" in index
    assert whole["active_total"] >= 1 and whole["top_scopes"]  # (the 20 largest chats of the worker's database)
