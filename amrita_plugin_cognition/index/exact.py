"""Exact nearest vectors over a small matrix: what a chat's copy in SQL is searched with.

A chat of a few hundred facts is one matrix product (well under a millisecond), cheaper than any
index round trip, and exact where HNSW is approximate. The hits are the index's own
(``VectorHit``): the cosine of the first model, its normalised part, and with two models their
weighted cosine, which the ranking uses."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..domain.vector_parts import VectorLayout, unit_rows
from .vector import VectorHit


def nearest(
    layout: VectorLayout | None, query: np.ndarray, ids: Sequence[int], matrix: np.ndarray, limit: int
) -> list[VectorHit]:
    """The ``limit`` rows of ``matrix`` nearest ``query`` by cosine, best first."""
    if not len(ids) or limit <= 0:
        return []
    fused = layout is not None and matrix.shape[1] == layout.dimension
    if layout is not None and fused:
        cosines = layout.cosines(query, matrix)
        ranking = layout.fused(cosines)
        first = layout.first_part(matrix)
        similarity = cosines[:, 0]
    else:
        first = unit_rows(matrix)
        ranking = similarity = first @ unit_rows(np.asarray(query, dtype=np.float32).reshape(1, -1))[0]
    best = _top(ranking, limit)
    return [
        VectorHit(int(ids[row]), float(similarity[row]), first[row], float(ranking[row]) if fused else None)
        for row in best
    ]


def _top(scores: np.ndarray, limit: int) -> np.ndarray:
    chosen = np.argpartition(-scores, limit - 1)[:limit] if limit < len(scores) else np.arange(len(scores))
    return chosen[np.argsort(-scores[chosen], kind="stable")]
