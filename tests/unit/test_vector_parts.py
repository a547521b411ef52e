"""Two models' vectors in one row (domain/vector_parts.py): what the index's cosine means."""

from __future__ import annotations

import numpy as np
import pytest

from amrita_plugin_cognition.domain.vector_parts import VectorLayout
from amrita_plugin_cognition.index.vector import VectorHit

RNG = np.random.default_rng(7)


def _unit(rows: int, width: int) -> np.ndarray:
    matrix = RNG.normal(size=(rows, width)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_stored_rows_are_unit_length_and_their_cosine_is_the_mean_of_the_models() -> None:
    layout = VectorLayout((6, 4), (0.5, 0.5))
    first, second = _unit(3, 6), _unit(3, 4)
    rows = layout.join_documents([first * 3.0, second])  # a part not yet normalised is normalised
    assert rows.shape == (3, 10)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
    mean = (first[0] @ first[1] + second[0] @ second[1]) / 2
    assert rows[0] @ rows[1] == pytest.approx(mean, abs=1e-6)


@pytest.mark.parametrize("second_weight", [0.0, 0.3, 0.7, 1.0])
def test_a_query_ranks_stored_rows_by_the_weighted_sum_of_the_models_cosines(second_weight: float) -> None:
    layout = VectorLayout((6, 4), (1.0 - second_weight, second_weight))
    first, second = _unit(40, 6), _unit(40, 4)
    stored = layout.join_documents([first, second])
    query_first, query_second = _unit(1, 6), _unit(1, 4)
    query = layout.join_queries([query_first, query_second])[0]
    index_cosine = stored @ query / np.linalg.norm(query)
    weighted = (1.0 - second_weight) * (first @ query_first[0]) + second_weight * (second @ query_second[0])
    assert list(np.argsort(-index_cosine)) == list(np.argsort(-weighted))
    cosines = layout.cosines(query, stored)
    # a part weighted 0 is not in the query: its cosine reads 0
    assert np.allclose(cosines[:, 0], first @ query_first[0] if second_weight < 1 else 0.0, atol=1e-5)
    assert np.allclose(cosines[:, 1], second @ query_second[0] if second_weight > 0 else 0.0, atol=1e-5)
    assert np.allclose(layout.fused(cosines), weighted, atol=1e-5)


def test_the_first_part_reads_back_the_first_models_rows() -> None:
    layout = VectorLayout((6, 4), (0.5, 0.5))
    first = _unit(5, 6)
    rows = layout.join_documents([first, _unit(5, 4)])
    assert np.allclose(layout.first_part(rows), first, atol=1e-6)
    assert layout.dimension == 10


def test_a_layout_refuses_what_does_not_fit() -> None:
    with pytest.raises(ValueError):
        VectorLayout((6,), (1.0,))
    with pytest.raises(ValueError):
        VectorLayout((6, 4), (0.0, 0.0))
    with pytest.raises(ValueError):
        VectorLayout((6, 4), (0.5, -0.1))
    layout = VectorLayout((6, 4), (0.5, 0.5))
    with pytest.raises(ValueError):
        layout.join_documents([_unit(2, 6), _unit(2, 5)])
    with pytest.raises(ValueError):
        layout.join_documents([_unit(2, 6), _unit(3, 4)])


def test_a_hit_of_one_model_ranks_by_its_own_cosine() -> None:
    assert VectorHit(1, 0.42).ranking_similarity == 0.42
    assert VectorHit(1, 0.42, None, 0.61).ranking_similarity == 0.61
