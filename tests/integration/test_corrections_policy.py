"""Corrections and forgets see what recall sees: the configured ``scope_policy``, not a hard-coded
``strict``. Under ``open`` a group was shown another group's fact, so it is told who may change it
(that group, or the person it is about from their private chat); under ``strict`` the fact is not
there for it at all."""

from __future__ import annotations

import pytest
from engine_helpers import NOW, group, make_engine, new_bot, private

from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.errors import InvalidInput, NotFound, PermissionDenied

U, V = "10001", "10002"
A, B = "30001", "30002"


async def _fact_in_b(engine, bot: str) -> int:  # type: ignore[no-untyped-def]
    draft = MemoryDraft(text="小明下周三去杭州出差", scope=Scope("group", B), speaker_id=U, speaker_name="小明")
    result = await engine.memories.remember(bot, [draft], now=NOW)
    return result.written[0].id


@pytest.mark.parametrize("policy", ["strict", "open"])
async def test_a_correction_reads_the_configured_policy(tmp_root, chroma_port, policy: str) -> None:
    engine = await make_engine(tmp_root, chroma_port, scope_policy=policy)
    bot = new_bot()
    memory_id = await _fact_in_b(engine, bot)
    in_a = group(bot, A, U, "小明", role="admin")
    recalled = await engine.memories.recall(in_a, ["杭州出差"], now=NOW)
    assert (memory_id in {hit.record.id for hit in recalled.hits}) == (policy == "open")
    if policy == "open":  # seen here: the answer says where it may be changed, never "not found"
        with pytest.raises(PermissionDenied):
            await engine.governance.forgettable(in_a, memory_id)
        with pytest.raises(PermissionDenied):
            await engine.governance.forget(in_a, memory_id, now=NOW)
        with pytest.raises(InvalidInput, match="不属于当前会话"):
            await engine.memories.update(in_a, memory_id, "小明下周四去杭州出差", now=NOW)
    else:
        with pytest.raises(NotFound):
            await engine.governance.forgettable(in_a, memory_id)
        with pytest.raises(NotFound):
            await engine.governance.forget(in_a, memory_id, now=NOW)
        with pytest.raises(NotFound):
            await engine.memories.update(in_a, memory_id, "小明下周四去杭州出差", now=NOW)
    # under either policy: a stranger's private chat never sees it, its person's does
    with pytest.raises(NotFound):
        await engine.governance.forgettable(private(bot, V), memory_id)
    assert (await engine.governance.forgettable(private(bot, U), memory_id)).id == memory_id
    corrected = await engine.memories.update(group(bot, B, U, "小明"), memory_id, "小明下周四去杭州出差", now=NOW)
    assert "周四" in corrected.text and corrected.id != memory_id
