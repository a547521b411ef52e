"""The application service: every operation of the plugin, for the bot, the CLI and the harness.

It owns no global state beyond its collaborators: a session factory for the authority store,
an embedder, and the vector index. Nothing here imports NoneBot matchers or Amrita internals.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..config import CognitionConfig
from ..domain.admission import admit
from ..domain.query import query_views
from ..domain.records import (
    ChatContext,
    Importance,
    MemoryDraft,
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
    Scope,
    content_hash,
    is_conversation_turn,
    normalise_text,
)
from ..domain.scoring import (
    RankingWeights,
    feedback_factors,
    final_score,
    mmr_select,
    recency_factor,
    score_fusion,
)
from ..domain.tokenize import query_terms
from ..domain.visibility import Visibility, visibility_for
from ..errors import InvalidInput, LimitExceeded, NotFound, PermissionDenied
from ..index.embedders import CachedQueryEmbedder, Embedder, EmbedderUnavailable, Fingerprint
from ..index.vector import ChromaVectorIndex, IndexUnavailable
from ..store import keyword, repository
from ..store.models import MemoryRow, OutboxRow

logger = logging.getLogger("cognition")

#: Called as ``factory(expire_on_commit=False)`` (``nonebot_plugin_orm.get_session`` or an
#: ``async_sessionmaker``): records are read after commit, never lazily refreshed.
SessionFactory = Callable[..., AsyncSession]
META_GENERATION = "vector_generation"
META_FINGERPRINT = "embedding_fingerprint"
OUTBOX_BATCH = 256
#: How long a chat that sees no memory is trusted to stay empty (other processes' writes).
EMPTY_CHAT_TTL_SECONDS = 10.0
MAX_OUTBOX_ATTEMPTS_LOGGED = 5


def log_event(stage: str, started: float | None = None, level: int = logging.INFO, **fields: Any) -> None:
    """Structured ``[cognition] stage=... key=value`` log line, with elapsed ms when timed."""
    parts = [f"stage={stage}"]
    if started is not None:
        parts.append(f"elapsed_ms={(time.perf_counter() - started) * 1000:.1f}")
    parts.extend(f"{key}={value}" for key, value in fields.items())
    logger.log(level, "[cognition] %s", " ".join(parts))


@dataclass(slots=True)
class RecallFilters:
    importance: Importance | None = None
    tags: tuple[str, ...] = ()
    time_from: datetime | None = None
    time_to: datetime | None = None

    def allows(self, record: MemoryRecord) -> bool:
        if self.importance is not None and record.importance != self.importance:
            return False
        if self.tags and not set(self.tags) & set(record.tags):
            return False
        if self.time_from is not None and record.when < self.time_from:
            return False
        return not (self.time_to is not None and record.when > self.time_to)


@dataclass(slots=True)
class RecallHit:
    record: MemoryRecord
    score: float
    similarity: float = 0.0
    keyword_score: float = 0.0


@dataclass(slots=True)
class RecallResult:
    hits: list[RecallHit]
    #: "full", "keyword_only" (vector side failed) — what the caller got.
    mode: str = "full"
    elapsed_ms: float = 0.0


@dataclass(slots=True)
class WriteResult:
    written: list[MemoryRecord] = field(default_factory=list)
    #: (draft index, text, reason) of every refused draft; reasons: credential, do_not_remember,
    #: forgotten, duplicate, too_long, empty.
    refused: list[tuple[int, str, str]] = field(default_factory=list)
    #: draft index -> id of the record that holds it (new, or the existing duplicate).
    record_ids: dict[int, int] = field(default_factory=dict)


@dataclass(slots=True)
class ReindexReport:
    generation_before: int
    generation_after: int
    sql_active: int
    vectors_before: int
    vectors_after: int
    reapplied: int
    seconds: float


def _weights(config: CognitionConfig) -> RankingWeights:
    recall = config.recall
    return RankingWeights(
        fusion=recall.fusion,
        dense_normalisation=recall.dense_normalisation,
        speaker_boost=recall.speaker_boost,
        vector_weight=recall.vector_weight,
        keyword_weight=recall.keyword_weight,
        rrf_k=recall.rrf_k,
        recency_floor=recall.recency_floor,
        recency_min_similarity=recall.recency_min_similarity,
        mmr_lambda=recall.mmr_lambda,
        feedback_weight=recall.feedback_weight,
        feedback_docs=recall.feedback_docs,
    )


def aware_or_now(moment: datetime | None) -> datetime:
    """``moment`` as an aware datetime (naive means UTC), or the current time when None."""
    if moment is None:
        return datetime.now(UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


class CognitionEngine:
    def __init__(
        self,
        config: CognitionConfig,
        session_factory: SessionFactory,
        embedder: Embedder,
        vector_index: ChromaVectorIndex,
        data_dir: Path | None = None,
    ) -> None:
        self.config = config
        #: The plugin's data folder (backups live here); None for engines without one.
        self.data_dir = data_dir
        self._session_factory = session_factory
        self.embedder = CachedQueryEmbedder(embedder, ttl_seconds=config.embedder.query_cache_seconds)
        self.vectors = vector_index
        self._scope_locks: dict[str, asyncio.Lock] = {}
        #: Visibility key -> (the chat sees some fact, monotonic time until which that is known).
        self._chat_visibility: dict[str, tuple[bool, float]] = {}
        #: Bot id -> (bank holds nothing, monotonic time of the check): lets a turn on an empty
        #: bank skip the database entirely (``bank_known_empty``).
        self._bank_state: dict[str, tuple[bool, float]] = {}
        #: Bumped by every local write, so that a probe that raced a write is not believed.
        self._write_epoch = 0
        self._bank_probes: dict[str, asyncio.Task[None]] = {}
        #: "bot|scope" -> (valid until, memo, pins): the hook's memo and pins (engine/notes.py).
        self.notes_cache: dict[str, tuple[float, str, tuple[Any, ...]]] = {}
        self._outbox_lock = asyncio.Lock()
        self._generation = 1
        #: The generation a running reindex is building (the outbox writes to it too).
        self._building_generation: int | None = None

    # ------------------------------------------------------------------ lifecycle

    def session(self) -> AsyncSession:
        return self._session_factory(expire_on_commit=False)

    async def start(self) -> None:
        """Make sure derived schema objects exist and load the active vector generation."""
        async with self.session() as session:
            await keyword.ensure_schema(session)
            generation = await repository.get_meta(session, META_GENERATION)
            if generation is None:
                await repository.set_meta(session, META_GENERATION, "1")
            await session.commit()
        self._generation = int(generation or 1)

    @property
    def generation(self) -> int:
        return self._generation

    async def stored_fingerprint(self) -> Fingerprint | None:
        async with self.session() as session:
            raw = await repository.get_meta(session, META_FINGERPRINT)
        return None if raw is None else Fingerprint.from_dict(json.loads(raw))

    async def check_fingerprint(self, confirm: Callable[[str], bool] | None = None) -> str:
        """Compare the stored embedding fingerprint with the configured embedder.

        Returns "new", "match", "rebuilt", or "ignored"; raises ``RuntimeError`` when the policy
        is ``ask`` and nobody confirmed (the index must not be used with the wrong model).
        """
        stored = await self.stored_fingerprint()
        current = self.embedder.fingerprint
        if stored is None:
            await self._save_fingerprint(current)
            return "new"
        same_model = (stored.protocol, stored.model, stored.url) == (current.protocol, current.model, current.url)
        same_dimension = not stored.dimension or not current.dimension or stored.dimension == current.dimension
        if same_model and same_dimension:
            return "match"
        message = f"embedding fingerprint changed: stored {stored.as_dict()} configured {current.as_dict()}"
        policy = self.config.embedder.on_mismatch
        if policy == "never":
            log_event("fingerprint", level=logging.WARNING, action="ignored", detail=message)
            return "ignored"
        if policy == "ask" and (confirm is None or not confirm(message)):
            raise RuntimeError(f"{message}; refusing to load (on_mismatch=ask). Run `ambot cognition reindex`.")
        log_event("fingerprint", level=logging.WARNING, action="rebuild", detail=message)
        await self.reindex()
        return "rebuilt"

    async def _save_fingerprint(self, fingerprint: Fingerprint) -> None:
        async with self.session() as session:
            await repository.set_meta(session, META_FINGERPRINT, json.dumps(fingerprint.as_dict()))
            await session.commit()

    # ------------------------------------------------------------------ writes

    def scope_lock(self, bot_id: str, scope: Scope) -> asyncio.Lock:
        return self._scope_locks.setdefault(f"{bot_id}:{scope.key}", asyncio.Lock())

    def _check_text(self, text: str) -> str:
        value = normalise_text(text)
        if not value:
            raise InvalidInput("内容不能为空")
        if len(value) > self.config.memory_max_chars:
            raise LimitExceeded(f"内容过长：{len(value)} 字，单条记忆上限 {self.config.memory_max_chars} 字")
        return value

    async def remember(self, bot_id: str, drafts: Sequence[MemoryDraft], now: datetime | None = None) -> WriteResult:
        """The one write path for facts: admission, barrier, dedupe, limit, authority + indices.

        Drafts are grouped by scope; each scope's count check and insert share one transaction
        under the scope lock, so the per-scope limit holds under concurrent writers.
        """
        started = time.perf_counter()
        now = aware_or_now(now)
        result = WriteResult()
        by_scope: dict[Scope, list[tuple[int, MemoryDraft]]] = {}
        for index, draft in enumerate(drafts):
            try:
                draft.text = self._check_text(draft.text)
            except (InvalidInput, LimitExceeded) as error:
                result.refused.append((index, draft.text, "empty" if isinstance(error, InvalidInput) else "too_long"))
                continue
            verdict = admit(draft.text)
            if not verdict.admit:
                result.refused.append((index, draft.text, verdict.reason))
                continue
            if draft.kind == MemoryKind.FACT and is_conversation_turn(draft.text, draft.speaker_name):
                draft.kind = MemoryKind.TURN
            by_scope.setdefault(draft.scope, []).append((index, draft))
        for scope, scope_drafts in by_scope.items():
            async with self.scope_lock(bot_id, scope), self.session() as session:
                await repository.lock_scope(session, bot_id, scope)
                hashes = [content_hash(bot_id, scope, draft.text) for _, draft in scope_drafts]
                barred = await repository.barred_hashes(session, hashes)
                existing = await repository.find_active_duplicate(session, bot_id, hashes)
                accepted: list[tuple[int, MemoryDraft]] = []
                first_of_hash: dict[str, int] = {}
                repeats: list[tuple[int, str]] = []
                for (index, draft), digest in zip(scope_drafts, hashes, strict=True):
                    if digest in barred:
                        result.refused.append((index, draft.text, "forgotten"))
                    elif digest in existing:
                        result.refused.append((index, draft.text, "duplicate"))
                        result.record_ids[index] = existing[digest]
                    elif digest in first_of_hash:
                        result.refused.append((index, draft.text, "duplicate"))
                        repeats.append((index, digest))
                    else:
                        first_of_hash[digest] = index
                        accepted.append((index, draft))
                if not accepted:
                    continue
                active = await repository.count_active(session, bot_id, scope)
                if active + len(accepted) > self.config.memories_max_per_scope:
                    raise LimitExceeded(
                        f"本会话记忆已达上限 {self.config.memories_max_per_scope} 条（现有 {active} 条），"
                        "请先删除不需要的记忆"
                    )
                rows = await repository.insert_memories(session, bot_id, [draft for _, draft in accepted], now)
                await session.commit()
                self.forget_emptiness()
                for (index, _), row in zip(accepted, rows, strict=True):
                    result.record_ids[index] = row.id
                    result.written.append(repository.to_record(row))
                for index, digest in repeats:
                    result.record_ids[index] = result.record_ids[first_of_hash[digest]]
        log_event("remember", started, written=len(result.written), refused=len(result.refused))
        return result

    async def supersede(self, bot_id: str, old_id: int, new_id: int, now: datetime | None = None) -> None:
        """Mark ``old_id`` as replaced by ``new_id`` (importers and the harness; same bot only)."""
        async with self.session() as session:
            rows = await repository.get_rows(session, bot_id, [old_id, new_id])
            if old_id not in rows or new_id not in rows:
                raise NotFound(f"没有找到编号为 {old_id if old_id not in rows else new_id} 的记忆")
            await repository.supersede(session, rows[old_id], rows[new_id], aware_or_now(now))
            await session.commit()

    async def write_memory(
        self,
        context: ChatContext,
        target: Literal["user", "group"],
        text: str,
        importance: Importance = Importance.MEDIUM,
        tags: Sequence[str] = (),
        now: datetime | None = None,
    ) -> MemoryRecord:
        """An explicit memory from a tool call. ``target`` picks the chat's scope for groups
        (``group``) or the speaker's personal facts (``user``), both resolved from the event."""
        scope = self._target_scope(context, target)
        draft = MemoryDraft(
            text=text,
            scope=scope,
            speaker_id=context.user_id,
            speaker_name=context.user_name,
            subject_id=context.user_id if target == "user" else "",
            subject_name=context.user_name if target == "user" else "",
            importance=importance,
            tags=[tag.strip() for tag in tags if tag.strip()],
            source={"via": "tool"},
        )
        self._check_text(text)
        result = await self.remember(context.bot_id, [draft], now=now)
        if result.written:
            return result.written[0]
        reason = result.refused[0][2] if result.refused else "unknown"
        messages = {
            "credential": admit(text).message,
            "do_not_remember": admit(text).message,
            "forgotten": "这条内容此前已被要求遗忘，不会再记录",
            "duplicate": "已有一条相同的记忆，无需重复记录",
        }
        raise InvalidInput(messages.get(reason, f"未能记录：{reason}"))

    def _target_scope(self, context: ChatContext, target: str) -> Scope:
        if target not in ("user", "group"):
            raise InvalidInput("scope 只能是 user 或 group")
        if target == "group" and not context.scope.is_group:
            raise InvalidInput("当前是私聊，没有群记忆；请使用 scope=user")
        # "user" facts learned in a group stay in that group (a private fact never reaches a group,
        # and a group fact is visible from the user's private chat through person matching).
        return context.scope

    async def _load_owned(self, session: AsyncSession, context: ChatContext, memory_id: int) -> MemoryRow:
        rows = await repository.get_rows(session, context.bot_id, [memory_id])
        row = rows.get(memory_id)
        visibility = visibility_for(context, "strict")
        if row is None or row.status != MemoryStatus.ACTIVE.value:
            raise NotFound(f"没有找到编号为 {memory_id} 的记忆")
        record = repository.to_record(row)
        if record.scope != context.scope and not (
            visibility.allows(record) and context.user_id in (record.speaker_id, record.subject_id)
        ):
            raise NotFound(f"没有找到编号为 {memory_id} 的记忆")
        return row

    def _check_may_edit(self, context: ChatContext, row: MemoryRow) -> None:
        if (
            context.scope.is_group
            and not context.can_moderate_group
            and context.user_id
            not in (
                row.speaker_id,
                row.subject_id,
            )
        ):
            raise PermissionDenied("只有群管理员、群主或这条记忆的本人可以修改或删除它")

    async def update_memory(
        self,
        context: ChatContext,
        memory_id: int,
        text: str,
        importance: Importance | None = None,
        tags: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> MemoryRecord:
        """Correct a fact: a new record supersedes the old one (history stays inspectable)."""
        new_text = self._check_text(text)
        verdict = admit(new_text)
        if not verdict.admit:
            raise InvalidInput(verdict.message)
        now = aware_or_now(now)
        async with self.session() as session:
            old = await self._load_owned(session, context, memory_id)
            self._check_may_edit(context, old)
            old_record = repository.to_record(old)
            draft = MemoryDraft(
                text=new_text,
                scope=old_record.scope,
                speaker_id=old.speaker_id,
                speaker_name=old.speaker_name,
                subject_id=old.subject_id,
                subject_name=old.subject_name,
                kind=old.kind,  # type: ignore[arg-type]
                tags=list(tags) if tags is not None else old_record.tags,
                importance=importance or old_record.importance,
                provenance=old.provenance,  # type: ignore[arg-type]
                source={**old_record.source, "supersedes": old.id, "edited_by": context.user_id},
                happened_at=old_record.happened_at,
            )
            if content_hash(context.bot_id, old_record.scope, new_text) in await repository.barred_hashes(
                session, [content_hash(context.bot_id, old_record.scope, new_text)]
            ):
                raise InvalidInput("这条内容此前已被要求遗忘，不会再记录")
            (new_row,) = await repository.insert_memories(session, context.bot_id, [draft], now)
            await repository.supersede(session, old, new_row, now)
            await session.commit()
            self.forget_emptiness()
            return repository.to_record(new_row)

    async def forget_memory(self, context: ChatContext, memory_id: int, now: datetime | None = None) -> MemoryRecord:
        async with self.session() as session:
            row = await self._load_owned(session, context, memory_id)
            self._check_may_edit(context, row)
            record = repository.to_record(row)
            await repository.forget(session, [row], reason=f"by:{context.user_id}", now=aware_or_now(now))
            await session.commit()
        log_event("forget", memory_id=memory_id, scope=record.scope.key)
        return record

    async def list_memories(
        self, context: ChatContext, target: Literal["user", "group"], offset: int = 0, limit: int = 10
    ) -> tuple[list[MemoryRecord], int]:
        """Newest first. ``user``: the speaker's own facts visible here; ``group``: the chat's."""
        if not 1 <= limit <= 50:
            raise InvalidInput("limit 必须在 1 到 50 之间")
        if offset < 0:
            raise InvalidInput("offset 不能为负数")
        scope = self._target_scope(context, target)
        async with self.session() as session:
            query = repository.visible_memories_query(
                context.bot_id, [scope], context.user_id if not scope.is_group else None
            )
            if target == "user":
                query = query.where(
                    (MemoryRow.speaker_id == context.user_id) | (MemoryRow.subject_id == context.user_id)
                )
            total = (await session.execute(select(func.count()).select_from(query.subquery()))).scalar_one()
            rows = (await session.execute(query.order_by(MemoryRow.id.desc()).offset(offset).limit(limit))).scalars()
            return [repository.to_record(row) for row in rows], int(total)

    # ------------------------------------------------------------------ recall

    def _keyword_filter(self, visibility: Visibility) -> keyword.KeywordFilter:
        scopes = [keyword.scope_token(visibility.bot_id, scope) for scope in visibility.scopes]
        if visibility.all_groups:
            scopes.append(keyword.all_groups_token(visibility.bot_id))
        people = []
        if visibility.person_in_groups:
            people.append(keyword.person_token(visibility.bot_id, visibility.person_in_groups))
        return keyword.KeywordFilter(tuple(scopes), tuple(people))

    @staticmethod
    def _further_targets(
        visibility: Visibility, extra_groups: Sequence[str], person_groups: Sequence[str]
    ) -> list[tuple[Scope, dict[str, object] | None]]:
        """Collections beyond the chat's own visible scopes, learnt from the keyword side: the
        other groups an ``open`` group searches, and the groups where a private chat's user has
        facts (with a filter on that person)."""
        targets: list[tuple[Scope, dict[str, object] | None]] = [
            (Scope("group", group), None) for group in extra_groups
        ]
        if visibility.person_in_groups:
            person = visibility.person_in_groups
            person_filter: dict[str, object] = {"$or": [{"speaker_id": person}, {"subject_id": person}]}
            targets.extend((Scope("group", group), person_filter) for group in person_groups)
        return targets

    def _vector_search(
        self,
        bot_id: str,
        targets: Sequence[tuple[Scope, dict[str, object] | None]],
        vectors: np.ndarray,
        limit: int,
    ) -> tuple[list[dict[int, float]], dict[int, np.ndarray]]:
        """Per query view: memory id -> cosine similarity over ``targets``; plus the stored
        vector of every hit (MMR uses them)."""
        results: list[dict[int, float]] = []
        stored: dict[int, np.ndarray] = {}
        for vector in vectors:
            found: dict[int, float] = {}
            for scope, where in targets:
                for hit in self.vectors.query(self._generation, bot_id, scope, vector, limit, where):
                    found[hit.memory_id] = max(found.get(hit.memory_id, -1.0), hit.similarity)
                    if hit.vector is not None:
                        stored[hit.memory_id] = hit.vector
            results.append(found)
        return results, stored

    async def _vector_side(
        self, visibility: Visibility, views: list[str], limit: int
    ) -> tuple[np.ndarray | None, list[dict[int, float]], dict[int, np.ndarray], str | None]:
        """Embed the views and search the chat's own collections (runs beside the keyword side).
        Returns the query vectors, the hits, the stored vectors and why it degraded (or None)."""
        try:
            vectors = await self.embedder.embed_queries(views)
        except EmbedderUnavailable as error:
            return _without_vectors(views, error)
        try:
            targets = [(scope, None) for scope in visibility.scopes]
            hits, stored = await self.vectors.off_loop(
                "query", partial(self._vector_search, visibility.bot_id, targets, vectors, limit)
            )
        except IndexUnavailable as error:
            return _without_vectors(views, error)
        return vectors, hits, stored, None

    def emptiness_probe(self, context: ChatContext) -> tuple[str, bool | None, Select[Any] | None]:
        """(cache key, whether the chat sees any fact if that is known for the next few seconds,
        else a query that finds out). Local writes forget the "sees none" answers."""
        visibility = visibility_for(context, self.config.scope_policy)
        key = self._empty_key(visibility)
        known = self._chat_sees_known(key)
        if known is not None:
            return key, known, None
        return (
            key,
            None,
            repository.visibility_probe(
                visibility.bot_id, visibility.scopes, visibility.person_in_groups, visibility.all_groups
            ),
        )

    def _chat_sees_known(self, key: str) -> bool | None:
        state = self._chat_visibility.get(key)
        if state is None or state[1] <= time.monotonic():
            return None
        return state[0]

    def remember_chat_sees(self, key: str, sees: bool) -> None:
        """Remember for ``EMPTY_CHAT_TTL_SECONDS`` whether a chat sees any fact. "Sees some" can
        only go stale by forgetting, which recall notices itself; "sees none" is dropped by any
        local write and otherwise expires."""
        self._chat_visibility[key] = (sees, time.monotonic() + EMPTY_CHAT_TTL_SECONDS)

    def _empty_key(self, visibility: Visibility) -> str:
        return f"{visibility.bot_id}|{visibility.current.key}|{visibility.person_in_groups}|{visibility.all_groups}"

    def forget_emptiness(self) -> None:
        """A local write may fill a chat (or the whole bank) that was known to be empty."""
        self._chat_visibility = {key: state for key, state in self._chat_visibility.items() if state[0]}
        self._bank_state.clear()
        self._write_epoch += 1

    def bank_known_empty(self, bot_id: str) -> bool:
        """True when this bot's bank held no fact, memo or pin at the last check, so the turn
        needs no database at all. The check runs in the background (first turn of a bot, then
        again once it is older than the per-chat caches' lifetime), never in the turn's path;
        local writes drop the answer at once, writes by another process are seen within
        ``EMPTY_CHAT_TTL_SECONDS`` plus one turn."""
        state = self._bank_state.get(bot_id)
        if state is None or time.monotonic() - state[1] > EMPTY_CHAT_TTL_SECONDS:
            self._probe_bank_soon(bot_id)
        return state is not None and state[0]

    async def settle(self) -> None:
        """Wait for the background bank checks (before shutdown: none may hold a connection)."""
        while self._bank_probes:
            await asyncio.gather(*list(self._bank_probes.values()), return_exceptions=True)

    def _probe_bank_soon(self, bot_id: str) -> None:
        running = self._bank_probes.get(bot_id)
        if running is not None and not running.done() and running.get_loop() is asyncio.get_running_loop():
            return
        self._bank_probes[bot_id] = asyncio.ensure_future(self._probe_bank(bot_id))

    async def _probe_bank(self, bot_id: str) -> None:
        epoch = self._write_epoch
        try:
            async with self.session() as session:
                holds = await repository.bank_holds_anything(session, bot_id)
        except Exception as error:  # a probe failing only keeps the slow, correct path
            self._bank_state.pop(bot_id, None)
            log_event("bank_probe", level=logging.WARNING, error=str(error)[:200])
        else:
            if epoch == self._write_epoch:
                self._bank_state[bot_id] = (not holds, time.monotonic())
        finally:
            if self._bank_probes.get(bot_id) is asyncio.current_task():
                del self._bank_probes[bot_id]

    async def recall(
        self,
        context: ChatContext,
        queries: Sequence[str],
        now: datetime | None = None,
        top_k: int | None = None,
        filters: RecallFilters | None = None,
        use_mmr: bool = True,
    ) -> RecallResult:
        """Hybrid recall for the current chat: candidates from both indices over the visible
        scopes, fused per query view and averaged, scored once (relevance, speaker mention,
        importance, recency, scope boost), diversified by MMR.

        The keyword side runs while the query is embedded. A chat with nothing visible is
        remembered as empty for a few seconds (local writes clear that), so an empty memory
        bank costs one small query per turn, not an embedding and a vector search."""
        started = time.perf_counter()
        now = aware_or_now(now)
        top_k = top_k or self.config.recall.top_k
        views = query_views(queries)
        visibility = visibility_for(context, self.config.scope_policy)
        empty_key = self._empty_key(visibility)
        if not views or self._chat_sees_known(empty_key) is False:
            return RecallResult([], "full", (time.perf_counter() - started) * 1000)
        weights = _weights(self.config)
        async with self.session() as session:  # one session for both reads of the turn
            found = await self._candidates(session, visibility, views, weights)
            if found is None:
                self.remember_chat_sees(empty_key, False)
                return RecallResult([], "full", (time.perf_counter() - started) * 1000)
            relevance, similarity, keyword_score, stored_vectors, mode = found
            hits = await self._score_candidates(
                session,
                visibility,
                relevance,
                similarity,
                keyword_score,
                now,
                weights,
                filters,
                "\n".join(views).casefold(),
                keep=mmr_pool_size(top_k),
            )
        hits = with_feedback(hits, stored_vectors, weights)
        if use_mmr and len(hits) > 1:
            hits = diversify(hits, stored_vectors, top_k, weights.mmr_lambda)
        hits = hits[:top_k]
        return RecallResult(hits, mode, (time.perf_counter() - started) * 1000)

    async def _candidates(
        self, session: AsyncSession, visibility: Visibility, views: list[str], weights: RankingWeights
    ) -> tuple[dict[int, float], dict[int, float], dict[int, float], dict[int, np.ndarray], str] | None:
        """Both indices' candidates fused per query view and averaged: (relevance, similarity,
        keyword score, stored vectors, mode); None when nothing at all is visible from here."""
        limit = self.config.recall.candidates
        # both sides at once: SQLite, the embedding model and Chroma each leave the event loop
        keyword_task = asyncio.ensure_future(self._keyword_side(session, visibility, views, limit))
        vector_task = asyncio.ensure_future(self._vector_side(visibility, views, limit))
        try:
            keyword_hits, person_groups, extra_groups, empty = await keyword_task
        except BaseException:
            vector_task.cancel()
            raise
        if empty:
            vector_task.cancel()
            return None
        query_vectors, vector_hits, stored_vectors, failure = await vector_task
        more_targets = (
            self._further_targets(visibility, extra_groups, person_groups) if query_vectors is not None else []
        )
        if more_targets and query_vectors is not None:
            try:
                more_hits, more_stored = await self.vectors.off_loop(
                    "query", partial(self._vector_search, visibility.bot_id, more_targets, query_vectors, limit)
                )
            except IndexUnavailable as error:  # the vector side as a whole failed
                query_vectors, vector_hits, stored_vectors, failure = _without_vectors(views, error)
            else:
                stored_vectors.update(more_stored)
                for found, more in zip(vector_hits, more_hits, strict=True):
                    for memory_id, value in more.items():
                        found[memory_id] = max(found.get(memory_id, -1.0), value)
        mode = "full"
        if failure is not None:
            mode = "keyword_only"
            log_event("recall", level=logging.WARNING, degraded=mode, error=failure[:200])
        relevance: dict[int, float] = {}
        similarity: dict[int, float] = {}
        keyword_score: dict[int, float] = {}
        for vec, kw in zip(vector_hits, keyword_hits, strict=True):
            for memory_id, value in score_fusion(vec, kw, weights).items():
                relevance[memory_id] = relevance.get(memory_id, 0.0) + value / len(views)
            for memory_id, value in vec.items():
                similarity[memory_id] = max(similarity.get(memory_id, -1.0), value)
            for memory_id, value in kw.items():
                keyword_score[memory_id] = max(keyword_score.get(memory_id, 0.0), value)
        return relevance, similarity, keyword_score, stored_vectors, mode

    async def _keyword_side(
        self, session: AsyncSession, visibility: Visibility, views: list[str], limit: int
    ) -> tuple[list[dict[int, float]], list[str], list[str], bool]:
        """Keyword hits per view, the groups a private chat's user appears in, the other groups
        an ``open`` group may search, and whether nothing at all is visible from here."""
        keyword_filter = self._keyword_filter(visibility)
        keyword_hits = [dict(await keyword.search(session, keyword_filter, query_terms(view), limit)) for view in views]
        if not any(keyword_hits) and not await repository.any_visible(
            session, visibility.bot_id, visibility.scopes, visibility.person_in_groups, visibility.all_groups
        ):
            return keyword_hits, [], [], True
        person_groups = (
            await repository.groups_with_person(session, visibility.bot_id, visibility.person_in_groups)
            if visibility.person_in_groups
            else []
        )
        extra_groups: list[str] = []
        if visibility.all_groups:
            rows = await repository.rows_by_ids(session, [memory_id for hits in keyword_hits for memory_id in hits])
            extra_groups = list(
                dict.fromkeys(
                    row.scope_id for row in rows if row.scope_kind == "group" and row.scope_id != visibility.current.id
                )
            )[:5]
        return keyword_hits, person_groups, extra_groups, False

    async def _score_candidates(
        self,
        session: AsyncSession,
        visibility: Visibility,
        relevance: dict[int, float],
        similarity: dict[int, float],
        keyword_score: dict[int, float],
        now: datetime,
        weights: RankingWeights,
        filters: RecallFilters | None,
        query_text: str,
        keep: int,
    ) -> list[RecallHit]:
        """The ``keep`` best candidates by the one score, each re-read from the authority store:
        inactive, barred and invisible ones are dropped whatever index produced them. Scoring
        reads the raw rows; only the kept ones become records (this runs on every turn)."""
        if not relevance:
            return []
        rows = await repository.recallable_rows(session, list(relevance))
        recall_settings = self.config.recall
        scored: list[tuple[float, int, Any, MemoryRecord | None]] = []
        for row in rows:
            scope = Scope(row.scope_kind, row.scope_id)
            if not visibility.allows_fact(row.bot_id, scope, row.speaker_id, row.subject_id):
                continue
            record = None
            if filters is not None:
                record = repository.to_record(row)
                if not filters.allows(record):
                    continue
            boost = 1.0
            if scope == visibility.current:
                boost = recall_settings.current_group_boost if scope.is_group else recall_settings.current_private_boost
            importance = Importance(row.importance)
            when = repository.as_utc(row.happened_at or row.recorded_at)
            recency = recency_factor(when, now, importance, similarity.get(row.id, 0.0), weights)  # type: ignore[arg-type]
            named = len(row.speaker_name) >= 2 and row.speaker_name.casefold() in query_text
            bonus = weights.speaker_boost if named else 0.0
            score = final_score(relevance[row.id] + bonus, importance, recency, boost)
            scored.append((score, row.id, row, record))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return [
            RecallHit(
                record=record or repository.to_record(row),
                score=score,
                similarity=similarity.get(memory_id, 0.0),
                keyword_score=keyword_score.get(memory_id, 0.0),
            )
            for score, memory_id, row, record in scored[:keep]
        ]

    # ------------------------------------------------------------------ outbox and index

    async def drain_outbox(self, max_batches: int | None = None) -> int:
        """Apply pending index work to Chroma. Returns how many entries were applied; stops at
        the first failure (the rows stay, with the error, for the next catch-up)."""
        applied = 0
        batches = 0
        async with self._outbox_lock:
            while max_batches is None or batches < max_batches:
                batches += 1
                async with self.session() as session:
                    pending = await repository.pending_outbox(session, OUTBOX_BATCH)
                    if not pending:
                        break
                    rows = {
                        row.id: row for row in await repository.rows_by_ids(session, [p.memory_id for p in pending])
                    }
                try:
                    await self._apply_outbox(pending, rows)
                except (EmbedderUnavailable, IndexUnavailable) as error:
                    async with self.session() as session:
                        await repository.fail_outbox(session, [entry.id for entry in pending], str(error))
                        await session.commit()
                    log_event("outbox", level=logging.WARNING, failed=len(pending), error=str(error)[:200])
                    break
                async with self.session() as session:
                    await repository.complete_outbox(session, [entry.id for entry in pending])
                    await session.commit()
                applied += len(pending)
        return applied

    async def _apply_outbox(self, pending: Sequence[OutboxRow], rows: dict[int, MemoryRow]) -> None:
        """Apply to the live generation; during a reindex, to the generation being built first
        (it must succeed) and to the live one as well, best effort (its model may be the old one)."""
        if self._building_generation is None:
            await self._apply_to_generation(pending, rows, self._generation)
            return
        await self._apply_to_generation(pending, rows, self._building_generation)
        try:
            await self._apply_to_generation(pending, rows, self._generation)
        except (EmbedderUnavailable, IndexUnavailable) as error:
            log_event("outbox", level=logging.WARNING, live_generation_skipped=str(error)[:200])

    async def _apply_to_generation(
        self, pending: Sequence[OutboxRow], rows: dict[int, MemoryRow], generation: int
    ) -> None:
        upserts: dict[tuple[str, Scope], list[MemoryRow]] = {}
        deletes: dict[tuple[str, Scope], list[int]] = {}
        for entry in pending:
            row = rows.get(entry.memory_id)
            key = (entry.bot_id, Scope(entry.scope_kind, entry.scope_id))  # type: ignore[arg-type]
            if row is not None and row.status == MemoryStatus.ACTIVE.value:
                upserts.setdefault(key, []).append(row)
            else:
                deletes.setdefault(key, []).append(entry.memory_id)
        await self._upsert_rows(upserts, generation)
        for (bot_id, scope), ids in deletes.items():
            await asyncio.to_thread(self.vectors.delete, generation, bot_id, scope, sorted(set(ids)))

    async def _embedding_texts(self, bot_id: str, scope: Scope, rows: list[MemoryRow]) -> list[str]:
        """What is embedded for each row: its text, or for a conversation turn its window."""
        turn_times = [row.happened_at for row in rows if row.kind == MemoryKind.TURN.value and row.happened_at]
        windows: dict[int, str] = {}
        if turn_times:
            async with self.session() as session:
                found = await repository.turn_windows(session, bot_id, scope, min(turn_times), max(turn_times))
            windows = {item.row.id: item.embedding_text for item in found}
        return [windows.get(row.id, row.text) for row in rows]

    async def _upsert_rows(self, groups: dict[tuple[str, Scope], list[MemoryRow]], generation: int) -> None:
        for (bot_id, scope), scope_rows in groups.items():
            unique = list({row.id: row for row in scope_rows}.values())
            vectors = await self.embedder.embed(await self._embedding_texts(bot_id, scope, unique))
            metadatas: list[dict[str, str | int | float | bool]] = [
                {
                    "speaker_id": row.speaker_id,
                    "subject_id": row.subject_id,
                    "importance": row.importance,
                }
                for row in unique
            ]
            await asyncio.to_thread(
                self.vectors.upsert, generation, bot_id, scope, [row.id for row in unique], vectors, metadatas
            )

    async def reindex(self, progress: Callable[[int, int], None] | None = None, page_size: int = 1000) -> ReindexReport:
        """Rebuild the vector index from SQL into a new generation, then switch to it.

        Reads are paged by id (new rows get higher ids, so the scan reaches them). While the
        rebuild runs, the outbox also applies every write, correction and forget to the new
        generation, and it is drained once more before the switch, so nothing is lost.
        """
        started = time.perf_counter()
        old_generation = self._generation
        new_generation = old_generation + 1
        vectors_before = await asyncio.to_thread(self.vectors.total_count, old_generation)
        self.vectors.drop_generations(keep=old_generation)  # leftovers of an interrupted rebuild
        async with self.session() as session:
            total = (
                await session.execute(
                    select(func.count()).select_from(MemoryRow).where(MemoryRow.status == MemoryStatus.ACTIVE.value)
                )
            ).scalar_one()
        done = 0
        last_id = 0
        self._building_generation = new_generation
        try:
            while True:
                async with self.session() as session:
                    page = list(
                        (
                            await session.execute(
                                select(MemoryRow)
                                .where(MemoryRow.id > last_id, MemoryRow.status == MemoryStatus.ACTIVE.value)
                                .order_by(MemoryRow.id)
                                .limit(page_size)
                            )
                        ).scalars()
                    )
                if not page:
                    break
                last_id = page[-1].id
                groups: dict[tuple[str, Scope], list[MemoryRow]] = {}
                for row in page:
                    groups.setdefault((row.bot_id, Scope(row.scope_kind, row.scope_id)), []).append(row)  # type: ignore[arg-type]
                await self._upsert_rows(groups, new_generation)
                done += len(page)
                if progress:
                    progress(done, int(total))
            reapplied = await self.drain_outbox()
            async with self._outbox_lock:
                async with self.session() as session:
                    await repository.set_meta(session, META_GENERATION, str(new_generation))
                    await repository.set_meta(
                        session, META_FINGERPRINT, json.dumps(self.embedder.fingerprint.as_dict())
                    )
                    await session.commit()
                self._generation = new_generation
        finally:
            self._building_generation = None
        await asyncio.to_thread(self.vectors.drop_generations, new_generation)
        async with self.session() as session:
            sql_active = (
                await session.execute(
                    select(func.count()).select_from(MemoryRow).where(MemoryRow.status == MemoryStatus.ACTIVE.value)
                )
            ).scalar_one()
        vectors_after = await asyncio.to_thread(self.vectors.total_count, new_generation)
        report = ReindexReport(
            generation_before=old_generation,
            generation_after=new_generation,
            sql_active=int(sql_active),
            vectors_before=vectors_before,
            vectors_after=vectors_after,
            reapplied=reapplied,
            seconds=time.perf_counter() - started,
        )
        log_event("reindex", started, generation=new_generation, rows=sql_active, vectors=vectors_after)
        return report

    async def status(self) -> dict[str, Any]:
        """Fingerprint, counts per kind and scope, outbox lag, index health."""
        async with self.session() as session:
            counts = (
                await session.execute(
                    select(MemoryRow.scope_kind, MemoryRow.status, func.count()).group_by(
                        MemoryRow.scope_kind, MemoryRow.status
                    )
                )
            ).all()
            scopes = (
                await session.execute(
                    select(MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id, func.count())
                    .where(MemoryRow.status == MemoryStatus.ACTIVE.value)
                    .group_by(MemoryRow.bot_id, MemoryRow.scope_kind, MemoryRow.scope_id)
                    .order_by(func.count().desc())
                    .limit(20)
                )
            ).all()
            lag, oldest = await repository.outbox_lag(session)
            stuck = (
                await session.execute(select(func.count()).select_from(OutboxRow).where(OutboxRow.attempts > 0))
            ).scalar_one()
            last_error = (
                await session.execute(
                    select(OutboxRow.last_error).where(OutboxRow.attempts > 0).order_by(OutboxRow.id.desc()).limit(1)
                )
            ).scalar_one_or_none()
        fingerprint = await self.stored_fingerprint()
        active_total = sum(count for kind, status, count in counts if status == MemoryStatus.ACTIVE.value)
        index: dict[str, Any] = {"backend": self.vectors.description, "generation": self._generation}
        try:
            await asyncio.to_thread(self.vectors.heartbeat)
            index["vectors"] = await asyncio.to_thread(self.vectors.total_count, self._generation)
            index["healthy"] = True
        except IndexUnavailable as error:
            index["healthy"] = False
            index["error"] = str(error)[:300]
        if index.get("healthy"):
            index["missing"] = max(0, active_total - int(index["vectors"]))
        by_kind: dict[str, dict[str, int]] = {}
        for kind, status, count in counts:
            by_kind.setdefault(kind, {})[status] = int(count)
        return {
            "fingerprint": fingerprint.as_dict() if fingerprint else None,
            "configured_embedder": self.embedder.fingerprint.as_dict(),
            "memories": by_kind,
            "active_total": active_total,
            "top_scopes": [
                {"bot": bot, "scope": f"{kind}:{scope_id}", "active": int(count)}
                for bot, kind, scope_id, count in scopes
            ],
            "outbox": {
                "pending": lag,
                "oldest": oldest.isoformat() if oldest else None,
                "failing": int(stuck),
                "last_error": last_error or None,
            },
            "index": index,
        }


def _without_vectors(
    views: list[str], error: Exception
) -> tuple[None, list[dict[int, float]], dict[int, np.ndarray], str]:
    """The vector side's result when it failed: no query vectors, no hits per view, and why."""
    return None, [{} for _ in views], {}, str(error)


def with_feedback(hits: list[RecallHit], stored: dict[int, np.ndarray], weights: RankingWeights) -> list[RecallHit]:
    """The candidates rescored by pseudo-relevance feedback (``feedback_factors``) and re-sorted."""
    if weights.feedback_weight <= 0 or len(hits) < 3:
        return hits
    factors = feedback_factors(
        [stored.get(hit.record.id) for hit in hits], weights.feedback_docs, weights.feedback_weight
    )
    for hit, factor in zip(hits, factors, strict=True):
        hit.score *= factor
    return sorted(hits, key=lambda hit: (-hit.score, -hit.record.id))


def mmr_pool_size(top_k: int) -> int:
    """How many of the best candidates MMR chooses from (recall reads no more than these)."""
    return max(top_k * 3, top_k + 5)


def diversify(hits: list[RecallHit], stored: dict[int, np.ndarray], top_k: int, lam: float) -> list[RecallHit]:
    """MMR over the best few candidates with their stored vectors. Facts without a vector yet
    (outbox lag, or the vector side is down) keep their place by score among the others."""
    pool = hits[: mmr_pool_size(top_k)]
    rest = hits[len(pool) :]
    with_vectors = [hit for hit in pool if hit.record.id in stored]
    if len(with_vectors) < 2:
        return hits
    matrix = np.vstack([stored[hit.record.id] for hit in with_vectors])
    order = mmr_select(matrix, np.array([hit.score for hit in with_vectors]), len(with_vectors), lam)
    without = sorted((hit for hit in pool if hit.record.id not in stored), key=lambda hit: -hit.score)
    result: list[RecallHit] = []
    for hit in (with_vectors[index] for index in order):
        while without and without[0].score > hit.score:
            result.append(without.pop(0))
        result.append(hit)
    return result + without + rest
