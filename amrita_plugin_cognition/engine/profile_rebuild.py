"""Rebuilding a card part (one listed under ``"rebuild"`` in the job: a fact it was built from was
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
- two unusable answers (another entity, empty, over a limit, a secret, malformed): the part is
  deleted as above too; kept for a retry it would go on showing the forgotten fact meanwhile;
- the model unreachable (``LLMUnavailable``): the job fails and is retried with the queue's
  backoff, keeping its rebuild flag; after the last attempt it stays failed (``jobs`` commands)
  until retried. Until then the part still shows what it said: no model, no rebuild.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..domain.profile_residue import residue
from ..domain.profiles import SECTIONS, Card
from ..domain.records import MemoryRecord
from ..errors import ConcurrentChange, LLMNotConfigured
from ..logs import log_event
from ..store import repository
from . import profiles
from .profile_facts import (
    SOURCE_IDS_KEEP,
    MergeReport,
    answer_without_opted_out,
    closest,
    part_facts,
    shown_in,
)
from .profile_prompt import SKIP, answer_or_problems, candidate, prompt_context
from .switches import card_without_opted_out, switch_state

if TYPE_CHECKING:
    from .service import CognitionEngine


#: ``_rebuilt_card``'s answer when the model wrote nothing (a ``skip``): the part is deleted.
_SKIPPED = "skip"
#: ``_rebuilt_card``'s answer when both answers kept content no remaining fact supports.
_CARRIED = "residue"
#: ``_rebuilt_card``'s answer when neither answer could be used at all.
_UNUSABLE = "unusable"


async def _rebuilt_card(
    engine: CognitionEngine,
    report: MergeReport,
    context: dict[str, Any],
    current: Card,
    supporting: list[str],
    switches: Any,
    facts: Sequence[MemoryRecord],
) -> Card | str:
    """The model's rebuilt card: the answer, then one more with its problems named. ``_SKIPPED``
    when it wrote nothing, ``_CARRIED`` when its last answer still carried what the old version
    said and no remaining fact supports (``profile_residue``), ``_UNUSABLE`` when neither answer
    was usable otherwise (another entity, empty, over a limit, a secret, malformed)."""
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
            card, problems = answer_without_opted_out(switches, card, problems, facts)
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
              part=current.part, unusable="; ".join(problems)[:300])  # fmt: skip
    return _UNUSABLE


async def rebuild_part(
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
    shown = await shown_in(engine, bot_id, entity_type, entity_id, part)

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
                raise LLMNotConfigured(en="the profile rebuild needs an LLM gateway")
            switches = await switch_state(engine, bot_id)  # an opted-out user is cut from what is shown and saved
            shown_card = card_without_opted_out(switches, current)
            context = prompt_context(engine, shown_card, entity_type, entity_id, part, observations, past, now)
            context["rebuild"] = True
            supporting = [*observations, *(fact.text for fact in remaining)]
            card = await _rebuilt_card(engine, report, context, current, supporting, switches, facts)
            if isinstance(card, str):  # a skip, the forgotten content kept twice, no usable answer: the part goes
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
