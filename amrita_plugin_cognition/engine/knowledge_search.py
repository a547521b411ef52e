"""Searching a bot account's knowledge base: hybrid like memory recall and card search.

The keyword side matches the bot's active entries (``store/knowledge_index.py``: a stale entry
has no keyword row), the vector side queries the bot's knowledge collection (within the tool's
vector budget; on a failure or past it the search is keyword-only, ``mode``); both are fused
with the recall's score fusion (``domain/scoring.score_fusion`` with the configured weights).
Every candidate is re-read from SQL: only an active entry of this bot is shown (a vector the
drain has not deleted yet never shows a hidden entry), and only above the memory search's
relevance floor (a shared significant word, or cosine ≥ ``RelevanceFloor.min_similarity``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domain.knowledge import KnowledgeEntry
from ..domain.records import clean_text
from ..domain.scoring import score_fusion
from ..domain.tokenize import query_terms
from ..errors import InvalidInput
from ..store import knowledge as store
from ..store import knowledge_index
from .ranking import ranking_weights
from .search import DEFAULT_FLOOR, RelevanceFloor, bounded_vector_side, query_keywords, text_matches_keywords

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Candidates each side returns before fusion and the floor.
CANDIDATES = 30


@dataclass(frozen=True, slots=True)
class KnowledgeHit:
    entry: KnowledgeEntry
    #: The fused relevance in [0, 1] (the order of the hits).
    relevance: float
    #: Cosine similarity of query and entry (0.0: the vector side did not return it).
    similarity: float


@dataclass(frozen=True, slots=True)
class KnowledgeSearchResult:
    hits: list[KnowledgeHit]
    #: "full", or "keyword_only" when the vector side was unavailable.
    mode: str


async def search(
    engine: CognitionEngine, bot_id: str, query: str, top_k: int = 5, *, floor: RelevanceFloor = DEFAULT_FLOOR
) -> KnowledgeSearchResult:
    """The bot account's shown entries that match ``query``, best first (module doc)."""
    query = " ".join(clean_text(query).split())
    if not query:
        raise InvalidInput("搜索内容不能为空")
    async with engine.unit_of_work() as uow:
        keyword_hits = dict(await knowledge_index.search(uow.session, bot_id, query_terms(query), CANDIDATES))
    similarity, mode = await bounded_vector_side(engine, _vector_side(engine, bot_id, query), "knowledge_search")
    relevance = score_fusion(similarity, keyword_hits, ranking_weights(engine.config))
    async with engine.unit_of_work() as uow:
        rows = await store.rows_by_ids(uow.session, list(relevance))
    keywords = query_keywords(query)
    hits: list[KnowledgeHit] = []
    for row in rows:
        entry = store.to_entry(row)
        if entry.bot_id != bot_id or not entry.shown:
            continue  # whatever an index returned: only this bot's shown entries
        matched = floor.keyword_match and text_matches_keywords(keywords, knowledge_index.entry_text(row))
        if not (matched or similarity.get(row.id, 0.0) >= floor.min_similarity):
            continue
        hits.append(KnowledgeHit(entry, relevance.get(row.id, 0.0), similarity.get(row.id, 0.0)))
    hits.sort(key=lambda hit: (-hit.relevance, -hit.similarity, hit.entry.id))
    return KnowledgeSearchResult(hits[:top_k], mode)


async def _vector_side(engine: CognitionEngine, bot_id: str, query: str) -> dict[int, float]:
    """Entry id -> cosine similarity of the bot's entries nearest to ``query``."""
    vector = (await engine.embedder.embed_queries([query]))[0]
    generation = await engine.index_sync.current_generation()
    found = await asyncio.to_thread(engine.vectors.query_knowledge, generation, bot_id, vector, CANDIDATES)
    return {hit.memory_id: hit.similarity for hit in found}
