"""An embedder of the caller's own that raises a plain exception, or answers the wrong shape, fails
its rows only (issue 20, item 15): a custom embedder's ValueError aborted the whole outbox drain.
The failing fact stays queued with its error and is retried with backoff (dead after its
attempts), the other facts are indexed, the drain logs it and goes on; recall goes keyword-only."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np
import pytest
from engine_helpers import NOW, group, make_engine, new_bot, shared_local_embedder
from sqlalchemy import select

from amrita_plugin_cognition.domain.clock import UTC
from amrita_plugin_cognition.domain.records import MemoryDraft, Scope
from amrita_plugin_cognition.store.models import OutboxRow

POISON = "炸弹"


class PickyEmbedder:
    """The local model, except that it raises (or answers one row short) for a text with ``POISON``."""

    def __init__(self, failure: str) -> None:
        self.inner = shared_local_embedder()
        self.fingerprint = self.inner.fingerprint
        self.failure = failure

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(POISON in text for text in texts):
            if self.failure == "raise":
                raise ValueError("this model refuses the text")
            return (await self.inner.embed(texts))[:-1]
        return await self.inner.embed(texts)


@pytest.mark.parametrize("failure", ["raise", "short"])
async def test_a_failing_custom_embedder_fails_its_rows_only(tmp_root, chroma_port, caplog, failure: str) -> None:
    engine = await make_engine(tmp_root, chroma_port, embedder=PickyEmbedder(failure), outbox_max_attempts=2)
    bot = new_bot()
    here, there = Scope("group", "20001"), Scope("group", "20002")
    texts = [
        (here, "小明喜欢吃火锅。"),
        (here, f"小红说电影《{POISON}》很好看。"),
        (here, "小刚周五去爬山。"),
        (there, "阿杰养了一只猫。"),
    ]
    drafts = [MemoryDraft(text=text, scope=scope, speaker_id="10001") for scope, text in texts]
    with caplog.at_level(logging.WARNING, logger="cognition"):
        result = await engine.memories.remember(bot, drafts, now=NOW)
        await engine.settle()  # the drain the write schedules after its commit
        await engine.index.drain()  # and one by command: the failed row waits for its backoff
    poisoned = result.record_ids[1]
    async with engine.session() as session:
        left = list((await session.execute(select(OutboxRow).where(OutboxRow.bot_id == bot))).scalars())
    assert [(row.memory_id, row.state, row.attempts) for row in left] == [(poisoned, "pending", 1)]
    assert "EmbedderUnavailable" not in left[0].last_error and "embedder" in left[0].last_error
    assert ("ValueError" in left[0].last_error) == (failure == "raise")
    assert any("stage=outbox" in record.getMessage() and " failed=" in record.getMessage() for record in caplog.records)
    recalled = await engine.memories.recall(group(bot, "20001", "10001"), ["火锅"], now=NOW)
    assert recalled.mode == "full" and result.record_ids[0] in [hit.record.id for hit in recalled.hits]
    # retried with backoff, then kept as dead with its error (ambot cognition outbox retry revives it)
    await engine.index.drain(now=datetime.now(UTC) + timedelta(days=1))
    async with engine.session() as session:
        row = (await session.execute(select(OutboxRow).where(OutboxRow.bot_id == bot))).scalar_one()
    assert (row.state, row.attempts) == ("dead", 2)
