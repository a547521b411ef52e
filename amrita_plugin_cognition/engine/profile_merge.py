"""The historian's merge step: what a job taught, folded into the cards of the people and groups
it is about (``profiles.merge``).

Queued by ``profile_queue`` (one pending job per card, coalesced within a window); the prompt
and the checks of an answer are ``profile_prompt``'s.

**Merging** (``process``, run by the historian's workers): per part, under the entity's
in-process lock, read the current card and the entity's past facts that the part may show
(``visible_facts``, ``domain/profile_policy.visible_to``: a group's own chat; for a user's part in
group G what they said or what was said about them in G; for their cross-group part that in every
group; for their private part that and their own private chat), ranked by their overlap with the
new facts; then
one forced tool call: ``update_profile`` (evaluation, body, roast) or ``skip``. Whatever the
model writes, the card is saved for the job's entity and part; an answer naming another entity,
an empty card, a section over its limit, a credential in the text, or malformed output gets one
more call with the problem named, and if that fails too the current card stays as it was and the
job completes (counted in ``MergeReport``). A ``skip`` completes the job (logged, counted; it is
never retried). The save is conditional on the version read (``profiles.save(expected=...)``):
should another process have merged meanwhile, the merge is redone once on the newer card, so no
version is lost. Opted-out users and switched-off chats get no merge.

**Rebuilding** (a part listed under ``"rebuild"`` in the job: a fact it was built from was
forgotten or erased, ``profile_queue.queue_rebuilds``): the card's text may still say what the
forgotten fact said, so it is rewritten from the entity's remaining visible facts only (and the
new facts of the job, if any). The model sees the current card marked as possibly holding deleted
content and is told to keep only what the listed facts support. The rule, chosen to be safe:

- the rebuilt card is saved with ``source_ids`` = exactly the facts listed, and the replaced
  version is *not* kept as a revision (it may hold the forgotten fact);
- no visible fact left for the part, the part closed (its user opted out, its chat switched
  off, merges disabled), or a ``skip`` without a card: the part is deleted with its revisions
  (there is nothing it may be rebuilt from; the next merge starts a new card);
- an answer that still carries what the old version said and no remaining fact supports
  (``domain/profile_residue.py``; the model returned the card unchanged, say) is not saved: one
  more call names what must go, and if that answer carries it too, the part is deleted as above
  (the model keeps the content; the next merge starts a new card from the facts left);
- the model unreachable, or two unusable answers (another entity, empty, over a limit, a
  secret, malformed): the job fails and is retried with the queue's backoff, keeping its
  rebuild flag; after the last attempt it stays failed (``jobs`` commands) until retried.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cachetools import LRUCache

from ..domain.clock import aware_or_now
from ..domain.profile_policy import entity_scope, visible_to
from ..domain.profile_residue import residue
from ..domain.profiles import SECTIONS, Card, check_entity, part_group, part_order
from ..domain.records import MemoryRecord, Scope
from ..errors import ConcurrentChange, InvalidInput
from ..logs import log_event
from ..store import jobs, repository
from ..store import profiles as profile_store
from . import profiles
from .profile_prompt import SKIP, answer_or_problems, candidate, prompt_context
from .profile_queue import memory_ids, rebuild_parts
from .search import query_keywords, record_tokens
from .switches import card_without_opted_out, chat_open, switch_state

if TYPE_CHECKING:
    from .service import CognitionEngine

#: Source ids a card keeps (the newest).
SOURCE_IDS_KEEP = 50
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
    (``store.profiles.source_facts_query``: ``profile_policy.visible_to`` in SQL). Never another
    user's private chat."""
    async with engine.unit_of_work() as uow:
        query_rows = profile_store.source_facts_query(bot_id, entity_type, entity_id, part)
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


# --------------------------------------------------------------------------- merging


