"""Ranking: one score over the fused candidates, pseudo-relevance feedback, MMR.

The score is ``(relevance + speaker boost) × importance × recency × scope boost``
(``domain/scoring.py``); every candidate is re-read from the authority store first, so inactive,
barred and invisible ones are dropped whatever index produced them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from ..config import CognitionConfig, RecallSettings
from ..domain.clock import as_utc
from ..domain.records import Importance, MemoryRecord, Scope
from ..domain.scoring import RankingWeights, feedback_factors, final_score, mmr_select, recency_factor
from ..domain.visibility import Visibility
from ..store import repository


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


def ranking_weights(config: CognitionConfig) -> RankingWeights:
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


async def score_candidates(
    session: AsyncSession,
    settings: RecallSettings,
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
            boost = settings.current_group_boost if scope.is_group else settings.current_private_boost
        importance = Importance(row.importance)
        when = as_utc(row.happened_at or row.recorded_at)
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
