"""Keeping the derived vector index in step with the authority store.

* **Generation.** The active vector generation is a row of SQL meta. Every process re-reads it
  before it writes (each outbox batch) and at most every ``GENERATION_TTL_SECONDS`` before it
  searches, and at once when an index call fails; so a reindex by another process (the CLI with
  a Chroma server) is followed within seconds, and a batch applied to a generation that was
  switched meanwhile is applied again to the new one.
* **Outbox.** Each row has its own attempts: a failing fact (or a failing chat's collection) is
  retried with backoff and finally kept as dead, while the others go on.
* **Repair** (``engine/index_repair.py``): ``missing_and_extra`` compares, by id, what SQL holds
  active with what a generation stores; ``repair`` re-queues the missing and deletes the extra (at
  startup and by command).
* **Cards.** Profile card parts follow the same way into one card collection per bot account
  (outbox rows of scope kind ``profile`` name a card's row id; the drain reads the row then:
  present, its current text is embedded; gone, its vector is deleted). Repair compares them by id
  too (reported under ``<bot>|profiles``) and re-writes missing card keyword rows.
* **The copy in SQL** (``store/vector_copy.py``): every fact's vector written to the index is
  written to SQL right after, and removed with it; recall searches a small chat there
  (``engine/exact_search.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import OperationalError

from ..domain.clock import UTC
from ..domain.events import IndexWorkQueued
from ..domain.records import MemoryKind, MemoryStatus, Scope
from ..errors import EmbedderUnavailable, IndexUnavailable, StoreUnavailable
from ..logs import log_event
from ..store import knowledge as knowledge_store
from ..store import meta, outbox, profile_index, repository, turns, vector_copy
from ..store import profiles as profile_store
from ..store.models import KnowledgeRow, MemoryRow, OutboxRow, ProfileRow
from . import index_repair
from .index_repair import RepairReport
from .knowledge_vectors import apply_knowledge

if TYPE_CHECKING:
    from .service import CognitionEngine

OUTBOX_BATCH = 256
#: How long a process trusts its copy of the active generation before searching.
GENERATION_TTL_SECONDS = 2.0
#: After this many single rows in a row fail, the index is taken to be down: the rest of the
#: batch is counted as failed without being tried (no hammering a dead index row by row).
CONSECUTIVE_FAILURES_DOWN = 3

IndexFailure = (EmbedderUnavailable, IndexUnavailable)
_Key = tuple[str, Scope]
#: How outbox rows are applied together: a chat's facts (bot, scope), or a bot's cards or
#: knowledge entries (bot, the outbox row's scope kind).
_Batch = tuple[str, Scope | str]


@dataclass(slots=True)
class DerivedRows:
    """The rows an outbox batch names besides facts, read when the batch is applied."""

    cards: dict[int, ProfileRow] = field(default_factory=dict)
    knowledge: dict[int, KnowledgeRow] = field(default_factory=dict)


class IndexSync:
    def __init__(self, engine: CognitionEngine) -> None:
        self._engine = engine
        self.generation = 1
        self._generation_read = 0.0
        #: The generation a running reindex is building (the outbox writes to it too).
        self.building_generation: int | None = None
        #: Held while index work is applied: drains, and a reindex's page reads and upserts.
        self.lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[int]] = set()
        #: A scheduled drain is waiting for the lock (one such is enough).
        self._drain_waiting = False

    # ---------------------------------------------------------------- generation

    async def current_generation(self, force: bool = False) -> int:
        """The active generation, re-read from SQL when older than the TTL (or when forced)."""
        if force or time.monotonic() - self._generation_read > GENERATION_TTL_SECONDS:
            async with self._engine.unit_of_work() as uow:
                stored = await meta.get(uow.session, meta.GENERATION)
            self._set_generation(int(stored or 1))
        return self.generation

    def _set_generation(self, generation: int) -> None:
        if generation != self.generation:
            log_event("generation", before=self.generation, after=generation)
        self.generation = generation
        self._generation_read = time.monotonic()

    async def switch_generation(self, generation: int, fingerprint: str) -> None:
        async with self._engine.unit_of_work() as uow:
            await meta.put(uow.session, meta.GENERATION, str(generation))
            await meta.put(uow.session, meta.FINGERPRINT, fingerprint)
            await uow.commit()
        self._set_generation(generation)

    # ---------------------------------------------------------------- background drains

    def after_commit(self, events: Sequence[Any]) -> None:
        if any(isinstance(event, IndexWorkQueued) for event in events):
            self.schedule_drain()

    def schedule_drain(self) -> None:
        """Apply fresh writes to the vector index soon, without making the writer wait."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: the next drain (timer, command) picks the work up
            return
        if self._drain_waiting:
            return  # a drain that has not started yet will see this work too
        self._drain_waiting = True
        task = loop.create_task(self.drain(scheduled=True))
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def repair_soon(self) -> None:
        """Check the index against SQL by id in the background (at startup), repairing it."""
        task = asyncio.get_running_loop().create_task(self._repair_quietly())
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    async def _repair_quietly(self) -> int:
        try:
            report = await self.repair()
        except IndexFailure as error:  # the index is down: the outbox and the next start catch up
            log_event("repair", level=logging.WARNING, skipped=str(error)[:200])
            return 0
        return report.requeued + report.deleted

    def _finished(self, task: asyncio.Task[int]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            self._drain_waiting = False
        error = None if task.cancelled() else task.exception()
        # SQLite busy under a burst of writes (OperationalError), or the database unreachable
        if isinstance(error, (OperationalError, StoreUnavailable)):
            log_event("outbox", level=logging.WARNING, drain_deferred=str(error)[:200], next="timer or next write")
        elif error is not None:
            log_event("outbox", level=logging.ERROR, drain_failed=repr(error)[:300])

    @property
    def has_work(self) -> bool:
        return bool(self._tasks)

    async def settle(self) -> None:
        """Wait until scheduled drains have finished (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ---------------------------------------------------------------- outbox

    async def drain(self, max_batches: int | None = None, scheduled: bool = False, now: datetime | None = None) -> int:
        """Apply due index work. Returns how many outbox rows were applied. A row that fails is
        retried later with backoff (dead after ``outbox_max_attempts``); the others go on.
        ``now`` decides which rows are due (the current time by default)."""
        applied = 0
        batches = 0
        async with self.lock:
            if scheduled:
                self._drain_waiting = False
            while max_batches is None or batches < max_batches:
                batches += 1
                generation = await self.current_generation(force=True)
                moment = now or datetime.now(UTC)
                async with self._engine.unit_of_work() as uow:
                    pending = await outbox.claim(
                        uow.session, moment, OUTBOX_BATCH, self._engine.config.outbox_lease_seconds
                    )
                    if not pending:
                        break
                    await uow.commit()
                async with self._engine.unit_of_work() as uow:
                    ids = [entry.memory_id for entry in pending if outbox.is_chat(entry)]
                    rows = {row.id: row for row in await repository.rows_by_ids(uow.session, ids)}
                    card_ids = [entry.memory_id for entry in pending if outbox.is_card(entry)]
                    entry_ids = [entry.memory_id for entry in pending if outbox.is_knowledge(entry)]
                    derived = DerivedRows(
                        {row.id: row for row in await profile_store.rows_by_ids(uow.session, card_ids)},
                        {row.id: row for row in await knowledge_store.rows_by_ids(uow.session, entry_ids)},
                    )
                try:
                    done, failures = await self._apply(pending, rows, derived, generation)
                    switched = await self.current_generation(force=True) != generation
                except BaseException:
                    await self._release(pending)
                    raise
                if switched:  # by another process meanwhile: apply again to the new one
                    await self._release(pending)
                    continue
                async with self._engine.unit_of_work() as uow:
                    await outbox.complete(uow.session, done)
                    retried, dead = await outbox.fail(
                        uow.session, failures, moment, self._engine.config.outbox_max_attempts
                    )
                    finished = {*done, *failures}
                    await outbox.release(uow.session, [entry for entry in pending if entry.id not in finished])
                    await uow.commit()
                applied += len(done)
                if failures:
                    first = next(iter(failures.values()))
                    log_event(
                        "outbox",
                        level=logging.WARNING,
                        failed=len(failures),
                        retry=retried,
                        dead=dead,
                        error=first[:200],
                    )
                if not done:
                    break  # nothing went through: the index (or embedder) is down; backoff decides
        return applied

    async def _release(self, claimed: Sequence[OutboxRow]) -> None:
        """Give back claimed rows unfinished (best effort: their lease ends by itself)."""
        try:
            async with self._engine.unit_of_work() as uow:
                await outbox.release(uow.session, claimed)
                await uow.commit()
        except (StoreUnavailable, OperationalError) as error:
            log_event("outbox", level=logging.WARNING, release_failed=str(error)[:200])

    async def _apply(
        self,
        pending: Sequence[OutboxRow],
        rows: dict[int, MemoryRow],
        derived: DerivedRows,
        generation: int,
    ) -> tuple[list[int], dict[int, str]]:
        """Apply each chat's entries (and each bot's card entries) together; when a batch fails,
        its entries one by one (a fact that cannot be indexed must not hold back its chat).
        Returns the outbox ids done and the failures (outbox id -> error)."""
        groups: dict[_Batch, list[OutboxRow]] = {}
        for entry in pending:
            scope = Scope(entry.scope_kind, entry.scope_id) if outbox.is_chat(entry) else entry.scope_kind  # type: ignore[arg-type]
            groups.setdefault((entry.bot_id, scope), []).append(entry)
        done: list[int] = []
        failures: dict[int, str] = {}
        consecutive = 0
        for key, entries in groups.items():
            batches = [list(entries)]
            while batches:
                batch = batches.pop(0)
                if consecutive >= CONSECUTIVE_FAILURES_DOWN:
                    failures.update((entry.id, "index unavailable (not tried)") for entry in batch)
                    continue
                try:
                    await self._apply_group(key, batch, rows, derived, generation)
                except IndexFailure as error:
                    if len(batch) > 1:  # find the entry that fails: the chat's entries one by one
                        batches = [[entry] for entry in batch] + batches
                        continue
                    failures[batch[0].id] = str(error)
                    consecutive += 1
                else:
                    done.extend(entry.id for entry in batch)
                    consecutive = 0
        return done, failures

    async def _apply_group(
        self,
        key: _Batch,
        entries: Sequence[OutboxRow],
        rows: dict[int, MemoryRow],
        derived: DerivedRows,
        generation: int,
    ) -> None:
        """To the live generation; during a reindex, to the generation being built first (it
        must succeed) and to the live one as well, best effort (its model may be the old one)."""
        if self.building_generation is None:
            await self._apply_to(key, entries, rows, derived, generation)
            return
        await self._apply_to(key, entries, rows, derived, self.building_generation)
        try:
            await self._apply_to(key, entries, rows, derived, generation)
        except IndexFailure as error:
            log_event("outbox", level=logging.WARNING, live_generation_skipped=str(error)[:200])

    async def _apply_to(
        self,
        batch: _Batch,
        entries: Sequence[OutboxRow],
        rows: dict[int, MemoryRow],
        derived: DerivedRows,
        generation: int,
    ) -> None:
        bot_id, scope = batch
        if scope == outbox.KNOWLEDGE:
            await apply_knowledge(self._engine, bot_id, entries, derived.knowledge, generation)
            return
        if not isinstance(scope, Scope):
            await self._apply_cards(bot_id, entries, derived.cards, generation)
            return
        key = (bot_id, scope)
        upserts: list[MemoryRow] = []
        deletes: list[int] = []
        for entry in entries:
            row = rows.get(entry.memory_id)
            if row is not None and row.status == MemoryStatus.ACTIVE.value:
                upserts.append(row)
            else:
                deletes.append(entry.memory_id)
        if upserts:
            await self.upsert_rows({key: upserts}, generation)
        if deletes:
            await self.delete_rows(generation, bot_id, scope, sorted(set(deletes)))

    async def delete_rows(self, generation: int, bot_id: str, scope: Scope, ids: Sequence[int]) -> None:
        """Remove facts' vectors from a chat's collection, then their copy in SQL."""
        await asyncio.to_thread(self._engine.vectors.delete, generation, bot_id, scope, ids)
        async with self._engine.unit_of_work() as uow:
            await vector_copy.remove(uow.session, generation, ids)
            await uow.commit()

    async def _apply_cards(
        self, bot_id: str, entries: Sequence[OutboxRow], cards: dict[int, ProfileRow], generation: int
    ) -> None:
        """A bot's card entries: a card row that still exists (and is still this bot's: SQLite
        may hand a deleted row's id out again) is embedded as it reads now; else its vector goes."""
        upserts: list[ProfileRow] = []
        deletes: list[int] = []
        for entry in entries:
            row = cards.get(entry.memory_id)
            if row is not None and row.bot_id == bot_id:
                upserts.append(row)
            else:
                deletes.append(entry.memory_id)
        if upserts:
            await self.upsert_cards(upserts, generation)
        if deletes:
            await asyncio.to_thread(self._engine.vectors.delete_cards, generation, bot_id, sorted(set(deletes)))

    async def upsert_cards(self, rows: Sequence[ProfileRow], generation: int) -> None:
        """Embed card parts (their name, tags and sections) into their bots' card collections."""
        by_bot: dict[str, dict[int, ProfileRow]] = {}
        for row in rows:
            by_bot.setdefault(row.bot_id, {})[row.id] = row
        for bot_id, unique in by_bot.items():
            parts = list(unique.values())
            vectors = await self._engine.embedder.embed([profile_index.row_text(row) for row in parts])
            metadatas: list[dict[str, str | int | float | bool]] = [
                {
                    "card": profile_index.card_key(row.entity_type, row.entity_id, row.part),
                    "entity_type": row.entity_type,
                    "entity_id": row.entity_id,
                    "part": row.part,
                }
                for row in parts
            ]
            await asyncio.to_thread(
                self._engine.vectors.upsert_cards, generation, bot_id, [row.id for row in parts], vectors, metadatas
            )

    async def _embedding_texts(self, bot_id: str, scope: Scope, rows: list[MemoryRow]) -> list[str]:
        """What is embedded for each row: its text, or for a conversation turn its window."""
        turn_times = [row.happened_at for row in rows if row.kind == MemoryKind.TURN.value and row.happened_at]
        windows: dict[int, str] = {}
        if turn_times:
            async with self._engine.unit_of_work() as uow:
                found = await turns.turn_windows(uow.session, bot_id, scope, min(turn_times), max(turn_times))
            windows = {item.row.id: item.embedding_text for item in found}
        return [windows.get(row.id, row.text) for row in rows]

    async def upsert_rows(self, groups: dict[_Key, list[MemoryRow]], generation: int) -> None:
        for (bot_id, scope), scope_rows in groups.items():
            unique = list({row.id: row for row in scope_rows}.values())
            vectors = await self._engine.embedder.embed(await self._embedding_texts(bot_id, scope, unique))
            metadatas: list[dict[str, str | int | float | bool]] = [
                {"speaker_id": row.speaker_id, "subject_id": row.subject_id, "importance": row.importance}
                for row in unique
            ]
            ids = [row.id for row in unique]
            await asyncio.to_thread(self._engine.vectors.upsert, generation, bot_id, scope, ids, vectors, metadatas)
            async with self._engine.unit_of_work() as uow:  # the copy follows the index call it mirrors
                await vector_copy.put(uow.session, generation, bot_id, scope, ids, vectors)
                await uow.commit()

    # ---------------------------------------------------------------- verification and repair

    async def missing_and_extra(self, generation: int | None = None) -> RepairReport:
        """Compare, by id, what SQL holds active with what ``generation`` stores (``index_repair``)."""
        return await index_repair.missing_and_extra(self._engine, self, generation)

    async def repair(self, generation: int | None = None, direct: bool = False) -> RepairReport:
        """Re-queue the missing and delete the extra of ``generation`` (``index_repair``)."""
        return await index_repair.repair(self._engine, self, generation, direct)

    async def retry_dead(self) -> int:
        async with self._engine.unit_of_work() as uow:
            count = await outbox.retry_dead(uow.session)
            uow.record(IndexWorkQueued())
            await uow.commit()
        return count
