"""Hybrid recall: candidates from the keyword index and the vector index over what the chat may
see, fused per query view and averaged, then ranked once (``ranking.py``).

Both sides run at once. The vector side (query embedding + Chroma) has a deadline inside the
turn's budget (``hook_timeout_seconds × vector_budget_share``): when it misses it, the turn keeps
the keyword results, exactly as when the index is down.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.clock import aware_or_now
from ..domain.query import query_views
from ..domain.records import ChatContext, Scope, clean_text
from ..domain.scoring import RankingWeights, score_fusion
from ..domain.tokenize import query_terms
from ..domain.visibility import Visibility, visibility_for
from ..errors import TIMEOUTS, EmbedderUnavailable, IndexUnavailable
from ..index.vector import CollectionMissing, VectorHit
from ..logs import log_event
from ..store import keyword, repository
from .exact_search import person_filter
from .ranking import (
    RecallFilters,
    RecallResult,
    diversify,
    mmr_pool_size,
    ranking_weights,
    score_candidates,
    with_feedback,
)

#: What makes the vector side give up for this turn (the keyword side goes on).
_INDEX_FAILURES: tuple[type[BaseException], ...] = (IndexUnavailable, *TIMEOUTS)
_EMBEDDER_FAILURES: tuple[type[BaseException], ...] = (EmbedderUnavailable, *TIMEOUTS)

if TYPE_CHECKING:
    from .service import CognitionEngine

_Targets = Sequence[tuple[Scope, dict[str, object] | None]]
#: (query vectors, per view: memory id -> the cosine the ranking uses, the stored vectors, per
#: memory: the first model's cosine (what the calibrated gates read), why it degraded or None)
_VectorSide = tuple[np.ndarray | None, list[dict[int, float]], dict[int, np.ndarray], dict[int, float], str | None]


def keyword_filter(visibility: Visibility) -> keyword.KeywordFilter:
    scopes = [keyword.scope_token(visibility.bot_id, scope) for scope in visibility.scopes]
    if visibility.all_groups:
        scopes.append(keyword.all_groups_token(visibility.bot_id))
    people = []
    if visibility.person_in_groups:
        people.append(keyword.person_token(visibility.bot_id, visibility.person_in_groups))
    return keyword.KeywordFilter(tuple(scopes), tuple(people))


def further_targets(
    visibility: Visibility, extra_groups: Sequence[str], person_groups: Sequence[str]
) -> list[tuple[Scope, dict[str, object] | None]]:
    """Collections beyond the chat's own visible scopes, learnt from the keyword side: the other
    groups an ``open`` group searches, and the groups where a private chat's user has facts (with
    a filter on that person)."""
    targets: list[tuple[Scope, dict[str, object] | None]] = [(Scope("group", group), None) for group in extra_groups]
    if visibility.person_in_groups:
        person = person_filter(visibility.person_in_groups)
        targets.extend((Scope("group", group), person) for group in person_groups)
    return targets


def without_vectors(views: list[str], reason: str) -> _VectorSide:
    """The vector side's result when it failed: no query vectors, no hits per view, and why."""
    return None, [{} for _ in views], {}, {}, reason


def empty_key(visibility: Visibility) -> str:
    return f"{visibility.bot_id}|{visibility.current.key}|{visibility.person_in_groups}|{visibility.all_groups}"


def emptiness_probe(engine: CognitionEngine, context: ChatContext) -> tuple[str, bool | None, Select[Any] | None]:
    """(cache key, whether the chat sees any fact if that is known for the next few seconds, else
    a query that finds out). Local writes forget the "sees none" answers."""
    visibility = visibility_for(context, engine.config.scope_policy)
    key = empty_key(visibility)
    known = engine.caches.chat_sees_known(key)
    if known is not None:
        return key, known, None
    probe = repository.visible_memories_query(visibility)
    return key, None, probe


