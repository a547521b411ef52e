"""``CognitionEngine``: the one facade every caller uses (the bot, the CLI, the harness, the
benchmarks, importers and tests).

It owns the collaborators (a unit-of-work factory over the authority store, the embedder, the
vector index, the LLM gateway) and the per-process state (bounded per-turn caches, the index
synchroniser); the work itself lives in modules of one concern each:

=================  =====================================================================
``writes``         remember, write_memory, supersede (the one write path for facts)
``corrections``    correct (supersede a still-active fact), forget with its lineage, list
``editors``        who changes a fact (a chat's speaker, or the operator in one chat) and what they reach
``chat_memories``  one chat's facts for the consolidation cycle: pages, counts, labels, its own writes
``cycle_tools``    the consolidation cycle's judgement-step tools over one chat (``cycle_tools(engine, desk)``)
``recall``         candidates from both indices (the vector side under a deadline)
``ranking``        one score, feedback, MMR
``caches``         what a turn may skip (bounded TTL/LRU caches)
``indexing``       generation, outbox drains with per-row retries, repair by id
``reindex``        rebuild into a new generation; the embedding fingerprint
``status``         health report
``notes``          pinned memo (with revisions) and pins
``backup``         backup files and restore
``context``        the per-turn block
``turns``          the ``end`` tool (note + job) and transcript capture
``switches``       the per-chat memory switch and the per-user opt-out (cached lookups, changes)
``freshness``      other processes' changes drop this one's caches (change counters, read every 2 s)
``historian``      one job's observations into absolute facts
``idle_windows``   each chat's activity (counted in memory, flushed) and its next cycle's window
``workers``        leasing and running historian jobs
``profiles``       profile cards: save with revisions, restore, list, export (module functions);
                   ``profile_search``: what parts a chat may see, searching them
=================  =====================================================================

Callers reach the use cases through one service per area (``services``), attributes of the
facade: ``memories``, ``notes``, ``profiles``, ``governance``, ``index``, ``jobs``, ``turns``
(``engine.memories.remember(...)``, ``engine.jobs.list(...)``), and ``idle_windows`` (each chat's
activity and the window of its next consolidation cycle). The facade itself keeps the
lifecycle (``start``, ``close``, ``settle``), the store access (``unit_of_work``, ``session``)
and the per-process caches.

Every change runs in one unit of work (``unit_of_work()``); after it commits, the engine's
handlers run: drain the outbox soon, drop stale cache entries. So the same write has the same
effects whoever makes it. Nothing here imports NoneBot matchers or Amrita chat internals.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from ..config import CognitionConfig
from ..domain.events import Event
from ..domain.records import ChatContext
from ..domain.scoring import mmr_select
from ..errors import CognitionError, IndexUnavailable, SchemaBehind, SchemaMissing
from ..index.embedders import CachedQueryEmbedder, Embedder
from ..index.vector import ChromaVectorIndex
from ..logs import log_event
from ..store import keyword, knowledge_index, meta, profile_index, repository, revision, schema, sqlite
from ..store.unit_of_work import ScopeLocks, SessionFactory, UnitOfWork
from . import llm_usage as _llm_usage
from .caches import TurnCaches
from .exact_search import ExactSearch
from .freshness import ChangeWatch
from .idle_windows import ActivityTally
from .indexing import IndexSync, RepairReport
from .ranking import RecallFilters, RecallHit, RecallResult
from .recall import emptiness_probe
from .reindex import ReindexReport
from .services import (
    ConsolidationService,
    DecayService,
    GovernanceService,
    IdleWindowService,
    ImportService,
    IndexService,
    JobService,
    KnowledgeService,
    MemoryService,
    NoteService,
    ProfileService,
    TurnService,
)
from .switches import SwitchCache
from .turns import RecentTurns
from .workers import HistorianWorkers
from .writes import WriteResult

if TYPE_CHECKING:
    from ..llm.gateway import LLMGateway

__all__ = [
    "CognitionEngine",
    "RecallFilters",
    "RecallHit",
    "RecallResult",
    "ReindexReport",
    "RepairReport",
    "SessionFactory",
    "WriteResult",
]


class CognitionEngine:
    def __init__(
        self,
        config: CognitionConfig,
        session_factory: SessionFactory,
        embedder: Embedder,
        vector_index: ChromaVectorIndex,
        data_dir: Path | None = None,
        llm: LLMGateway | None = None,
    ) -> None:
        self.llm = llm
        if llm is not None and llm.usage_sink is None:  # every call counted in SQL, for every process's status
            llm.usage_sink = functools.partial(_llm_usage.record, self)
        self.config = config
        #: The plugin's data folder (backups live here); None for engines without one.
        self.data_dir = data_dir
        self._session_factory = session_factory
        self.embedder = CachedQueryEmbedder(embedder, ttl_seconds=config.embedder.query_cache_seconds)
        self.vectors = vector_index
        # two local models in one row (the e5 extra): the index reads hits back part by part
        vector_index.layout = getattr(embedder, "layout", None)
        self.caches = TurnCaches()
        #: Keeps the vector index in step with the store (drains, repair, the generation).
        self.index_sync = IndexSync(self)
        self.exact_search = ExactSearch(self)
        self.historian = HistorianWorkers(self)
        self.recent_turns = RecentTurns()
        self.switches = SwitchCache()
        #: Reads the change counters; another process's change drops what is cached of its bot.
        self.changes = ChangeWatch(self.drop_cached)
        self._scope_locks = ScopeLocks()
        #: Messages observed in this process, written to SQL by ``idle_windows.flush``.
        self.activity_tally = ActivityTally()
        #: The use cases, one service per area.
        self.memories = MemoryService(self)
        self.notes = NoteService(self)
        self.profiles = ProfileService(self)
        self.knowledge = KnowledgeService(self)
        self.governance = GovernanceService(self)
        self.index = IndexService(self)
        self.jobs = JobService(self)
        self.turns = TurnService(self)
        self.idle_windows = IdleWindowService(self)
        self.decay = DecayService(self)
        self.consolidation = ConsolidationService(self)
        self.imports = ImportService(self)

    @property
    def config(self) -> CognitionConfig:
        return self._config

    @config.setter
    def config(self, value: CognitionConfig) -> None:
        """A reloaded configuration applies to the engine and its LLM gateway alike."""
        self._config = value
        if self.llm is not None:
            self.llm.settings = value.llm

    # ------------------------------------------------------------------ store access

    def unit_of_work(self) -> UnitOfWork:
        """One transaction; after ``commit()`` the engine's after-commit handlers run."""
        return UnitOfWork(self._session_factory, self._after_commit, self._scope_locks)

    def session(self) -> AsyncSession:
        """A bare session, for reads in tests and diagnostics; changes go through a unit of work."""
        return self._session_factory(expire_on_commit=False)

    def _after_commit(self, events: Sequence[Event]) -> None:
        self.changes.apply(events)
        self.caches.apply(events)
        self.switches.apply(events)
        self.recent_turns.apply(events)
        self.index_sync.after_commit(events)
        self.historian.after_commit(events)

    def drop_cached(self, bot_id: str | None) -> None:
        """Forget every cached piece of a bot account's stored content (``None``: of every one):
        the turn caches, the switches and the recent turns."""
        self.caches.drop_bot(bot_id)
        self.switches.drop(bot_id)
        self.recent_turns.drop_bot(bot_id)

    async def refresh_caches(self, bot_id: str) -> None:
        """Before a turn serves cached content: drop what another process changed meanwhile
        (``freshness``; the counters are read at most every 2 s). A bank known to be empty has
        nothing cached worth checking, so its turn still needs no database."""
        if not self.bank_known_empty(bot_id):
            await self.changes.refresh(self)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Check that the plugin's tables are there (``SchemaMissing`` names what is missing and
        the command that creates it), make sure derived schema objects exist, load the active
        vector generation, and compile the MMR kernel off the event loop (its first call would
        otherwise compile on a turn)."""
        await self.check_schema()  # nothing to start on before `ambot orm upgrade`
        async with self.unit_of_work() as uow:
            await sqlite.use_write_ahead_log(uow.session)
            sqlite.use_secure_delete(uow.session)
        async with self.unit_of_work() as uow:
            await keyword.ensure_schema(uow.session)
            await profile_index.ensure_schema(uow.session)
            await knowledge_index.ensure_schema(uow.session)
            if await meta.get(uow.session, meta.GENERATION) is None:
                await meta.put(uow.session, meta.GENERATION, "1")
            await uow.commit()
        await self.index_sync.current_generation(force=True)
        await asyncio.to_thread(_warm_up_kernels)
        try:  # embedded: take the folder now, so that a second process is refused at once
            await asyncio.to_thread(self.vectors.open)
        except IndexUnavailable as error:  # recall is keyword-only and writes wait until it answers
            log_event("vector_index", level=logging.WARNING, unavailable=str(error)[:300])

    async def check_schema(self) -> None:
        """Raise ``SchemaMissing`` naming the plugin's tables and columns the database lacks (a
        catalogue read, nothing written)."""
        async with self.unit_of_work() as uow:
            tables, columns = await schema.missing(uow.session)
        if tables or columns:
            raise SchemaMissing(tables, columns, none_yet=len(tables) == len(schema.TABLES))

    async def open_for_reading(self) -> None:
        """What a read command needs instead of ``start``: the tables are there
        (``SchemaMissing``) and no migration of this version is pending (``SchemaBehind``).
        Writes nothing, takes no folder and starts no background work: the vector index opens
        on its first call (``status``), under the same folder hold as ``start`` takes, and is
        read without chromadb: an embedded one from its SQLite file where it can be
        (``index/chroma_file.py``), a server over its HTTP API (``index/chroma_rest.py``)."""
        await self.check_schema()
        async with self.unit_of_work() as uow:
            state = await revision.applied(uow.session)
        if state.behind:
            raise SchemaBehind(sorted(state.recorded), sorted(state.heads))
        self.vectors.read_without_client()  # no chromadb to import for status's counts

    async def close(self) -> None:
        """Stop the historian (jobs still running are cancelled and their leases given back, so the
        next start runs them at once), write the messages counted for the idle-window planner, let
        background work end, and let go of the vector index (an embedded folder is released for
        other processes)."""
        await self.historian.stop()
        try:
            await self.idle_windows.flush()
        except CognitionError as error:  # the counts of one flush interval are lost, said so
            log_event("activity_flush", level=logging.WARNING, at_close="failed", error=str(error)[:200])
        await self.settle()
        await asyncio.to_thread(self.vectors.close)

    @property
    def generation(self) -> int:
        return self.index_sync.generation

    async def settle(self) -> None:
        """Wait for background work (drains, bank checks): before shutdown and in tests."""
        while self.index_sync.has_work or self.caches.probing or self.historian.in_flight:
            await self.historian.settle()
            await self.index_sync.settle()
            await self.caches.settle()

    # ------------------------------------------------------------------ per-process caches

    def emptiness_probe(self, context: ChatContext) -> tuple[str, bool | None, Select[Any] | None]:
        return emptiness_probe(self, context)

    def remember_chat_sees(self, key: str, sees: bool) -> None:
        self.caches.remember_chat_sees(key, sees)

    def bank_known_empty(self, bot_id: str) -> bool:
        return self.caches.bank_known_empty(bot_id, lambda: self._bank_holds_anything(bot_id))

    async def _bank_holds_anything(self, bot_id: str) -> bool:
        async with self.unit_of_work() as uow:
            return await repository.bank_holds_anything(uow.session, bot_id)


def _warm_up_kernels() -> None:
    vectors = np.eye(3, dtype=np.float32)
    mmr_select(vectors, np.array([0.3, 0.2, 0.1], dtype=np.float32), 2, 0.7)
