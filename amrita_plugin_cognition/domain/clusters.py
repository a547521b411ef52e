"""Near-duplicate clusters of one chat's facts, from their stored vectors and their keyword
tokens. Pure (numpy), no I/O: the engine reads the facts and vectors (``engine/duplicates.py``).

Blocking by the parts that must agree (``duplicates.hard_key``: who, when, whether, plan), then
three sources of candidate pairs, then one decision:

* exact: the same content hash, or the same text once width, case, spaces and punctuation are
  folded (``exact_key``): joined outright, no judgement needed;
* vectors: every pair of one block whose stored vectors have cosine ≥ ``VECTOR_THRESHOLD``, found
  by matrix products over the upper triangle (``close_pairs``: ``BLOCK_ROWS`` rows against the
  rest at a time, so memory stays bounded and nothing is a Python loop over pairs);
* keyword: facts with the same bag of characters (the sorted ``exact_key``: the keyword index's
  unigrams, CJK characters one by one), i.e. the same words reordered, found by grouping, so a
  fact whose vector is not written yet (outbox pending) is still compared;

each candidate pair is judged by ``duplicates.judge_read`` (the facts' parts compared, then the
wording of a pair whose parts agree by the learned check when one fits the vectors), and the
accepted pairs are joined into clusters (union-find). Each fact is read into parts once.

The pairs rejected only for their wording (``duplicates.doubted_by_wording``: every part agrees,
the leftover words differ, 歌手 / 乐队) whose facts the accepted pairs did not join are kept too,
the closest ``WORDING_PAIRS`` of them, and joined into clusters of their own (``wording``): the
cycle offers them to its model as "可能相同，措辞不同", nothing merges them without judgement.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .duplicates import EXACT, DuplicateVerdict, doubted_by_wording, hard_key, judge_read
from .fact_parts import FactParts, read_parts
from .pair_model import PairModel

#: Cosine at or above which two stored vectors are a candidate pair. Every duplicate the parts
#: accept on the hand-written sets has cosine ≥ 0.73 (tests/data/train/dedup_zh_*.jsonl).
VECTOR_THRESHOLD = 0.70
#: The pairs rejected only for their wording offered to the model at most (the closest first), so a
#: large chat cannot blow the cycle's token budget.
WORDING_PAIRS = 50
#: Rows multiplied against the rest at a time (a 1024 x 10,000 float32 block is 40 MB).
BLOCK_ROWS = 1024

_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class StoredFact:
    """One active fact of the chat, as the authority store holds it."""

    id: int
    text: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class DuplicateLink:
    """Two facts judged the same fact: ``reason`` is ``exact`` or ``same_parts`` (``wording`` in a
    cluster of pairs doubted only for their wording, ``detail`` then the words that differ),
    ``matched`` the parts both state alike, ``similarity`` their stored vectors' cosine (None when
    either has no stored vector yet)."""

    first_id: int
    second_id: int
    similarity: float | None
    reason: str
    matched: tuple[str, ...]
    detail: str = ""


@dataclass(frozen=True, slots=True)
class DuplicateCluster:
    """Facts of one chat that state the same fact, oldest id first. ``exact``: every member has
    the same text (merge outright); otherwise near duplicates, with the links that joined them."""

    member_ids: tuple[int, ...]
    exact: bool
    links: tuple[DuplicateLink, ...]


@dataclass(frozen=True, slots=True)
class ClusterSearch:
    """The clusters, and what it took: candidate pairs proposed (vectors and keywords, distinct)
    and pairs judged by their parts (exact pairs need no judgement). ``wording``: the clusters of
    the pairs rejected only for their wording (at most ``WORDING_PAIRS`` pairs), for judgement."""

    clusters: tuple[DuplicateCluster, ...]
    candidates: int
    checked: int
    wording: tuple[DuplicateCluster, ...] = ()


def exact_key(text: str) -> str:
    """The text with width, case, spaces and punctuation folded: equal keys, same text."""
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


@dataclass(frozen=True, slots=True)
class Blocking:
    """What the search needs of the facts before any vector: each fact's ``hard_key`` (read
    without its wording), the exact pairs, and the pairs with the same words (keyword pairs)."""

    keys: list[int]
    exact: set[tuple[int, int]]
    keyword_pairs: list[tuple[int, int]]


def blocking(facts: Sequence[StoredFact]) -> Blocking:
    """The ``Blocking`` of ``facts`` (text work only: it runs while the vectors are read)."""
    folded = [exact_key(fact.text) for fact in facts]
    exact = _exact_pairs(facts, folded)
    keys = [hard_key(read_parts(fact.text, wording=False)) for fact in facts]
    return Blocking(keys, exact, _keyword_candidates(folded, exact))


def close_pairs(
    vectors: np.ndarray, threshold: float = VECTOR_THRESHOLD, block: int = BLOCK_ROWS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row pairs (i < j) of L2-normalised ``vectors`` with cosine ≥ ``threshold``: (i, j, cosine)."""
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    similarities: list[np.ndarray] = []
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    for start in range(0, len(matrix), block):
        stop = min(len(matrix), start + block)
        products = matrix[start:stop] @ matrix[start:].T
        rows, columns = np.nonzero(products >= threshold)
        above = columns > rows
        rows, columns = rows[above], columns[above]
        firsts.append(rows + start)
        seconds.append(columns + start)
        similarities.append(products[rows, columns])
    return _joined(firsts, seconds, similarities)


