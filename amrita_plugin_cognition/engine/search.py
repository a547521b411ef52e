"""Searching memories for a person (``/memory … search``): recall, then a relevance floor.

Per-turn recall ranks whatever the chat may see and leaves the judgement to the model; a person
who searches for 体检 expects to see memories about 体检 and nothing else. A hit of such a search
is shown only when it

* matches the query's words: a significant term of the query (a CJK bigram not made of function
  characters, a CJK character standing alone between them, a Latin word that is no stop word, a
  number) occurs in the memory's text or tags, or
* is close in meaning: the cosine similarity of the query and the memory is at least
  ``RelevanceFloor.min_similarity``.

The fused score is not used: it is normalised per query (min-max over the candidates), so the
best of a set of unrelated candidates scores high as well, and the BM25 side matches single
characters (体检 shares 体 with 身体). The threshold was measured on the public sets
(``bench/relevance_floor.py``) with the bundled embedder. Per-turn recall is not affected.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ..domain.records import ChatContext, MemoryRecord
from ..domain.tokenize import CHINESE_STOP_CHARACTERS, keyword_tokens
from ..errors import TIMEOUTS, EmbedderUnavailable, IndexUnavailable
from ..logs import log_event
from .ranking import RecallHit
from .recall import recall

if TYPE_CHECKING:
    from .service import CognitionEngine

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_STOP_SPLIT = re.compile("[" + "".join(sorted(CHINESE_STOP_CHARACTERS)) + "]+")

#: Candidates read before the floor (the floor then keeps the matching ones).
SEARCH_CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """What a search hit must reach to be shown (``bench/relevance_floor.py`` measured it)."""

    #: Cosine similarity of query and memory that counts as a match without a shared word: the
    #: largest value at which the cosine alone keeps >= 0.98 of the relevant top-5 hits on both
    #: public sets (MADial zh 0.981, LoCoMo 0.999 with the bundled USE model; 0.19 keeps 0.977).
    min_similarity: float = 0.18
    #: Whether a shared significant term counts as a match on its own.
    keyword_match: bool = True


DEFAULT_FLOOR = RelevanceFloor()


def query_keywords(query: str) -> frozenset[str]:
    """The significant terms of a search query, in the keyword index's own token form.

    CJK runs are cut at function characters (的, 了, 我 …); what is left gives its bigrams, or
    the character itself when it stands alone. Latin words and numbers are tokenised as the
    index does (lower case, stop words dropped, light stemming)."""
    normalised = unicodedata.normalize("NFKC", query)
    terms: set[str] = set()
    for run in _CJK_RUN.findall(normalised):
        for part in _STOP_SPLIT.split(run):
            if len(part) == 1:
                terms.add(part)
            else:
                terms.update(part[index : index + 2] for index in range(len(part) - 1))
    terms.update(keyword_tokens(_CJK_RUN.sub(" ", normalised)))
    return frozenset(terms)


def record_tokens(record: MemoryRecord) -> frozenset[str]:
    """Every keyword token of a memory's text and tags. Not the speaker's name: every memory of
    a person would match a search that names them (stored text names whom it is about)."""
    parts: Iterable[str] = (record.text, *record.tags)
    return frozenset(keyword_tokens(" ".join(part for part in parts if part)))


def matches_keywords(keywords: frozenset[str], record: MemoryRecord) -> bool:
    return bool(keywords) and not keywords.isdisjoint(record_tokens(record))


def text_matches_keywords(keywords: frozenset[str], text: str) -> bool:
    """``matches_keywords`` for a bare text (benchmarks, tests)."""
    return bool(keywords) and not keywords.isdisjoint(keyword_tokens(text))


def above_floor(hit: RecallHit, keywords: frozenset[str], floor: RelevanceFloor = DEFAULT_FLOOR) -> bool:
    """Whether a recall hit of a search for ``keywords`` (``query_keywords``) is shown."""
    if floor.keyword_match and matches_keywords(keywords, hit.record):
        return True
    # a hit the vector side did not return (or could not: it was down) has similarity 0.0
    return hit.similarity >= floor.min_similarity


@dataclass(slots=True)
class SearchResult:
    hits: list[RecallHit]
    #: "full", or "keyword_only" when the vector side was unavailable (only word matches shown).
    mode: str


async def search_memories(
    engine: CognitionEngine,
    context: ChatContext,
    query: str,
    target: Literal["user", "group"] | None = None,
    *,
    floor: RelevanceFloor = DEFAULT_FLOOR,
    now: datetime | None = None,
) -> SearchResult:
    """The memories visible here that match ``query``, best first.

    ``target`` ``"user"``: only facts said by or about the person asking; ``"group"``: only the
    facts of this chat; None: whatever the chat may see."""
    result = await recall(engine, context, [query], now=now, top_k=SEARCH_CANDIDATES)
    keywords = query_keywords(query)
    hits: list[RecallHit] = []
    for hit in result.hits:
        record = hit.record
        if target == "user" and context.user_id not in (record.speaker_id, record.subject_id):
            continue
        if target == "group" and record.scope != context.scope:
            continue
        if above_floor(hit, keywords, floor):
            hits.append(hit)
    return SearchResult(hits, result.mode)


_VECTOR_FAILURES: tuple[type[BaseException], ...] = (EmbedderUnavailable, IndexUnavailable, *TIMEOUTS)


async def bounded_vector_side(
    engine: CognitionEngine, side: Coroutine[Any, Any, dict[int, float]], stage: str
) -> tuple[dict[int, float], str]:
    """A search's vector side (id -> cosine similarity) within ``tool_timeout_seconds ×
    vector_budget_share``, and the search's mode: ``"full"``, or ``"keyword_only"`` (no
    similarities, logged under ``stage``) when the embedder or the index failed or was late."""
    deadline = engine.config.tool_timeout_seconds * engine.config.vector_budget_share
    try:
        return await asyncio.wait_for(side, timeout=deadline), "full"
    except _VECTOR_FAILURES as error:
        log_event(stage, level=logging.WARNING, degraded="keyword_only", error=str(error)[:200] or type(error).__name__)
        return {}, "keyword_only"
