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

**Rebuilding** after a forget is ``profile_rebuild``'s; what both read is ``profile_facts``'s.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cachetools import LRUCache

from ..domain.clock import aware_or_now
from ..domain.profile_policy import entity_scope
from ..domain.profiles import Card, check_entity, part_group, part_order
from ..domain.records import MemoryRecord, Scope
from ..errors import ConcurrentChange, InvalidInput, LLMNotConfigured
from ..logs import log_event
from ..store import jobs, repository
from . import profiles
from .profile_facts import (
    MergeReport,
    answer_without_opted_out,
    kept_sources,
    shown_in,
    visible_facts,
)
from .profile_prompt import SKIP, answer_or_problems, candidate, prompt_context
from .profile_queue import memory_ids, rebuild_parts
from .profile_rebuild import rebuild_part
from .switches import card_without_opted_out, chat_open, switch_state

if TYPE_CHECKING:
    from .service import CognitionEngine


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
    return kept_sources(current.source_ids if current else (), (fact.id for fact in facts))


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
    shown = await shown_in(engine, bot_id, entity_type, entity_id, part)

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
                card, problems = answer_without_opted_out(switches, card, problems, facts)
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
                report.parts[part] = await rebuild_part(
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
            raise LLMNotConfigured(en="the profile merge needs an LLM gateway")
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
