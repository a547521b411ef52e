"""Governance is permitted in one place, asked by the engine whatever the entry point: a delete-all,
a chat's switch and an opt-out called directly on the engine (as a tool, a script or a future
entry point would) are refused for an actor the policy does not allow (``PermissionDenied``, or
``InvalidInput`` for a request the plugin never carries out), change nothing and leave no audit
record; the operator (the CLI: the bot's owner) is an actor the policy allows, never a bare string."""

from __future__ import annotations

import pytest
from engine_helpers import NOW, group, make_engine, new_bot, private
from sqlalchemy import func, select

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import ChatContext, MemoryDraft, Scope
from amrita_plugin_cognition.engine import erasure, switches
from amrita_plugin_cognition.errors import CognitionError, InvalidInput, PermissionDenied
from amrita_plugin_cognition.store.models import AuditRow, MemoryRow

U, V = "10001", "10002"
G = "20001"


async def _seeded(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    drafts = [
        MemoryDraft(text="小明喜欢打羽毛球", scope=Scope("group", G), speaker_id=U, speaker_name="小明"),
        MemoryDraft(text="小红在准备考研", scope=Scope("group", G), speaker_id=V, speaker_name="小红"),
    ]
    await engine.memories.remember(bot, drafts, now=NOW)
    await engine.memories.remember(
        bot, [MemoryDraft(text="小明周末搬家", scope=Scope("private", U), speaker_id=U)], now=NOW
    )
    return engine, bot


async def _counts(engine, bot: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        facts = (await session.execute(select(func.count()).where(MemoryRow.bot_id == bot))).scalar_one()
        audits = (await session.execute(select(func.count()).where(AuditRow.bot_id == bot))).scalar_one()
    return int(facts), int(audits)


async def test_the_engine_refuses_an_unpermitted_delete_all_whoever_calls_it(tmp_root, chroma_port) -> None:
    engine, bot = await _seeded(tmp_root, chroma_port)
    before = await _counts(engine, bot)
    member, admin = group(bot, G, U, "小明"), group(bot, G, V, "小红", role="admin")
    refused = [
        (member, ErasureTarget.chat(bot, Scope("group", G)), PermissionDenied),  # a member, the whole group
        (member, ErasureTarget.user(bot, V), PermissionDenied),  # someone else's everything
        (private(bot, U), ErasureTarget.user(bot, V), PermissionDenied),
        (admin, ErasureTarget.chat(bot, Scope("private", U)), PermissionDenied),  # another chat
        (admin, ErasureTarget.bot(bot), PermissionDenied),  # a group admin is no bot admin
        (
            ChatContext(bot, Scope("group", G), V, is_bot_admin=True),
            ErasureTarget.bot(bot),
            InvalidInput,
        ),  # only from a private chat
        (private(bot, U), ErasureTarget.bot(bot), PermissionDenied),
        (group(new_bot(), G, V, role="admin"), ErasureTarget.chat(bot, Scope("group", G)), PermissionDenied),
        ("cli", ErasureTarget.bot(bot), PermissionDenied),  # a bare name is no actor
        (U, ErasureTarget.user(bot, U), PermissionDenied),
    ]
    for actor, target, error in refused:
        with pytest.raises(error) as raised:
            await engine.governance.delete_all(target, actor, now=NOW)  # type: ignore[arg-type]
        assert isinstance(raised.value, CognitionError) and raised.value.zh, (actor, target)
        with pytest.raises(error):  # the use case itself, below the service
            await erasure.delete_all(engine, target, actor, now=NOW)  # type: ignore[arg-type]
    assert await _counts(engine, bot) == before  # nothing erased, nothing audited


async def test_permitted_actors_erase_and_are_named_in_the_audit(tmp_root, chroma_port) -> None:
    engine, bot = await _seeded(tmp_root, chroma_port)
    mine = await engine.governance.delete_all(ErasureTarget.user(bot, U), group(bot, G, U, "小明"), now=NOW)
    assert mine.memories == 2  # their group fact and their private chat's
    chat = await engine.governance.delete_all(
        ErasureTarget.chat(bot, Scope("group", G)), group(bot, G, V, role="owner"), now=NOW
    )
    assert chat.memories == 1
    bot_admin = ChatContext(bot, Scope("private", "10009"), "10009", is_bot_admin=True)
    await engine.governance.delete_all(ErasureTarget.bot(bot), bot_admin, now=NOW)
    await engine.governance.delete_all(ErasureTarget.bot(bot), Operator("运维"), now=NOW)
    entries = await engine.governance.audit(bot, 10)
    assert [entry.actor for entry in reversed(entries)] == [U, V, "10009", "运维"]


async def test_switches_and_opt_outs_ask_the_same_policy(tmp_root, chroma_port) -> None:
    engine, bot = await _seeded(tmp_root, chroma_port)
    here = Scope("group", G)
    with pytest.raises(PermissionDenied):
        await engine.governance.set_chat_memory(bot, here, False, group(bot, G, U), now=NOW)  # a member
    with pytest.raises(PermissionDenied):
        await engine.governance.set_chat_memory(bot, Scope("group", "20002"), False, group(bot, G, V, role="admin"))
    with pytest.raises(PermissionDenied):
        await engine.governance.set_chat_memory(bot, here, False, "cli")  # type: ignore[arg-type]
    with pytest.raises(PermissionDenied):
        await engine.governance.set_opt_out(bot, V, True, private(bot, U))  # someone else's choice
    with pytest.raises(PermissionDenied):
        await switches.set_opt_out(engine, bot, V, True, actor=V)  # type: ignore[arg-type]
    assert await engine.governance.memory_on(bot, here)
    assert (await engine.governance.set_chat_memory(bot, here, False, group(bot, G, V, role="admin"))).changed
    assert (await engine.governance.set_chat_memory(bot, here, True, Operator())).changed
    assert (await engine.governance.set_opt_out(bot, U, True, group(bot, G, U))).changed
    assert (await engine.governance.set_opt_out(bot, U, False, Operator())).changed
    actors = [entry.actor for entry in reversed(await engine.governance.audit(bot, 10))]
    assert actors == [V, "cli", U, "cli"]
