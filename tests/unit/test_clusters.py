"""Near-duplicate clusters from vectors (``domain/clusters.py``): the blocked pair search finds
exactly the close pairs, exact duplicates are marked, a fact without a stored vector is still
matched by its words, facts that differ in a part never join a cluster, and the pairs rejected only
for their wording are kept apart, capped, for the cycle's model."""

from __future__ import annotations

import numpy as np
import pytest

from amrita_plugin_cognition.domain import clusters as clusters_module
from amrita_plugin_cognition.domain.clusters import StoredFact, blocking, close_pairs, find_clusters


def _unit_rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, 32)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_blocked_search_finds_every_close_pair_and_no_other() -> None:
    vectors = _unit_rows(300, 1)
    vectors[150] = vectors[10] + 0.05 * vectors[11]  # planted close pairs, in different row blocks
    vectors[299] = vectors[3] + 0.05 * vectors[4]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    products = vectors @ vectors.T
    expected = {(i, j) for i in range(300) for j in range(i + 1, 300) if products[i, j] >= 0.3}
    firsts, seconds, similarities = close_pairs(vectors, 0.3, block=64)
    assert set(zip(firsts.tolist(), seconds.tolist(), strict=True)) == expected
    assert {(10, 150), (3, 299)} <= expected
    assert np.allclose(similarities, products[firsts, seconds])


def _facts(*texts: str) -> list[StoredFact]:
    return [StoredFact(100 + index, text, f"hash{index}") for index, text in enumerate(texts)]


def test_clusters_mark_exact_duplicates_and_join_rewordings_only() -> None:
    facts = _facts(
        "QQ号10001（昵称小明）于2026-11-29在成都吃了火锅。",  # 100
        "小明（QQ号10001）2026年11月29日在成都吃火锅。",  # 101: the same fact
        "QQ号10001（昵称小明）于2026-11-30在成都吃了火锅。",  # 102: another day
        "QQ号10001（昵称小明）于2026-11-29在重庆吃了火锅。",  # 103: another place
        "小红喜欢猫。",  # 104
        "小红喜欢猫！",  # 105: the same text, other punctuation
    )
    vectors = np.tile(_unit_rows(1, 2), (len(facts), 1))  # every vector alike: only the parts decide
    search = find_clusters(facts, blocking(facts), vectors, list(range(len(facts))))
    assert [cluster.member_ids for cluster in search.clusters] == [(100, 101), (104, 105)]
    near, exact = search.clusters
    assert not near.exact and exact.exact
    assert near.links[0].reason == "same_parts" and "when" in near.links[0].matched
    assert exact.links[0].reason == "exact"
    # the pairs across blocks (another day) were never candidates; the place was judged and refused
    assert search.checked >= 2 and search.candidates < len(facts) * (len(facts) - 1) // 2


def test_a_fact_without_a_stored_vector_is_matched_by_its_words() -> None:
    facts = _facts("小明在成都吃了火锅，觉得很开心。", "小明觉得很开心，在成都吃了火锅。", "小明在成都吃了烤肉。")
    search = find_clusters(facts, blocking(facts), None, [None, None, None])
    assert [cluster.member_ids for cluster in search.clusters] == [(100, 101)]
    assert search.clusters[0].links[0].similarity is None


def test_chains_become_one_cluster_and_far_vectors_none() -> None:
    facts = _facts("小明喜欢吃火锅。", "小明很喜欢吃火锅。", "小明非常喜欢吃火锅。", "小明喜欢吃火锅！！")
    vectors = np.tile(_unit_rows(1, 3), (len(facts), 1))
    search = find_clusters(facts, blocking(facts), vectors, [0, 1, 2, 3])
    assert [cluster.member_ids for cluster in search.clusters] == [(100, 101, 102, 103)]
    far = _unit_rows(4, 4) * np.array([[1.0], [-1.0], [1.0], [-1.0]], dtype=np.float32)
    far[2] = -far[0]
    apart = find_clusters(facts[:3], blocking(facts[:3]), far[:3], [0, 1, 2])
    assert apart.clusters == ()  # no vector pair is close, and the words differ


def _at_cosines(*cosines: float) -> np.ndarray:
    """Pairs of unit rows (2i, 2i + 1) with the given cosines, every other pair orthogonal."""
    rows = np.zeros((2 * len(cosines), 2 * len(cosines)), dtype=np.float32)
    for index, cosine in enumerate(cosines):
        rows[2 * index, 2 * index] = 1.0
        rows[2 * index + 1, 2 * index] = cosine
        rows[2 * index + 1, 2 * index + 1] = (1 - cosine**2) ** 0.5
    return rows


def test_pairs_rejected_only_for_their_wording_are_kept_apart_closest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    facts = _facts(
        "小明周末在咖啡店兼职。",  # 100
        "小明周末在咖啡店打工。",  # 101: only the words differ (兼职 / 打工), less close
        "小红喜欢画油画。",  # 102
        "小红喜欢画水彩。",  # 103: only the words differ (油 / 水彩)
        "小刚周一去游泳。",  # 104
        "小刚周二去游泳。",  # 105: another day: never offered
    )
    vectors = _at_cosines(0.8, 0.9, 0.95)
    search = find_clusters(facts, blocking(facts), vectors, list(range(len(facts))))
    assert search.clusters == ()
    assert [cluster.member_ids for cluster in search.wording] == [(102, 103), (100, 101)]  # the closest first
    link = search.wording[1].links[0]
    assert link.reason == "wording" and link.detail == "兼职 ≠ 打工" and not search.wording[1].exact
    monkeypatch.setattr(clusters_module, "WORDING_PAIRS", 1)
    capped = find_clusters(facts, blocking(facts), vectors, list(range(len(facts))))
    assert [cluster.member_ids for cluster in capped.wording] == [(102, 103)]  # the closest pair kept


def test_a_wording_pair_the_accepted_pairs_join_is_not_offered_again() -> None:
    facts = _facts("小明喜欢吃火锅。", "小明很喜欢吃火锅。", "小明喜欢吃烧烤。")
    vectors = np.tile(_unit_rows(1, 5), (len(facts), 1))
    search = find_clusters(facts, blocking(facts), vectors, [0, 1, 2])
    assert [cluster.member_ids for cluster in search.clusters] == [(100, 101)]
    assert [cluster.member_ids for cluster in search.wording] == [(100, 101, 102)]
    assert all(not {link.first_id, link.second_id} <= {100, 101} for link in search.wording[0].links)
