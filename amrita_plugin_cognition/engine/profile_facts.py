"""What a card part is built from (shared by the merge and the rebuild): the entity's facts the
part may show, the closest to a query first; which facts may be shown at all (visible to the part,
about nobody who opted out); an answer's card with what names an opted-out user cut out; and the
report of a merge job."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..domain.profile_policy import visible_to
from ..domain.profiles import SECTIONS, Card
from ..domain.records import MemoryRecord
from ..store import profile_sources, repository
from .search import query_keywords, record_tokens
from .switches import card_without_opted_out, switch_state

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Source ids a card keeps (the newest).
SOURCE_IDS_KEEP = 50


def kept_sources(*groups: Iterable[int]) -> list[int]:
    """A card's source ids: every id of ``groups`` once, the newest ``SOURCE_IDS_KEEP`` kept."""
    return sorted({source for group in groups for source in group})[-SOURCE_IDS_KEEP:]


#: Facts read from SQL per part before ranking (the newest).
CANDIDATES = 400


@dataclass(slots=True)
class MergeReport:
    job_id: int
    outcome: str = "done"  # "done" | "skipped" | "lost"
    llm_calls: int = 0
    #: Per part: "saved", "unchanged", "skip", "skip_with_news", "refused", "nothing", "off";
    #: for a rebuild: "rebuilt", "unchanged", "cleared", "nothing".
    parts: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- recall


async def part_facts(
    engine: CognitionEngine, bot_id: str, entity_type: str, entity_id: str, part: str
) -> list[MemoryRecord]:
    """The entity's active facts that this part may show, the newest ``CANDIDATES``
    (``store.profile_sources.source_facts_query``: ``profile_policy.visible_to`` in SQL). Never another
    user's private chat."""
    async with engine.unit_of_work() as uow:
        query_rows = profile_sources.source_facts_query(bot_id, entity_type, entity_id, part)
        records, _ = await repository.list_visible(uow.session, query_rows, 0, CANDIDATES)
    return records


def closest(records: Sequence[MemoryRecord], query: Sequence[str], top_k: int) -> list[MemoryRecord]:
    """``records`` (newest first) ranked by shared words with ``query``, then the newest."""
    keywords = query_keywords(" ".join(query))
    position = {record.id: index for index, record in enumerate(records)}  # newest first

    def overlap(record: MemoryRecord) -> int:
        return len(keywords & record_tokens(record))

    ranked = sorted(records, key=lambda record: (-overlap(record), position[record.id]))
    return ranked[:top_k]


async def visible_facts(
    engine: CognitionEngine, bot_id: str, entity_type: str, entity_id: str, part: str, query: Sequence[str], top_k: int
) -> list[MemoryRecord]:
    """The entity's active facts that this part may show (``part_facts``), the closest to
    ``query`` first (shared words with the new facts, then the newest)."""
    return closest(await part_facts(engine, bot_id, entity_type, entity_id, part), query, top_k)


async def shown_in(
    engine: CognitionEngine, bot_id: str, entity_type: str, entity_id: str, part: str
) -> Callable[[MemoryRecord], bool]:
    """Which facts a card part may be built from: of this bot account, visible to the part
    (``profile_policy.visible_to``), and about no user who opted out."""
    switches = await switch_state(engine, bot_id)

    def shown(fact: MemoryRecord) -> bool:
        return (
            fact.bot_id == bot_id
            and visible_to(fact, entity_type, entity_id, part)
            and not switches.touches_opted_out(
                [fact.speaker_id, fact.subject_id], [fact.text], (fact.speaker_name, fact.subject_name)
            )
        )

    return shown


def answer_without_opted_out(
    switches: Any, card: Card | None, problems: list[str], facts: Sequence[MemoryRecord] = ()
) -> tuple[Card | None, list[str]]:
    """An answer's card with what names an opted-out user cut out; none (with the problem named
    for the next try) when nothing of it is left. ``facts``: those the prompt showed (none of them
    by or about an opted-out user, ``shown_in``): where the name of one of their people stands in
    the answer, it is that person, not an opted-out user who shares the name."""
    if card is None:
        return None, problems
    people = [name for fact in facts for name in (fact.speaker_name, fact.subject_name) if name]
    kept = card_without_opted_out(switches, card, people)
    if not any(getattr(kept, section).strip() for section in SECTIONS):
        return None, [*problems, "卡片里只剩下已选择不被记忆的用户的内容：不要写这些人，只写卡片对象本身"]
    return kept, problems
