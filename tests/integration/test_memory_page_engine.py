"""What the WebUI's memory page reads through the engine, on both backends: a bot account's chats
with counts and switch state, a chat's facts filtered by text / speaker / status / recorded dates,
the "why" chain from what the store keeps, the owner's correction, and jobs of one bot account."""

from __future__ import annotations

from datetime import timedelta

from engine_helpers import NOW, group, make_engine, new_bot, private

from amrita_plugin_cognition.api import InspectFilter, MemoryDraft, MemoryStatus, Operator, Provenance, Scope
from amrita_plugin_cognition.engine.turns import InputMessage

U, V = "10001", "10002"
G = Scope("group", "20001")
OWNER = Operator("webui:admin")


async def test_chats_are_listed_with_counts_and_switch_state_of_one_bot_account_only(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other = new_bot(), new_bot()
    in_group = group(bot, G.id, U)
    await engine.memories.write(in_group, "user", "小明喜欢吃火锅。", now=NOW)
    second = await engine.memories.write(in_group, "user", "小明住在杭州。", now=NOW)
    await engine.memories.write(private(bot, V), "user", "小红养了一只猫。", now=NOW)
    await engine.memories.write(group(other, G.id, U), "user", "别的账号的记忆。", now=NOW)
    await engine.memories.correct_in_chat(OWNER, bot, G, second.id, "小明住在上海。", now=NOW)
    await engine.governance.set_chat_memory(bot, Scope("private", V), False, OWNER, now=NOW)

    chats = {summary.scope.key: summary for summary in await engine.governance.chats(bot)}
    assert set(chats) == {G.key, f"private:{V}"}
    assert (chats[G.key].active, chats[G.key].superseded, chats[G.key].memory_on) == (2, 1, True)
    assert chats[f"private:{V}"].memory_on is False
    accounts = await engine.governance.bot_accounts()
    assert accounts[bot] == 4 and accounts[other] == 1


async def test_a_chats_facts_are_filtered_by_text_speaker_status_and_dates(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    first = await engine.memories.write(group(bot, G.id, U), "user", "小明喜欢吃火锅。", now=NOW)
    await engine.memories.write(group(bot, G.id, V), "user", "小红喜欢吃100%黑巧克力。", now=NOW + timedelta(days=3))
    await engine.memories.correct_in_chat(OWNER, bot, G, first.id, "小明喜欢吃烤鱼。", now=NOW + timedelta(days=5))

    async def ids(**wanted: object) -> list[int]:
        items, total = await engine.governance.inspect(InspectFilter(bot_id=bot, scope=G, **wanted))  # type: ignore[arg-type]
        assert total == len(items)
        return [item.record.id for item in items]

    assert len(await ids()) == 3
    assert len(await ids(text="喜欢吃")) == 3
    assert len(await ids(text="100%")) == 1 and await ids(text="%") == await ids(text="100%")  # % is a letter
    assert len(await ids(speaker_id=V)) == 1
    assert await ids(status=MemoryStatus.SUPERSEDED) == [first.id]
    assert len(await ids(recorded_from=NOW + timedelta(days=1), recorded_before=NOW + timedelta(days=4))) == 1
    assert await ids(text="火锅", status=MemoryStatus.ACTIVE) == []


async def test_the_why_chain_names_message_note_observation_gate_corrections_and_merges(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    chat = group(bot, G.id, U, "小明")
    said = InputMessage("m1", U, "小明", "我下周三去杭州出差<script>alert(1)</script>", NOW)
    await engine.turns.record(chat, said, "一路顺风", ended=True)
    await engine.turns.end(chat, "小明说下周三出差", ["小明下周三去杭州出差"], batch=[said], now=NOW)
    (job,) = await engine.jobs.list(bot_id=bot)
    draft = MemoryDraft(
        text="小明2026-12-09去杭州出差。",
        scope=G,
        speaker_id=U,
        speaker_name="小明",
        subject_id=U,
        provenance=Provenance.INFERRED,
        source={
            "via": "historian",
            "job": job["id"],
            "job_kind": "observations",
            "messages": ["m1"],
            "sources": [1],
            "absolute": False,
            "warning": "not absolute: 下周三",
        },
    )
    written = (await engine.memories.remember(bot, [draft], now=NOW)).written[0]
    corrected = await engine.memories.correct_in_chat(OWNER, bot, G, written.id, "小明2026-12-10去杭州出差。", now=NOW)

    chain = await engine.governance.why(bot, corrected.id)
    steps = {step.stage: step for step in chain.steps}
    assert [step.stage for step in chain.steps] == [
        "message",
        "note",
        "observation",
        "rewrite",
        "gate",
        "corrections",
        "merges",
        "status",
    ]
    # the correction's own source names no message; the older version's chain has them
    assert any("不是从聊天消息整理来的" in text for _, text in steps["message"].items)
    older = {step.stage: step for step in (await engine.governance.why(bot, written.id)).steps}
    assert any("<script>" in text for _, text in older["message"].items)  # the words as said, as text
    assert any("小明说下周三出差" in text for _, text in older["note"].items)
    assert any(text == "小明下周三去杭州出差" for _, text in older["observation"].items)
    assert any("未通过" in text for _, text in older["gate"].items) and any(
        "下周三" in t for _, t in older["gate"].items
    )
    assert steps["corrections"].memory_ids == [written.id]
    assert any("2026-12-09" in text for _, text in steps["corrections"].items)
    assert any("webui:admin" in label for label, _ in steps["corrections"].items) or any(
        "webui:admin" in text for _, text in steps["rewrite"].items
    )
    assert any("有效" in text for _, text in steps["status"].items)


async def test_jobs_are_listed_retried_and_dropped_per_bot_account(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot, other = new_bot(), new_bot()
    for account in (bot, other):
        chat = private(account, U)
        said = InputMessage("m1", U, "小明", "我喜欢猫", NOW)
        await engine.turns.end(chat, "小明喜欢猫", ["小明喜欢猫"], batch=[said], now=NOW)
    (mine,) = await engine.jobs.list(bot_id=bot)
    (theirs,) = await engine.jobs.list(bot_id=other)
    assert mine["bot_id"] == bot and theirs["bot_id"] == other
    assert await engine.jobs.drop([theirs["id"]], bot_id=bot) == 0  # another account's job is not this page's
    assert await engine.jobs.drop([mine["id"]], bot_id=bot) == 1
    assert await engine.jobs.list(bot_id=bot) == [] and len(await engine.jobs.list(bot_id=other)) == 1
    await engine.jobs.drop([theirs["id"]], bot_id=other)
