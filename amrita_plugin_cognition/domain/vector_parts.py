"""Vectors of two embedding models kept as one: the layout, the joining, and the reading back.

With the optional second local model (the ``e5`` extra), a stored vector is the two models'
L2-normalised rows side by side, each scaled by 1/sqrt(2), so the whole row is unit length and
the index's cosine between two stored rows is the mean of the two models' cosines. A query row
is the two parts weighted (``weights``): its cosine with a stored row ranks exactly as the
weighted sum of the two models' cosines, so one collection and one query search both models,
and the weight is a query-time setting (no reindex when it changes).

Everything calibrated on the first model (the relevance floors, the recency gate, the
near-duplicate thresholds) keeps reading the first model's part alone: ``split_hit`` gives the
first part's cosine and vector beside the fused cosine the ranking uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows of ``matrix`` (or the one vector) as float32 of length 1 (a zero row stays zero)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


@dataclass(frozen=True, slots=True)
class VectorLayout:
    """Which columns of a stored row belong to which model, and each model's query weight."""

    parts: tuple[int, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.parts) < 2 or len(self.parts) != len(self.weights):
            raise ValueError("a layout joins at least two models, with one weight each")
        if any(size <= 0 for size in self.parts) or any(weight < 0 for weight in self.weights):
            raise ValueError("part sizes must be positive and weights not negative")
        if sum(self.weights) <= 0:
            raise ValueError("at least one weight must be positive")

    @property
    def dimension(self) -> int:
        return sum(self.parts)

    def _bounds(self) -> list[tuple[int, int]]:
        bounds, start = [], 0
        for size in self.parts:
            bounds.append((start, start + size))
            start += size
        return bounds

    def join_documents(self, blocks: Sequence[np.ndarray]) -> np.ndarray:
        """Stored rows: each model's rows normalised, side by side, scaled to unit length."""
        scale = 1.0 / np.sqrt(len(self.parts))
        return np.hstack([unit_rows(block) * scale for block in self._checked(blocks)]).astype(np.float32)

    def join_queries(self, blocks: Sequence[np.ndarray]) -> np.ndarray:
        """Query rows: each model's rows normalised and weighted, the whole row made unit length.
        Its cosine with a stored row is proportional to the weighted sum of the models' cosines."""
        total = sum(self.weights)
        weighted = [
            unit_rows(block) * (weight / total)
            for block, weight in zip(self._checked(blocks), self.weights, strict=True)
        ]
        return unit_rows(np.hstack(weighted))

    def _checked(self, blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
        rows = [unit_rows(block) for block in blocks]
        if len(rows) != len(self.parts):
            raise ValueError(f"{len(rows)} blocks for a layout of {len(self.parts)} parts")
        for block, size in zip(rows, self.parts, strict=True):
            if block.shape[1] != size:
                raise ValueError(f"a block of width {block.shape[1]} for a part of width {size}")
        if len({len(block) for block in rows}) != 1:
            raise ValueError("blocks of different lengths")
        return rows

    def first_part(self, rows: np.ndarray) -> np.ndarray:
        """The first model's part of joined rows, normalised (what its calibrations expect)."""
        start, end = self._bounds()[0]
        return unit_rows(np.asarray(rows, dtype=np.float32)[..., start:end])

    def cosines(self, query: np.ndarray, stored: np.ndarray) -> np.ndarray:
        """Per stored row, each model's cosine with the query: shape (rows, parts). A part the
        query weighs 0 is zero in the query row, and its cosine reads 0."""
        query_row = np.asarray(query, dtype=np.float32).reshape(-1)
        stored_rows = np.asarray(stored, dtype=np.float32)
        if stored_rows.ndim == 1:
            stored_rows = stored_rows[None, :]
        columns = []
        for start, end in self._bounds():
            query_part = unit_rows(query_row[start:end])[0]
            columns.append(unit_rows(stored_rows[:, start:end]) @ query_part)
        return np.stack(columns, axis=1)

    def fused(self, cosines: np.ndarray) -> np.ndarray:
        """The ranking's cosine: the models' cosines weighted (weights summing to one)."""
        weights = np.asarray(self.weights, dtype=np.float32) / sum(self.weights)
        return np.asarray(cosines, dtype=np.float32) @ weights


def first_model_part(layout: VectorLayout | None, rows: np.ndarray) -> np.ndarray:
    """The first model's part of stored ``rows`` when they are joined rows of ``layout``; rows of
    one model (no second model, or vectors stored before it was added) as they are."""
    if len(rows) and layout is not None and rows.shape[1] == layout.dimension:
        return layout.first_part(rows)
    return rows