class _EntityLocks:
    """In-process locks per card entity (bounded), one set per engine."""

    def __init__(self) -> None:
        self._locks: LRUCache[str, asyncio.Lock] = LRUCache(maxsize=4096)

    def get(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock


_LOCKS: weakref.WeakKeyDictionary[Any, _EntityLocks] = weakref.WeakKeyDictionary()


def _entity_lock(engine: CognitionEngine, key: str) -> asyncio.Lock:
    locks = _LOCKS.get(engine)
    if locks is None:
        locks = _LOCKS[engine] = _EntityLocks()
    return locks.get(key)


def _sources(current: Card | None, facts: Sequence[MemoryRecord]) -> list[int]:
    """The card's source ids: the ones it had and the facts it was merged from, the newest kept."""
    ids = sorted({*(current.source_ids if current else ()), *(fact.id for fact in facts)})
    return ids[-SOURCE_IDS_KEEP:]


async def _shown_in(
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


async def _merge_part(
    engine: CognitionEngine,
    report: MergeReport,
    bot_id: str,
    entity_type: str,
    entity_id: str,
    part: str,
    new_ids: list[int],
    now: datetime,
) -> str:
    """One part's merge (the caller holds the entity's lock); its outcome for ``MergeReport``."""
    limits = profiles.card_limits(engine)
    shown = await _shown_in(engine, bot_id, entity_type, entity_id, part)

    for _ in range(2):  # once more when another writer saved this part meanwhile
        current = await profiles.get(engine, bot_id, entity_type, entity_id, part)
        async with engine.unit_of_work() as uow:  # the new facts still active and never forgotten
            rows = await repository.recallable_rows(uow.session, new_ids)
        new_facts = [fact for fact in map(repository.to_record, rows) if shown(fact)]
        if not new_facts:  # forgotten or corrected meanwhile: nothing new for this part
            return "nothing"
        new_facts.sort(key=lambda fact: fact.id)
        observations = [fact.text for fact in new_facts]
        fresh = {fact.id for fact in new_facts}
        top_k = engine.config.profiles.merge_top_k
        past = [
            fact
            for fact in await visible_facts(
                engine, bot_id, entity_type, entity_id, part, observations, top_k + len(fresh)
            )
            if fact.id not in fresh and shown(fact)
        ][:top_k]
        facts = [*new_facts, *past]
        switches = await switch_state(engine, bot_id)  # an opted-out user is cut from what is shown and saved
        shown_card = card_without_opted_out(switches, current) if current else None
        context = prompt_context(engine, shown_card, entity_type, entity_id, part, observations, past, now)
        base = current or Card(bot_id, entity_type, entity_id, part)
        card: Card | None = None
        problems: list[str] = []
        for _attempt in range(2):  # the answer, then one more with its problems named
            report.llm_calls += 1
            answer, problems = await answer_or_problems(engine, context)
            if answer is not None:
                if answer.action == SKIP:
                    # the facts written since the last merge are new by construction: a skip is
                    # the model's judgement that none of them belongs on the card; never looped
                    log_event(
                        "profile_merge",
                        bot=bot_id,
                        entity=f"{entity_type}:{entity_id}",
                        part=part,
                        skip_with_news=len(observations),
                    )
                    return "skip_with_news" if observations else "skip"
                card, problems = candidate(answer, base, limits)
                card, problems = _without_opted_out(switches, card, problems)
                if card is not None:
                    break
            context["feedback"] = problems
        if card is None:  # the current card stays as it is
            log_event(
                "profile_merge",
                level=logging.WARNING,
                bot=bot_id,
                entity=f"{entity_type}:{entity_id}",
                part=part,
                refused="; ".join(problems)[:300],
            )
            return "refused"
        card = replace(card, source_ids=_sources(current, facts))
        try:
            saved = await profiles.save(engine, card, by="historian", now=now, expected=current)
        except ConcurrentChange:
            log_event("profile_merge", level=logging.INFO, entity=f"{entity_type}:{entity_id}", part=part, redo=1)
            continue
        return "saved" if saved.changed else "unchanged"
    raise ConcurrentChange(
        "画像正被频繁修改，稍后重试", en=f"profile {entity_type}:{entity_id}/{part} kept changing during its merge"
    )


def _without_opted_out(switches: Any, card: Card | None, problems: list[str]) -> tuple[Card | None, list[str]]:
    """An answer's card with what names an opted-out user cut out; none (with the problem named
    for the next try) when nothing of it is left."""
    if card is None:
        return None, problems
    kept = card_without_opted_out(switches, card)
    if not any(getattr(kept, section).strip() for section in SECTIONS):
        return None, [*problems, "卡片里只剩下已选择不被记忆的用户的内容：不要写这些人，只写卡片对象本身"]
    return kept, problems


class RebuildFailed(RuntimeError):
    """A rebuild got no usable card: the job is retried with backoff (its flag kept)."""


#: ``_rebuilt_card``'s answer when the model wrote nothing (a ``skip``): the part is deleted.
_SKIPPED = "skip"
#: ``_rebuilt_card``'s answer when both answers kept content no remaining fact supports.
_CARRIED = "residue"


async def _rebuilt_card(
    engine: CognitionEngine,
    report: MergeReport,
    context: dict[str, Any],
    current: Card,
    supporting: list[str],
    switches: Any,
) -> Card | str:
    """The model's rebuilt card: the answer, then one more with its problems named. ``_SKIPPED``
    when it wrote nothing, ``_CARRIED`` when its last answer still carried what the old version
    said and no remaining fact supports (``profile_residue``); ``RebuildFailed`` when no answer
    was usable otherwise."""
    limits = profiles.card_limits(engine)
    old = [*current.tags, *(getattr(current, section) for section in SECTIONS)]
    problems: list[str] = []
    carried = False
    for _attempt in range(2):
        report.llm_calls += 1
        answer, problems = await answer_or_problems(engine, context)
        carried = False
        if answer is not None:
            if answer.action == SKIP and not any(str(getattr(answer, name)).strip() for name in SECTIONS):
                return _SKIPPED  # nothing on the card is supported by the facts that are left
            card, problems = candidate(answer, replace(current, tags=[]), limits)  # no old tag kept unasked
            card, problems = _without_opted_out(switches, card, problems)
            if card is not None:
                kept = residue(old, [*card.tags, *(getattr(card, section) for section in SECTIONS)], supporting)
                if not kept.carries:
                    return card
                carried, problems = True, [kept.feedback()]
                # logged by count, never the spans: they may be the forgotten text
                log_event("profile_rebuild", level=logging.INFO, bot=current.bot_id,
                          entity=f"{current.entity_type}:{current.entity_id}", part=current.part,
                          residue=len(kept.spans))  # fmt: skip
        context["feedback"] = problems
    if carried:
        return _CARRIED
    log_event("profile_rebuild", bot=current.bot_id, entity=f"{current.entity_type}:{current.entity_id}",
              part=current.part, outcome="failed", refused="; ".join(problems)[:300])  # fmt: skip
    raise RebuildFailed(
        f"profile rebuild of {current.entity_type}:{current.entity_id}/{current.part} got no usable card"
    )


async def _rebuild_part(
    engine: CognitionEngine,
    report: MergeReport,
    bot_id: str,
    entity_type: str,
    entity_id: str,
    part: str,
    new_ids: list[int],
    is_open: bool,
    now: datetime,
) -> str:
    """One part rebuilt after a forget (the caller holds the entity's lock; the rule is in the
    module docstring); its outcome for ``MergeReport``."""
    shown = await _shown_in(engine, bot_id, entity_type, entity_id, part)

    def logged(outcome: str, **fields: Any) -> str:
        log_event("profile_rebuild", bot=bot_id, entity=f"{entity_type}:{entity_id}", part=part, outcome=outcome,
                  **fields)  # fmt: skip
        return outcome

    for _ in range(2):  # once more when another writer changed this part meanwhile
        current = await profiles.get(engine, bot_id, entity_type, entity_id, part)
        if current is None:  # deleted meanwhile: nothing holds the forgotten fact
            return logged("nothing")
        new_facts: list[MemoryRecord] = []
        if new_ids:
            async with engine.unit_of_work() as uow:
                rows = await repository.recallable_rows(uow.session, new_ids)
            new_facts = sorted((fact for fact in map(repository.to_record, rows) if shown(fact)), key=lambda f: f.id)
        observations = [fact.text for fact in new_facts]
        fresh = {fact.id for fact in new_facts}
        remaining: list[MemoryRecord] = []
        if is_open:
            remaining = [
                fact
                for fact in await part_facts(engine, bot_id, entity_type, entity_id, part)
                if fact.id not in fresh and shown(fact)
            ]
        query = observations or [current.evaluation, current.body]
        past = closest(remaining, query, engine.config.profiles.merge_top_k)
        facts = [*new_facts, *past]
        try:
            if not is_open or not facts:
                await profiles.clear(engine, current)
                return logged("cleared", reason="closed" if not is_open else "no_facts")
            if engine.llm is None:
                raise RuntimeError("the profile rebuild needs an LLM gateway")
            switches = await switch_state(engine, bot_id)  # an opted-out user is cut from what is shown and saved
            shown_card = card_without_opted_out(switches, current)
            context = prompt_context(engine, shown_card, entity_type, entity_id, part, observations, past, now)
            context["rebuild"] = True
            supporting = [*observations, *(fact.text for fact in remaining)]
            card = await _rebuilt_card(engine, report, context, current, supporting, switches)
            if isinstance(card, str):  # a skip, or the forgotten content kept twice: the part goes
                await profiles.clear(engine, current)
                return logged("cleared", reason=card)
            card = replace(card, source_ids=sorted(fact.id for fact in facts)[-SOURCE_IDS_KEEP:])
            saved = await profiles.save(engine, card, by="historian", now=now, expected=current, keep_replaced=False)
        except ConcurrentChange:
            log_event("profile_rebuild", level=logging.INFO, entity=f"{entity_type}:{entity_id}", part=part, redo=1)
            continue
        return logged("rebuilt" if saved.changed else "unchanged", facts=len(facts))
    raise ConcurrentChange(
        "画像正被频繁修改，稍后重试", en=f"profile {entity_type}:{entity_id}/{part} kept changing during its rebuild"
    )


def _part_open(engine: CognitionEngine, entity_type: str, entity_id: str, part: str, switches: Any) -> bool:
    """Whether this part may grow: no opt-out, and its own chat on (a group's; a user's part in
    one group, that group; a user's private part, their private chat)."""
    if entity_type == "group":
        return chat_open(engine, switches, Scope("group", entity_id))
    if switches.is_opted_out(entity_id):
        return False
    group_id = part_group(part)
    if group_id is not None:
        return chat_open(engine, switches, Scope("group", group_id))
    return part != "private" or chat_open(engine, switches, Scope("private", entity_id))


def job_parts(payload: dict[str, Any]) -> list[str]:
    """The parts a merge job names (new facts or a rebuild), in ``part_order``; each is checked
    against the job's entity before it is merged (``check_entity``)."""
    parts = payload.get("parts")
    named = [str(part) for part in parts] if isinstance(parts, dict) else []
    return sorted({*named, *rebuild_parts(payload)}, key=part_order)


async def process(engine: CognitionEngine, held: jobs.Lease, now: datetime | None = None) -> MergeReport:
    """Run one leased merge job to its end (every part it lists), then delete it. Raises on a
    failure worth retrying (the model unreachable, a card that kept changing)."""
    started = time.perf_counter()
    report = MergeReport(held.job_id)
    moment = aware_or_now(now)
    entity_type = str(held.payload.get("entity_type", ""))
    entity_id = str(held.payload.get("entity_id", ""))
    check_entity(entity_type, entity_id)
    if held.scope != entity_scope(entity_type, entity_id):
        raise InvalidInput("画像任务的对象与其会话不符", en=f"merge job {held.job_id} names another entity")
    parts = held.payload.get("parts", {})
    switches = await switch_state(engine, held.bot_id)
    enabled = engine.config.enable and engine.config.profiles.merge
    rebuilds = rebuild_parts(held.payload)
    for part in job_parts(held.payload):
        new_ids = memory_ids(parts.get(part)) if isinstance(parts, dict) else []
        if part in rebuilds:
            check_entity(entity_type, entity_id, part)
            is_open = enabled and _part_open(engine, entity_type, entity_id, part, switches)
            async with _entity_lock(engine, f"{held.bot_id}:{entity_type}:{entity_id}"):
                report.parts[part] = await _rebuild_part(
                    engine, report, held.bot_id, entity_type, entity_id, part, new_ids if is_open else [], is_open,
                    moment,
                )  # fmt: skip
            continue
        if not new_ids:
            continue
        check_entity(entity_type, entity_id, part)
        if not enabled or not _part_open(engine, entity_type, entity_id, part, switches):
            report.parts[part] = "off"
            continue
        if engine.llm is None:
            raise RuntimeError("the profile merge needs an LLM gateway")
        async with _entity_lock(engine, f"{held.bot_id}:{entity_type}:{entity_id}"):
            report.parts[part] = await _merge_part(
                engine, report, held.bot_id, entity_type, entity_id, part, new_ids, moment
            )
    if not report.llm_calls and not any(
        outcome in ("cleared", "rebuilt", "unchanged") for outcome in report.parts.values()
    ):
        report.outcome = "skipped"
    async with engine.unit_of_work() as uow:
        if await jobs.finish(uow.session, held):
            await uow.commit()
        else:
            report.outcome = "lost"
    log_event(
        "profile_merge",
        started,
        job=held.job_id,
        bot=held.bot_id,
        entity=f"{entity_type}:{entity_id}",
        outcome=report.outcome,
        calls=report.llm_calls,
        parts=",".join(f"{part}={outcome}" for part, outcome in report.parts.items()),
    )
    return report
