"""Reading cards from a chat: which parts it may see, and searching them by words and meaning.

Both go through one predicate, ``domain/profile_access.card_access`` (the get tool asks it for
one entity, the search for every entity the chat could see), under the scope policy in force,
with membership in a group read from the group's facts (``repository.group_members``). So the
search can never return what the get tool would refuse: never another group's card, never a
user's part another group sees (under ``strict``, a group sees only a user's part built from its
own facts), never a private part in a group, never another user's private part, never another
bot account's card.

The search is hybrid like memory recall, over the card parts' own indices
(``store/profile_index.py``): the keyword side matches only the visible parts' tokens, the vector
side queries the bot account's card collection filtered to the visible parts; both are fused
with the recall's score fusion, every candidate is re-read from SQL and checked against the
visible parts again, and a hit is shown only above the search's relevance floor (a shared
significant word, or a cosine similarity of at least ``RelevanceFloor.min_similarity``: the
floor ``search.py`` uses for memories). When the embedder or the index fails or misses its
deadline, the search is keyword-only (``mode``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..domain.profile_access import card_access, needs_membership
from ..domain.profiles import Card
from ..domain.records import ChatContext, clean_text
from ..domain.scoring import score_fusion
from ..domain.tokenize import query_terms
from ..domain.visibility import ScopePolicy
from ..errors import InvalidInput
from ..store import profile_index, repository
from ..store import profiles as profile_store
from ..store.unit_of_work import UnitOfWork
from .ranking import ranking_weights
from .search import DEFAULT_FLOOR, RelevanceFloor, bounded_vector_side, query_keywords, text_matches_keywords

if TYPE_CHECKING:
    from .service import CognitionEngine

EntityChoice = Literal["user", "group", "any"]
#: Candidates each side returns before fusion and the floor.
CANDIDATES = 30
#: Users of a group whose cards a search in it considers (those its facts name most).
MEMBERS_MAX = 1000

CardKey = tuple[str, str, str]


async def _is_member(uow: UnitOfWork, context: ChatContext, user_id: str) -> bool:
    return bool(await repository.group_members(uow.session, context.bot_id, context.scope.id, [user_id]))


async def visible_parts(engine: CognitionEngine, context: ChatContext, entity_type: str, entity_id: str) -> list[str]:
    """The parts of one entity's card this chat may see (``card_access``), the one kept longest
    first; ``InvalidInput`` with the reason when none."""
    member = False
    if needs_membership(context, entity_type, entity_id):
        async with engine.unit_of_work() as uow:
            member = await _is_member(uow, context, entity_id)
    access = card_access(context, entity_type, entity_id, engine.config.scope_policy, member)
    if not access.parts:
        raise InvalidInput(access.refusal)
    return list(access.parts)


async def visible_card_keys(
    uow: UnitOfWork, context: ChatContext, policy: ScopePolicy, entity_type: EntityChoice = "any"
) -> list[CardKey]:
    """Every card part ((entity type, entity id, part)) this chat may see under ``policy``, by
    ``card_access``: in a group its own card and the part it sees of the users its facts name
    or of the speaker; in a private chat the user's."""
    candidates: list[tuple[str, str, bool]] = []
    if context.scope.is_group and entity_type in ("group", "any"):
        candidates.append(("group", context.scope.id, False))
    if entity_type in ("user", "any"):
        if context.scope.is_group:
            members = await repository.group_members(uow.session, context.bot_id, context.scope.id, None, MEMBERS_MAX)
            candidates += [("user", user, user in members) for user in sorted(members | {context.user_id})]
        else:
            candidates.append(("user", context.user_id, False))
    return [
        (kind, entity, part)
        for kind, entity, member in candidates
        for part in card_access(context, kind, entity, policy, member).parts
    ]


@dataclass(frozen=True, slots=True)
class CardHit:
    card: Card
    #: The fused relevance in [0, 1] (the order of the hits).
    relevance: float
    #: Cosine similarity of the query and the card part (0.0: the vector side did not return it).
    similarity: float


@dataclass(frozen=True, slots=True)
class CardSearchResult:
    hits: list[CardHit]
    #: "full", or "keyword_only" when the vector side was unavailable.
    mode: str


async def search_cards(
    engine: CognitionEngine,
    context: ChatContext,
    query: str,
    entity_type: EntityChoice = "any",
    top_k: int = 5,
    *,
    floor: RelevanceFloor = DEFAULT_FLOOR,
) -> CardSearchResult:
    """The card parts this chat may see that match ``query``, best first (see the module doc)."""
    query = " ".join(clean_text(query).split())
    if not query:
        raise InvalidInput("搜索内容不能为空")
    async with engine.unit_of_work() as uow:
        keys = await visible_card_keys(uow, context, engine.config.scope_policy, entity_type)
        tokens = [profile_index.card_token(context.bot_id, *key) for key in keys]
        keyword_hits = dict(await profile_index.search(uow.session, tokens, query_terms(query), CANDIDATES))
    if not keys:
        return CardSearchResult([], "full")
    similarity, mode = await bounded_vector_side(
        engine, _vector_side(engine, context.bot_id, keys, query), "profile_search"
    )
    relevance = score_fusion(similarity, keyword_hits, ranking_weights(engine.config))
    async with engine.unit_of_work() as uow:
        rows = await profile_store.rows_by_ids(uow.session, list(relevance))
    allowed = set(keys)
    keywords = query_keywords(query)
    hits: list[CardHit] = []
    for row in rows:
        if row.bot_id != context.bot_id or (row.entity_type, row.entity_id, row.part) not in allowed:
            continue  # whatever an index returned, only what the chat may see
        card = profile_store.to_card(row)
        shown = text_matches_keywords(keywords, profile_index.row_text(row)) and floor.keyword_match
        if card.is_empty or not (shown or similarity.get(row.id, 0.0) >= floor.min_similarity):
            continue
        hits.append(CardHit(card, relevance.get(row.id, 0.0), similarity.get(row.id, 0.0)))
    hits.sort(key=lambda hit: (-hit.relevance, -hit.similarity, hit.card.entity_type, hit.card.entity_id))
    return CardSearchResult(hits[:top_k], mode)


async def _vector_side(engine: CognitionEngine, bot_id: str, keys: list[CardKey], query: str) -> dict[int, float]:
    """Profile row id -> cosine similarity of the visible card parts nearest to ``query``."""
    vector = (await engine.embedder.embed_queries([query]))[0]
    generation = await engine.index_sync.current_generation()
    names = [profile_index.card_key(*key) for key in keys]
    where: dict[str, object] = {"card": names[0]} if len(names) == 1 else {"card": {"$in": names}}
    found = await asyncio.to_thread(engine.vectors.query_cards, generation, bot_id, vector, CANDIDATES, where)
    return {hit.memory_id: hit.similarity for hit in found}