async def recall(
    engine: CognitionEngine,
    context: ChatContext,
    queries: Sequence[str],
    now: datetime | None = None,
    top_k: int | None = None,
    filters: RecallFilters | None = None,
    use_mmr: bool = True,
    vector_deadline: float | None = None,
) -> RecallResult:
    """Hybrid recall for the current chat. A chat with nothing visible is remembered as empty
    for a few seconds (local writes clear that), so an empty memory bank costs one small
    query per turn, not an embedding and a vector search."""
    started = time.perf_counter()
    now = aware_or_now(now)
    top_k = top_k or engine.config.recall.top_k
    views = query_views([clean_text(query) for query in queries])
    visibility = visibility_for(context, engine.config.scope_policy)
    key = empty_key(visibility)
    if not views or engine.caches.chat_sees_known(key) is False:
        return RecallResult([], "full", (time.perf_counter() - started) * 1000)
    if vector_deadline is None:
        vector_deadline = engine.config.hook_timeout_seconds * engine.config.vector_budget_share
    weights = ranking_weights(engine.config)
    async with engine.unit_of_work() as uow:  # one session for both reads of the turn
        found = await _candidates(engine, uow.session, visibility, views, weights, vector_deadline)
        if found is None:
            engine.caches.remember_chat_sees(key, False)
            return RecallResult([], "full", (time.perf_counter() - started) * 1000)
        relevance, similarity, keyword_score, stored_vectors, mode = found
        hits = await score_candidates(
            uow.session,
            engine.config.recall,
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
    return RecallResult(hits[:top_k], mode, (time.perf_counter() - started) * 1000)


async def _candidates(
    engine: CognitionEngine,
    session: AsyncSession,
    visibility: Visibility,
    views: list[str],
    weights: RankingWeights,
    vector_deadline: float,
) -> tuple[dict[int, float], dict[int, float], dict[int, float], dict[int, np.ndarray], str] | None:
    """Both indices' candidates fused per query view and averaged: (relevance, similarity,
    keyword score, stored vectors, mode); None when nothing at all is visible from here."""
    limit = engine.config.recall.candidates
    deadline = time.monotonic() + vector_deadline
    # both sides at once: SQLite, the embedding model and Chroma each leave the event loop
    keyword_task = asyncio.ensure_future(_keyword_side(session, visibility, views, limit))
    vector_task = asyncio.ensure_future(_vector_side(engine, visibility, views, limit, deadline))
    try:
        keyword_hits, person_groups, extra_groups, empty = await keyword_task
    except BaseException:
        vector_task.cancel()
        raise
    if empty:
        vector_task.cancel()
        return None
    query_vectors, vector_hits, stored_vectors, first_similarity, failure = await vector_task
    more = further_targets(visibility, extra_groups, person_groups) if query_vectors is not None else []
    if more and query_vectors is not None:
        try:
            more_hits, more_stored, more_first = await _search(
                engine, visibility.bot_id, more, query_vectors, limit, deadline
            )
        except _INDEX_FAILURES as error:  # the vector side as a whole failed
            query_vectors, vector_hits, stored_vectors, first_similarity, failure = without_vectors(views, _why(error))
        else:
            _merge((vector_hits, stored_vectors, first_similarity), (more_hits, more_stored, more_first))
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
        for memory_id in vec:
            similarity[memory_id] = first_similarity[memory_id]
        for memory_id, value in kw.items():
            keyword_score[memory_id] = max(keyword_score.get(memory_id, 0.0), value)
    return relevance, similarity, keyword_score, stored_vectors, mode


async def _keyword_side(
    session: AsyncSession, visibility: Visibility, views: list[str], limit: int
) -> tuple[list[dict[int, float]], list[str], list[str], bool]:
    """Keyword hits per view, the groups a private chat's user appears in, the other groups
    an ``open`` group may search, and whether nothing at all is visible from here."""
    kw_filter = keyword_filter(visibility)
    keyword_hits = [dict(await keyword.search(session, kw_filter, query_terms(view), limit)) for view in views]
    if not any(keyword_hits) and not await repository.any_visible(session, visibility):
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


async def _vector_side(
    engine: CognitionEngine, visibility: Visibility, views: list[str], limit: int, deadline: float
) -> _VectorSide:
    """Embed the views and search the chat's own collections, by ``deadline`` (monotonic).
    Returns the query vectors, the hits, the stored vectors and why it degraded (or None)."""
    try:
        vectors = await asyncio.wait_for(
            engine.embedder.embed_queries(views), timeout=max(0.0, deadline - time.monotonic())
        )
    except _EMBEDDER_FAILURES as error:
        return without_vectors(views, _why(error))
    try:
        targets = [(scope, None) for scope in visibility.scopes]
        hits, stored, first_similarity = await _search(engine, visibility.bot_id, targets, vectors, limit, deadline)
    except _INDEX_FAILURES as error:
        return without_vectors(views, _why(error))
    return vectors, hits, stored, first_similarity, None


async def _search(
    engine: CognitionEngine, bot_id: str, targets: _Targets, vectors: np.ndarray, limit: int, deadline: float
) -> tuple[list[dict[int, float]], dict[int, np.ndarray], dict[int, float]]:
    """Search ``targets`` in the active generation, by ``deadline``: small chats in their copy in
    SQL (``engine/exact_search.py``), the rest in the index."""
    generation = await engine.index_sync.current_generation()
    exact, targets = await asyncio.wait_for(
        engine.exact_search.search(generation, bot_id, targets, vectors, limit),
        timeout=max(0.0, deadline - time.monotonic()),
    )
    results: list[dict[int, float]] = [{} for _ in vectors]
    stored: dict[int, np.ndarray] = {}
    first_similarity: dict[int, float] = {}
    for found, hits in zip(results, exact, strict=True):
        _add_hits(found, stored, first_similarity, hits)
    if not targets:
        return results, stored, first_similarity
    indexed = await _index_search(engine, generation, bot_id, targets, vectors, limit, deadline)
    _merge((results, stored, first_similarity), indexed)
    return results, stored, first_similarity


_Hits = tuple[list[dict[int, float]], dict[int, np.ndarray], dict[int, float]]


def _merge(into: _Hits, more: _Hits) -> None:
    """Fold another search's hits into ``into``: per view and memory the best cosine."""
    results, stored, first_similarity = into
    more_results, more_stored, more_first = more
    stored.update(more_stored)
    for memory_id, value in more_first.items():
        first_similarity[memory_id] = max(first_similarity.get(memory_id, -1.0), value)
    for found, extra in zip(results, more_results, strict=True):
        for memory_id, value in extra.items():
            found[memory_id] = max(found.get(memory_id, -1.0), value)


async def _index_search(
    engine: CognitionEngine,
    generation: int,
    bot_id: str,
    targets: _Targets,
    vectors: np.ndarray,
    limit: int,
    deadline: float,
) -> tuple[list[dict[int, float]], dict[int, np.ndarray], dict[int, float]]:
    """Search ``targets`` in the index, by ``deadline``. When the index fails or a chat's
    collection is missing, the generation is re-read: if another process switched it meanwhile
    (a reindex), the search runs once more in the new one."""
    index = engine.index_sync
    for attempt in range(2):
        try:
            hits, stored, first_similarity, missing = await asyncio.wait_for(
                engine.vectors.off_loop(
                    "query", partial(_vector_search, engine, generation, bot_id, targets, vectors, limit)
                ),
                timeout=max(0.0, deadline - time.monotonic()),
            )
        except IndexUnavailable:
            if attempt or await index.current_generation(force=True) == generation:
                raise
        else:
            if not missing or attempt or await index.current_generation(force=True) == generation:
                return hits, stored, first_similarity
        generation = index.generation
    raise AssertionError("unreachable")


def _add_hits(
    found: dict[int, float],
    stored: dict[int, np.ndarray],
    first_similarity: dict[int, float],
    hits: Sequence[VectorHit],
) -> None:
    """Fold one target's hits into a view's: the best cosine per memory, its stored vector."""
    for hit in hits:
        found[hit.memory_id] = max(found.get(hit.memory_id, -1.0), hit.ranking_similarity)
        first_similarity[hit.memory_id] = max(first_similarity.get(hit.memory_id, -1.0), hit.similarity)
        if hit.vector is not None:
            stored[hit.memory_id] = hit.vector


def _vector_search(
    engine: CognitionEngine, generation: int, bot_id: str, targets: _Targets, vectors: np.ndarray, limit: int
) -> tuple[list[dict[int, float]], dict[int, np.ndarray], dict[int, float], bool]:
    """Per query view: memory id -> the cosine the ranking uses over ``targets`` (with two
    models, their weighted cosines); the stored vector of every hit (MMR uses them); per hit
    its best cosine of the first model alone (the calibrated gates read it); and whether a
    target's collection was missing. Blocking: runs on the index's thread."""
    results: list[dict[int, float]] = []
    stored: dict[int, np.ndarray] = {}
    first_similarity: dict[int, float] = {}
    missing = False
    for vector in vectors:
        found: dict[int, float] = {}
        for scope, where in targets:
            try:
                hits = engine.vectors.query(generation, bot_id, scope, vector, limit, where, missing_ok=False)
            except CollectionMissing:
                missing = True
                continue
            _add_hits(found, stored, first_similarity, hits)
        results.append(found)
    return results, stored, first_similarity, missing


def _why(error: BaseException) -> str:
    if isinstance(error, TIMEOUTS):
        return "vector side missed its deadline"
    return str(error)
