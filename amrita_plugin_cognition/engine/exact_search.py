"""Recall's vector side for small chats: their copy in SQL (``store/vector_copy.py``), ranked
exactly, instead of a round trip to the index.

Most chats of a bot hold a few hundred facts. Reading those rows is one indexed SQL statement and
ranking them one matrix product, where the index costs a hop to its thread (or an HTTP call to a
Chroma server) and, for a chat whose index is not in memory, reading it back from disk; a bot of
10,000 chats cannot keep every chat's index in memory, so that read-back was most of a turn's
vector side (bench/README.md, "a million memories"). A private chat's user is also searched in
the groups where they have facts, filtered on them: their facts of every group are read at once
through the memory table's person indices, however large the groups, and ranked per group the same
way. Larger chats (a person with more group facts than "small"), filters of any other kind, and
every chat until the repair has marked the generation's copy complete, are asked of the index as
before; ``recall.exact_search_max_vectors`` is "small".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from cachetools import TTLCache

from ..domain.records import Scope
from ..index.exact import nearest
from ..index.vector import VectorHit
from ..store import vector_copy

if TYPE_CHECKING:
    from .service import CognitionEngine

#: A chat found larger than that is asked of the index without a look at its copy for this long.
LARGE_CHAT_SECONDS = 600.0
#: How long "this generation's copy is not complete yet" is believed before it is read again.
INCOMPLETE_RECHECK_SECONDS = 5.0

Target = tuple[Scope, dict[str, object] | None]


def person_filter(person: str) -> dict[str, object]:
    """The index's filter on one person's facts: said by them or about them."""
    return {"$or": [{"speaker_id": person}, {"subject_id": person}]}


def filtered_person(where: dict[str, object] | None) -> str | None:
    """The person ``where`` is ``person_filter`` of, or None (no filter, or a filter of another kind)."""
    if not where:
        return None
    either = where.get("$or")
    first = either[0] if isinstance(either, list) and either and isinstance(either[0], dict) else {}
    person = first.get("speaker_id")
    return person if isinstance(person, str) and where == person_filter(person) else None


class ExactSearch:
    """Which chats recall searches in their copy, and the search itself (one per engine)."""

    def __init__(self, engine: CognitionEngine) -> None:
        self._engine = engine
        #: Generation -> when its copy was last found not complete (not read again for a while).
        self._incomplete_seen: dict[int, float] = {}
        self._large: TTLCache[tuple[int, str, str], bool] = TTLCache(maxsize=8192, ttl=LARGE_CHAT_SECONDS)

    async def search(
        self, generation: int, bot_id: str, targets: Sequence[Target], vectors: np.ndarray, limit: int
    ) -> tuple[list[list[VectorHit]], list[Target]]:
        """Per query vector, the hits of the targets answered from the copy; and the targets left
        for the index. A copy without its completeness mark may have been dropped by a reindex in
        another process since this one read the generation (the mark goes in the transaction that
        drops the rows): the generation is read again and, when it moved, its copy is searched, as
        the index's search follows a missing collection."""
        hits: list[list[VectorHit]] = [[] for _ in range(len(vectors))]
        most = self._engine.config.recall.exact_search_max_vectors
        if not most:
            return hits, list(targets)
        if self._recently_incomplete(generation):
            return hits, list(targets)
        read = await self._read(generation, bot_id, targets, vectors.shape[1], most)
        if read is None:
            current = await self._engine.index_sync.current_generation(force=True)
            if current != generation and not self._recently_incomplete(current):
                read = await self._read(current, bot_id, targets, vectors.shape[1], most)
        if read is None:
            return hits, list(targets)
        chats, left = read
        layout = self._engine.vectors.layout
        for view, vector in enumerate(vectors):
            for ids, matrix in chats:
                hits[view] += nearest(layout, vector, ids, matrix, limit)
        return hits, left

    async def _read(
        self, generation: int, bot_id: str, targets: Sequence[Target], dimension: int, most: int
    ) -> tuple[list[tuple[list[int], np.ndarray]], list[Target]] | None:
        """The targets' rows in ``generation``'s copy, and the targets left for the index; None when
        that copy is not complete (the mark is read after the rows, so rows read before a drop
        committed are never taken for a whole copy)."""
        left: list[Target] = []
        chats: list[tuple[list[int], np.ndarray]] = []
        people: dict[str, list[Target]] = {}
        async with self._engine.unit_of_work() as uow:
            for target in targets:
                scope, where = target
                person = filtered_person(where)
                if person is not None and scope.is_group:
                    people.setdefault(person, []).append(target)
                    continue
                key = (generation, bot_id, scope.key)
                if where is not None or key in self._large:
                    left.append(target)
                    continue
                ids, matrix = await vector_copy.chat(uow.session, generation, bot_id, scope, most + 1)
                if self._taken(key, ids, matrix, dimension, most):
                    chats.append((ids, matrix))
                elif ids:
                    left.append(target)
            for person, wanted in people.items():
                key = (generation, bot_id, f"person:{person}")
                if key in self._large:
                    left.extend(wanted)
                    continue
                found = await vector_copy.person_in_groups(uow.session, generation, bot_id, person, most)
                if found is None:  # more of the person's facts than a small chat's
                    self._large[key] = True
                    left.extend(wanted)
                    continue
                ids, groups, matrix = found
                if not self._taken(key, ids, matrix, dimension, most):
                    left.extend(wanted if ids else ())
                    continue
                rows_of: dict[str, list[int]] = {}
                for row, group_id in enumerate(groups):
                    rows_of.setdefault(group_id, []).append(row)
                for scope, _ in wanted:  # only the groups visible here, each on its own as the index has them
                    if rows := rows_of.get(scope.id):
                        chats.append(([ids[row] for row in rows], matrix[rows]))
            complete = await vector_copy.is_complete(uow.session, generation)
        if not complete:
            self._incomplete_seen[generation] = time.monotonic()
            return None
        self._incomplete_seen.pop(generation, None)
        return chats, left

    def _recently_incomplete(self, generation: int) -> bool:
        """Whether ``generation``'s copy was found not complete a moment ago (it is not read, nor the
        generation read again, until ``INCOMPLETE_RECHECK_SECONDS`` have passed)."""
        seen = self._incomplete_seen.get(generation)
        return seen is not None and time.monotonic() - seen < INCOMPLETE_RECHECK_SECONDS

    def _taken(self, key: tuple[int, str, str], ids: list[int], matrix: np.ndarray, dimension: int, most: int) -> bool:
        """Whether rows read from the copy answer for their target: some, at most ``most`` (more:
        remembered as large for a while) and of the query's dimension (another model's vectors, of
        an embedder changed without a reindex, are the index's to answer)."""
        if len(ids) > most:
            self._large[key] = True
            return False
        return bool(ids) and matrix.shape[1] == dimension