def _joined(
    firsts: list[np.ndarray], seconds: list[np.ndarray], similarities: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of several blocks as one (first, second, cosine) triple of arrays."""
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32)
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(similarities)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, item: int) -> int:
        root = self.parent.setdefault(item, item)
        while root != self.parent[root]:
            root = self.parent[root]
        while item != root:  # path compression
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, first: int, second: int) -> None:
        self.parent[max(self.find(first), self.find(second))] = min(self.find(first), self.find(second))


def _groups(keys: Iterable[tuple[int, object]]) -> list[list[int]]:
    """Indices that share a key, for every key held by more than one."""
    by_key: dict[object, list[int]] = {}
    for index, key in keys:
        by_key.setdefault(key, []).append(index)
    return [members for members in by_key.values() if len(members) > 1]


def find_clusters(
    facts: Sequence[StoredFact],
    blocks: Blocking,
    vectors: np.ndarray | None,
    vector_rows: Sequence[int | None],
    threshold: float = VECTOR_THRESHOLD,
    model: PairModel | None = None,
) -> ClusterSearch:
    """Near-duplicate clusters of ``facts``. ``blocks``: their ``blocking``; ``vector_rows[i]``:
    the row of ``vectors`` holding fact i's stored vector, or None when it has none (yet).

    Blocking first: vectors are compared only within a block of equal keys (who, when, whether,
    plan: a pair across blocks cannot be a duplicate), so the cost is the sum of the blocks'
    squares, not the bank's. ``model``: the learned check of the wording (``pair_model``), fitted
    on the embedder of ``vectors``; it reads a pair's two stored vectors, so a pair with a fact
    not yet embedded is judged by the rules alone."""
    exact, keyword_pairs = blocks.exact, blocks.keyword_pairs
    firsts, seconds, similarities = _vector_candidates(blocks.keys, vectors, vector_rows, threshold)
    judged: dict[tuple[int, int], float | None] = {
        (first, second): similarity
        for first, second, similarity in zip(firsts.tolist(), seconds.tolist(), similarities.tolist(), strict=True)
    }
    for pair in keyword_pairs:
        judged.setdefault(pair, _cosine(vectors, vector_rows, *pair))
    parts: dict[int, FactParts] = {}
    joined = _UnionFind()
    links: list[tuple[int, int, DuplicateLink]] = []
    for first, second in sorted(exact):
        links.append((first, second, _link(facts, first, second, None, DuplicateVerdict(True, EXACT, ("text",)))))
        joined.union(first, second)
    checked = 0
    doubted: list[tuple[int, int, DuplicateLink]] = []
    for (first, second), similarity in sorted(judged.items()):
        if (first, second) in exact or joined.find(first) == joined.find(second):
            continue
        checked += 1
        verdict = judge_read(
            _parts(parts, facts, first),
            _parts(parts, facts, second),
            _judged(similarity),
            _pair_vectors(vectors, vector_rows, first, second) if model is not None else None,
            model,
        )
        if verdict.duplicate:
            links.append((first, second, _link(facts, first, second, similarity, verdict)))
            joined.union(first, second)
        elif doubted_by_wording(verdict):
            doubted.append((first, second, _link(facts, first, second, similarity, verdict)))
    clusters = _clusters(facts, joined, links)
    return ClusterSearch(clusters, len(judged.keys() | exact), checked, _wording_clusters(facts, joined, doubted))


def _wording_clusters(
    facts: Sequence[StoredFact], joined: _UnionFind, doubted: list[tuple[int, int, DuplicateLink]]
) -> tuple[DuplicateCluster, ...]:
    """The clusters of the pairs rejected only for their wording: those whose facts the accepted
    pairs did not join, the closest ``WORDING_PAIRS`` (by cosine; a keyword pair without vectors
    counts as close as text gets), joined by union-find; the cluster with the closest pair first."""
    apart = [item for item in doubted if joined.find(item[0]) != joined.find(item[1])]
    apart.sort(key=lambda item: (-_judged(item[2].similarity), item[0], item[1]))
    wording = _UnionFind()
    for first, second, _ in apart[:WORDING_PAIRS]:
        wording.union(first, second)
    found = _clusters(facts, wording, apart[:WORDING_PAIRS])
    return tuple(
        sorted(
            found, key=lambda cluster: (-max(_judged(link.similarity) for link in cluster.links), cluster.member_ids)
        )
    )


def _exact_pairs(facts: Sequence[StoredFact], folded: Sequence[str]) -> set[tuple[int, int]]:
    """(first, other) for every fact whose content hash or folded text (``exact_key``) an
    earlier one has."""
    exact: set[tuple[int, int]] = set()
    for members in _groups((index, fact.content_hash) for index, fact in enumerate(facts)):
        exact.update((members[0], other) for other in members[1:])
    for members in _groups(enumerate(folded)):
        exact.update((members[0], other) for other in members[1:])
    return exact


def _vector_candidates(
    keys: Sequence[int], vectors: np.ndarray | None, vector_rows: Sequence[int | None], threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, cosine) as fact indices, first < second, of every close pair of vectors
    within a block of equal keys."""
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    similarities: list[np.ndarray] = []
    if vectors is not None and len(vectors):
        rows = np.array([-1 if row is None else row for row in vector_rows], dtype=np.int64)
        for block in _groups((index, key) for index, key in enumerate(keys) if vector_rows[index] is not None):
            members = np.array(block, dtype=np.int64)
            block_firsts, block_seconds, block_similarities = close_pairs(vectors[rows[members]], threshold)
            firsts.append(members[block_firsts])
            seconds.append(members[block_seconds])
            similarities.append(block_similarities)
    return _joined(firsts, seconds, similarities)


def _keyword_candidates(folded: Sequence[str], exact: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pairs of facts with the same keyword signature (the same words, in any order), from their
    folded texts."""
    pairs = []
    for members in _groups((index, "".join(sorted(text))) for index, text in enumerate(folded)):
        for position, first in enumerate(members):
            pairs += [(first, second) for second in members[position + 1 :] if (first, second) not in exact]
    return pairs


def _cosine(vectors: np.ndarray | None, rows: Sequence[int | None], first: int, second: int) -> float | None:
    row_first, row_second = rows[first], rows[second]
    if vectors is None or row_first is None or row_second is None:
        return None
    return float(vectors[row_first] @ vectors[row_second])


def _pair_vectors(
    vectors: np.ndarray | None, rows: Sequence[int | None], first: int, second: int
) -> tuple[np.ndarray, np.ndarray] | None:
    row_first, row_second = rows[first], rows[second]
    if vectors is None or row_first is None or row_second is None:
        return None
    return vectors[row_first], vectors[row_second]


def _judged(similarity: float | None) -> float:
    """The similarity a keyword pair is judged with when a vector is missing: the same bag of
    words is as close as text gets."""
    return 1.0 if similarity is None else similarity


def _parts(cache: dict[int, FactParts], facts: Sequence[StoredFact], index: int) -> FactParts:
    found = cache.get(index)
    if found is None:
        found = cache[index] = read_parts(facts[index].text)
    return found


def _link(
    facts: Sequence[StoredFact], first: int, second: int, similarity: float | None, verdict: DuplicateVerdict
) -> DuplicateLink:
    rounded = None if similarity is None else round(similarity, 4)
    return DuplicateLink(facts[first].id, facts[second].id, rounded, verdict.reason, verdict.matched, verdict.detail)


def _clusters(
    facts: Sequence[StoredFact], joined: _UnionFind, links: list[tuple[int, int, DuplicateLink]]
) -> tuple[DuplicateCluster, ...]:
    members: dict[int, list[int]] = {}
    for index in joined.parent:
        members.setdefault(joined.find(index), []).append(index)
    by_root: dict[int, list[DuplicateLink]] = {}
    for first, _second, link in links:
        by_root.setdefault(joined.find(first), []).append(link)
    clusters = []
    for root, indices in members.items():
        if len(indices) < 2:
            continue
        found = by_root.get(root, [])
        ids = tuple(sorted(facts[index].id for index in indices))
        clusters.append(DuplicateCluster(ids, all(link.reason == EXACT for link in found), tuple(found)))
    return tuple(sorted(clusters, key=lambda cluster: cluster.member_ids))
