"""Ranking: fusion of the two retrievers, the one score, and the MMR kernel. Pure, no I/O."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

import numpy as np

from .records import Importance

#: Half-life of the recency decay, by importance: important facts fade slower.
HALF_LIFE_DAYS: Mapping[Importance, float] = {
    Importance.LOW: 30.0,
    Importance.MEDIUM: 180.0,
    Importance.HIGH: 720.0,
}

IMPORTANCE_WEIGHT: Mapping[Importance, float] = {
    Importance.LOW: 0.9,
    Importance.MEDIUM: 1.0,
    Importance.HIGH: 1.15,
}


@dataclass(frozen=True, slots=True)
class RankingWeights:
    """Every knob of the ranking, with the defaults measured on the public sets (docs/architecture.md)."""

    #: "score": weighted sum of min-max normalised scores; "rrf": weighted reciprocal-rank fusion.
    fusion: str = "score"
    #: How cosine similarities are scaled before fusion: "minmax" over the candidates, or
    #: "ratio" to the best candidate (keeps small gaps small).
    dense_normalisation: str = "minmax"
    vector_weight: float = 0.6
    keyword_weight: float = 0.4
    rrf_k: float = 60.0
    #: Added to the relevance of facts said by a person the query names.
    speaker_boost: float = 0.3
    #: Lower bound of the recency factor: an old fact keeps at least this share of its score.
    recency_floor: float = 0.85
    #: Recency only lifts candidates at least this similar to the query (cosine).
    recency_min_similarity: float = 0.3
    mmr_lambda: float = 0.7
    #: Pseudo-relevance feedback (``feedback_factors``): a candidate close to the centroid of the
    #: ``feedback_docs`` best keeps up to 1 + this weight times more score than one far from it (0 = off).
    feedback_weight: float = 2.0
    feedback_docs: int = 3


def weighted_rrf(rankings: Sequence[tuple[Sequence[int], float]], rrf_k: float) -> dict[int, float]:
    """Weighted reciprocal-rank fusion of several ranked id lists: sum of weight / (k + rank)."""
    fused: dict[int, float] = {}
    for ranked_ids, weight in rankings:
        if weight <= 0:
            continue
        for rank, memory_id in enumerate(ranked_ids, start=1):
            fused[memory_id] = fused.get(memory_id, 0.0) + weight / (rrf_k + rank)
    return fused


def normalised_scores(scores: Mapping[int, float]) -> dict[int, float]:
    """Min-max normalisation into [0, 1]; a single candidate scores 1."""
    if not scores:
        return {}
    low = min(scores.values())
    high = max(scores.values())
    span = high - low
    if span <= 1e-12:
        return {key: 1.0 for key in scores}
    return {key: (value - low) / span for key, value in scores.items()}


def score_fusion(
    vector_scores: Mapping[int, float],
    keyword_scores: Mapping[int, float],
    weights: RankingWeights,
) -> dict[int, float]:
    """Relevance in [0, 1] of each candidate from both retrievers.

    ``score`` (default): weighted sum of the min-max normalised cosine similarities and the
    BM25 scores divided by their maximum (a document without a match scores 0). ``rrf``:
    weighted reciprocal-rank fusion, scaled so that first place on both sides is 1. Score
    fusion keeps how far ahead the best hit is, which rank fusion throws away; on the public
    sets it measured higher (docs/architecture.md).
    """
    total_weight = weights.vector_weight + weights.keyword_weight
    if total_weight <= 0:
        return {}
    if weights.fusion == "rrf":
        rankings = [
            (sorted(vector_scores, key=lambda key: -vector_scores[key]), weights.vector_weight),
            (sorted(keyword_scores, key=lambda key: -keyword_scores[key]), weights.keyword_weight),
        ]
        best = total_weight / (weights.rrf_k + 1)
        return {key: value / best for key, value in weighted_rrf(rankings, weights.rrf_k).items()}
    if weights.vector_weight <= 0:
        vector_norm: dict[int, float] = {}
    elif weights.dense_normalisation == "ratio":
        best = max(vector_scores.values(), default=0.0)
        vector_norm = {key: max(0.0, value) / best for key, value in vector_scores.items()} if best > 0 else {}
    else:
        vector_norm = normalised_scores(vector_scores)
    keyword_max = max(keyword_scores.values(), default=0.0)
    fused: dict[int, float] = {}
    for memory_id in set(vector_norm) | set(keyword_scores if weights.keyword_weight > 0 else ()):
        keyword_part = keyword_scores.get(memory_id, 0.0) / keyword_max if keyword_max > 0 else 0.0
        fused[memory_id] = (
            weights.vector_weight * vector_norm.get(memory_id, 0.0) + weights.keyword_weight * keyword_part
        ) / total_weight
    return fused


def recency_factor(
    happened_at: datetime,
    now: datetime,
    importance: Importance,
    similarity: float,
    weights: RankingWeights,
) -> float:
    """Bounded recency: in [recency_floor, 1], and only similar-enough candidates get lifted."""
    if similarity < weights.recency_min_similarity:
        return weights.recency_floor
    age_days = max(0.0, (now - happened_at).total_seconds() / 86400.0)
    decay = math.pow(0.5, age_days / HALF_LIFE_DAYS[importance])
    return weights.recency_floor + (1.0 - weights.recency_floor) * decay


def final_score(
    relevance: float,
    importance: Importance,
    recency: float,
    scope_boost: float,
) -> float:
    """The one score: relevance x importance x recency x scope boost."""
    return relevance * IMPORTANCE_WEIGHT[importance] * recency * scope_boost


def feedback_factors(ranked_vectors: Sequence[np.ndarray | None], docs: int, weight: float) -> list[float]:
    """Pseudo-relevance feedback, one score multiplier per candidate (candidates in score order,
    each with its stored vector or None).

    The best ``docs`` candidates that have a vector stand for what the query is about; a
    candidate close to their centroid keeps up to ``1 + weight`` times more of its score than one
    far from it (factors are divided by the largest, so the scale MMR weighs against cosines
    stays: a lift above 1 would quietly turn diversification down). Facts that belong
    together (the turns a multi-part question needs, memories of one episode) are close to each
    other even when only one of them is close to the query's words. A candidate without a vector
    yet gets the mean lift of the others, so it neither gains nor loses by the lag."""
    if weight <= 0 or docs <= 0:
        return [1.0] * len(ranked_vectors)
    known = [(index, vector) for index, vector in enumerate(ranked_vectors) if vector is not None]
    if len(known) < 2:
        return [1.0] * len(ranked_vectors)
    raw = np.vstack([vector for _, vector in known]).astype(np.float32)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    matrix = raw / np.where(norms > 0, norms, 1.0)
    centroid = matrix[:docs].mean(axis=0)
    length = float(np.linalg.norm(centroid))
    if length <= 0:
        return [1.0] * len(ranked_vectors)
    closeness = np.clip(matrix @ (centroid / length), 0.0, 1.0)
    top = 1.0 + weight * float(closeness.max())
    fill = (1.0 + weight * float(closeness.mean())) / top
    factors = [fill] * len(ranked_vectors)
    for (index, _), value in zip(known, closeness, strict=True):
        factors[index] = (1.0 + weight * float(value)) / top
    return factors


@cache
def _mmr_kernel() -> Any:
    """The compiled MMR kernel. numba is imported and the kernel compiled (or loaded from its
    on-disk cache) on the first MMR call: a command that ranks nothing does not pay for numba."""
    import numba

    return numba.njit(cache=True, fastmath=True, nogil=True)(_mmr_kernel_source)


def _mmr_kernel_source(
    embeddings: np.ndarray, scores: np.ndarray, order: np.ndarray, top_k: int, lam: float
) -> np.ndarray:  # pragma: no cover - compiled
    """Exact greedy MMR with lazy penalty updates.

    MMR(i) = lam * score_i - (1 - lam) * max(0, max_{s in selected} cos(i, s)).
    Since the penalty only grows as items are selected, lam * score_i bounds MMR(i) from above;
    scanning candidates by descending score we stop as soon as that bound cannot beat the best
    value found, and each candidate is compared only against selections it has not seen yet.
    """
    count = order.shape[0]
    dim = embeddings.shape[1]
    limit = min(top_k, count)
    selected = np.empty(limit, dtype=np.int64)
    taken = np.zeros(count, dtype=np.bool_)
    penalty = np.zeros(count, dtype=np.float32)
    compared = np.zeros(count, dtype=np.int64)
    for step in range(limit):
        best_value = -np.inf
        best_index = -1
        for position in range(count):
            index = order[position]
            if taken[index]:
                continue
            bound = lam * scores[index]
            if bound <= best_value:
                break
            for sel in range(compared[index], step):
                other = selected[sel]
                dot = np.float32(0.0)
                for j in range(dim):
                    dot += embeddings[index, j] * embeddings[other, j]
                if dot > penalty[index]:
                    penalty[index] = dot
            compared[index] = step
            value = bound - (1.0 - lam) * penalty[index]
            if value > best_value:
                best_value = value
                best_index = index
        selected[step] = best_index
        taken[best_index] = True
    return selected


def mmr_select(embeddings: np.ndarray, scores: np.ndarray, top_k: int, lam: float) -> list[int]:
    """Indices of ``top_k`` candidates chosen by MMR over L2-normalised ``embeddings``."""
    count = len(scores)
    if count == 0 or top_k <= 0:
        return []
    matrix = np.ascontiguousarray(embeddings, dtype=np.float32)
    score_array = np.ascontiguousarray(scores, dtype=np.float64)
    order = np.argsort(-score_array, kind="stable").astype(np.int64)
    return [int(index) for index in _mmr_kernel()(matrix, score_array, order, int(top_k), float(lam))]


def mmr_select_numpy(embeddings: np.ndarray, scores: np.ndarray, top_k: int, lam: float) -> list[int]:
    """The plain numpy MMR (full similarity row per step): the reference the kernel is checked against."""
    count = len(scores)
    matrix = np.asarray(embeddings, dtype=np.float32)
    score_array = np.asarray(scores, dtype=np.float64)
    penalty = np.zeros(count, dtype=np.float64)
    taken = np.zeros(count, dtype=bool)
    selected: list[int] = []
    for _ in range(min(top_k, count)):
        values = lam * score_array - (1.0 - lam) * penalty
        values[taken] = -np.inf
        best = int(np.argmax(values))
        selected.append(best)
        taken[best] = True
        penalty = np.maximum(penalty, np.clip(matrix @ matrix[best], 0.0, None))
    return selected
