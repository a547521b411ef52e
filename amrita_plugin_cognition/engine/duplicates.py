"""The consolidation pre-pass's first step: near-duplicate clusters of one chat's active facts,
without the model and without embedding anything.

The facts come from the authority store, their vectors from the active generation as stored: its
copy in SQL (``store/vector_copy.py``) once complete, else the vector index
(``ChromaVectorIndex.stored_vectors``); half precision changes no verdict of the check on the
6,411 pairs of the dedup sets. The candidate pairs, the decision on each
(the facts' parts) and the clusters are pure (``domain/clusters.py``) and run on a worker thread.
A vector the index still holds for a fact that is no longer active is ignored; a fact whose vector
is not written yet is still compared by its keyword signature and its exact text. Nothing is
changed: the caller (the cycle) decides what to merge. When the vector index cannot be read, the
clusters come from the exact texts and keyword signatures alone (``without_vector`` is then every
fact), as recall goes on keyword-only.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from ..domain.clusters import VECTOR_THRESHOLD, DuplicateCluster, StoredFact, blocking, find_clusters
from ..domain.pair_model import PairModel
from ..domain.pair_model import for_vectors_of as pair_model_for
from ..domain.records import Scope
from ..domain.vector_parts import first_model_part
from ..errors import TIMEOUTS, IndexUnavailable
from ..logs import log_event
from ..store import repository, vector_copy

if TYPE_CHECKING:
    from .service import CognitionEngine

#: What makes the pre-pass go on without vectors (as recall goes on keyword-only).
_INDEX_FAILURES: tuple[type[BaseException], ...] = (IndexUnavailable, *TIMEOUTS)


@dataclass(frozen=True, slots=True)
class DuplicateClusters:
    """The clusters of one chat, and what they were found from: ``memories`` active facts,
    ``without_vector`` of them with no stored vector yet, ``candidates`` pairs proposed and
    ``checked`` pairs judged by their parts, in ``elapsed_ms`` (reads included). ``wording``: the
    clusters of pairs the parts check rejected only for their wording (``domain/clusters.py``),
    offered to the cycle's model, never merged without it."""

    bot_id: str
    scope: Scope
    clusters: tuple[DuplicateCluster, ...]
    memories: int
    without_vector: int
    candidates: int
    checked: int
    elapsed_ms: float
    wording: tuple[DuplicateCluster, ...] = ()

    @property
    def exact(self) -> tuple[DuplicateCluster, ...]:
        return tuple(cluster for cluster in self.clusters if cluster.exact)

    @property
    def near(self) -> tuple[DuplicateCluster, ...]:
        return tuple(cluster for cluster in self.clusters if not cluster.exact)


async def duplicate_clusters(
    engine: CognitionEngine, bot_id: str, scope: Scope, threshold: float = VECTOR_THRESHOLD
) -> DuplicateClusters:
    """Near-duplicate clusters of the active facts of one chat (``scope`` of ``bot_id``)."""
    started = time.perf_counter()
    async with engine.session() as session:
        rows = await repository.active_texts(session, bot_id, scope)
    facts = [StoredFact(memory_id, text, content_hash) for memory_id, text, content_hash in rows]
    # The vectors are read on the index's thread while the facts' texts are read on another.
    (stored_ids, vectors), blocks = await asyncio.gather(
        _stored_vectors(engine, bot_id, scope), asyncio.to_thread(blocking, facts)
    )
    row_of = {memory_id: row for row, memory_id in enumerate(stored_ids)}
    vector_rows = [row_of.get(fact.id) for fact in facts]
    found = await asyncio.to_thread(
        find_clusters,
        facts,
        blocks,
        vectors if len(stored_ids) else np.zeros((0, 0), np.float32),
        vector_rows,
        threshold,
        _pair_model(engine),
    )
    result = DuplicateClusters(
        bot_id=bot_id,
        scope=scope,
        clusters=found.clusters,
        memories=len(facts),
        without_vector=sum(row is None for row in vector_rows),
        candidates=found.candidates,
        checked=found.checked,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        wording=found.wording,
    )
    log_event(
        "duplicate_clusters",
        started,
        scope=scope.key,
        memories=result.memories,
        without_vector=result.without_vector,
        candidates=result.candidates,
        checked=result.checked,
        clusters=len(result.clusters),
        exact=len(result.exact),
        wording=len(result.wording),
    )
    return result


def _pair_model(engine: CognitionEngine) -> PairModel | None:
    """The shipped learned check of the wording, for the vectors ``stored_vectors`` gives: those of
    the embedder, or with the second model on its bundled model's part of each row."""
    first = getattr(engine.embedder, "first", None)  # a fused embedder: the bundled model's part
    return pair_model_for((first if first is not None else engine.embedder).fingerprint.as_dict())


async def _stored_vectors(engine: CognitionEngine, bot_id: str, scope: Scope) -> tuple[list[int], np.ndarray]:
    """The chat's vectors as stored in the active generation: from its copy in SQL once the repair
    has marked that copy complete (one indexed statement: a tenth of the index's paged read on
    a chat of 10,000), else from the index; none when the index cannot be read (logged): the
    clusters then come from exact texts and keyword signatures alone."""
    started = time.perf_counter()
    try:
        generation = await engine.index_sync.current_generation()
        async with engine.unit_of_work() as uow:
            ids, matrix = await vector_copy.chat(uow.session, generation, bot_id, scope)
            complete = await vector_copy.is_complete(uow.session, generation)  # read after the rows
        if complete:
            return ids, first_model_part(engine.vectors.layout, matrix)  # as the index's read gives them
        return await engine.vectors.off_loop(
            "stored_vectors", partial(engine.vectors.stored_vectors, generation, bot_id, scope)
        )
    except _INDEX_FAILURES as error:
        reason = type(error).__name__
        log_event("duplicate_clusters_keyword_only", started, logging.WARNING, scope=scope.key, reason=reason)
        return [], np.zeros((0, 0), np.float32)
