"""Correcting and forgetting facts, and listing them for the people who may see them.

A correction writes a new record and supersedes the old one only if it is still active (one
conditional update in the same transaction); its text is anchored and gated like a historian
fact, with its own date and source; forgetting removes a still-active fact together with
every version it replaced, leaving a barrier for each, and in the same transaction takes the
short-term traces of the messages they came from (the turn's note, its transcript turn, the jobs
made from it: ``domain/sources.py``) and flags the profile cards built from any of them for a
rebuild (``profile_queue.queue_rebuilds``). Of two
changes racing on one fact, one wins and the other is told, in Chinese, that the fact was changed
or deleted meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal
from zoneinfo import ZoneInfo

from ..domain import permissions
from ..domain.admission import AdmissionVerdict, admit
from ..domain.anchoring import AnchoredText, anchor
from ..domain.clock import aware_or_now
from ..domain.events import IndexWorkQueued, MemoriesChanged, NotesChanged, TranscriptChanged
from ..domain.gate import GateVerdict, check_fact
from ..domain.happened import SOURCE_KEY as HAPPENED_KEY
from ..domain.happened import from_mention
from ..domain.permissions import Operator, actor_name
from ..domain.records import (
    ChatContext,
    Importance,
    MemoryDraft,
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
    Provenance,
    Scope,
    content_hash,
)
from ..domain.sources import source_messages
from ..domain.visibility import listing_visibility
from ..errors import ConcurrentChange, InvalidInput
from ..logs import log_event
from ..store import cycle_runs, jobs, memory_sources, repository, short_term
from ..store.unit_of_work import UnitOfWork
from .editors import Editor, load_visible, lock_for
from .knowledge import source_superseded as knowledge_source_superseded
from .knowledge import sources_removed as knowledge_sources_removed
from .profile_queue import queue_rebuilds
from .switches import refuse_unwritable, switch_state
from .writes import REFUSAL_MESSAGES, checked_text, refuse_if_asked_not_to_remember, target_scope

if TYPE_CHECKING:
    from .service import CognitionEngine


async def update_memory(
    engine: CognitionEngine,
    context: ChatContext,
    memory_id: int,
    text: str,
    importance: Importance | None = None,
    tags: Sequence[str] | None = None,
    now: datetime | None = None,
    message_id: str = "",
    said: Sequence[str] = (),
) -> MemoryRecord:
    """Correct a fact: a new record supersedes the old one (history stays inspectable). ``said``:
    the texts of the messages the call answers; one that asks not to remember refuses the
    correction, as it refuses every other write from a tool (``writes.refuse_if_asked_not_to_remember``).

    The new text goes through what the historian's facts go through, without a model: its
    relative times are anchored at the correction's message time (``domain/anchoring``: 前天 →
    2026-11-28（周六）), its event date is what it names at the precision it names it (a day, a
    month, a year: ``happened.from_mention``, as for the historian's facts; none when it names none
    or a week, which the text then says: never the old fact's), the gate's verdict is its
    ``absolute``, and its source is the correction itself (the message ``message_id`` it
    answered, said at ``now``, by whom, superseding what). A line of
    conversation (kind ``turn``) is a quote of what was said when it was said: its times are not
    anchored at the correction and it keeps its date."""
    refuse_if_asked_not_to_remember(said)
    source: dict[str, object] = {
        "via": "correction",
        "messages": [message_id] if message_id else [],
        "edited_by": context.user_id,
    }
    # the text is the correction's, not an inference
    return await _correct(engine, Editor.of(context), memory_id, text, importance, tags, now, source)


async def revise_in_chat(
    engine: CognitionEngine,
    actor: Operator,
    bot_id: str,
    scope: Scope,
    memory_id: int,
    text: str,
    importance: Importance | None = None,
    tags: Sequence[str] | None = None,
    now: datetime | None = None,
) -> MemoryRecord:
    """The operator's rewording of a fact of ``scope`` (the consolidation cycle's): the path of
    ``update_memory`` (a new fact supersedes it, anchored, gated, admitted, barrier and opt-outs
    checked), its provenance ``consolidated`` and its source naming ``actor``."""
    source: dict[str, object] = {"via": "consolidation", "edited_by": actor.name}
    return await _correct(
        engine, Editor(actor, bot_id, scope), memory_id, text, importance, tags, now, source, Provenance.CONSOLIDATED
    )


async def correct_in_chat(
    engine: CognitionEngine,
    actor: Operator,
    bot_id: str,
    scope: Scope,
    memory_id: int,
    text: str,
    now: datetime | None = None,
) -> MemoryRecord:
    """The owner's correction of a fact of ``scope`` (the WebUI's page): ``update_memory``'s path
    (a new fact supersedes it, anchored, gated, admitted, barrier and opt-outs checked), its
    source a correction ``edited_by`` the operator's name, its provenance what the owner stated."""
    source: dict[str, object] = {"via": "correction", "messages": [], "edited_by": actor.name}
    return await _correct(engine, Editor(actor, bot_id, scope), memory_id, text, None, None, now, source)


async def _correct(
    engine: CognitionEngine,
    editor: Editor,
    memory_id: int,
    text: str,
    importance: Importance | None,
    tags: Sequence[str] | None,
    now: datetime | None,
    source: dict[str, object],
    provenance: Provenance = Provenance.USER_STATED,
) -> MemoryRecord:
    """A correction by ``editor`` (``update_memory``'s doc), its ``source`` completed here."""
    moment = aware_or_now(now)
    zone = ZoneInfo(engine.config.timezone)
    async with engine.unit_of_work() as uow:  # the kind never changes along a lineage: read before the lock
        found = await repository.get_rows(uow.session, editor.bot_id, [memory_id])
    quoted = memory_id in found and found[memory_id].kind == MemoryKind.TURN.value
    anchored, gate, verdict = await asyncio.to_thread(_anchored, engine, text, moment.astimezone(zone), not quoted)
    if not verdict.admit:
        raise InvalidInput(verdict.message)
    new_text = verdict.text  # a secret inside is replaced by [已隐去]
    switches = await switch_state(engine, editor.bot_id)
    async with engine.unit_of_work() as uow:
        await lock_for(uow, editor, memory_id)
        old = await load_visible(uow, editor, memory_id, engine.config.scope_policy)
        old_record = repository.to_record(old)
        permissions.check_correct(editor.actor, old_record)
        # the new text is new: not in a switched-off chat, nor by or about an opted-out user
        refuse_unwritable(
            engine,
            switches,
            editor.context,
            old_record.scope,
            (old.speaker_id, old.subject_id),
            [new_text],
            (old.speaker_name, old.subject_name),
        )
        digest = content_hash(editor.bot_id, old_record.scope, new_text)
        if digest in await repository.barred_hashes(uow.session, [digest]):
            raise InvalidInput(REFUSAL_MESSAGES["forgotten"])
        source = {**source, "said_at": moment.isoformat(), "supersedes": old.id, "absolute": gate.ok}
        if not gate.ok:
            source["warning"] = "not absolute: " + "、".join(problem.word for problem in gate.problems)[:200]
        happened = old_record.happened_at if old.kind == MemoryKind.TURN.value else None
        when = from_mention(anchored.day, anchored.precision, zone, anchored.last) if anchored.day else None
        if when is not None:  # a week keeps no date: the text says it
            happened = when.at
            source[HAPPENED_KEY] = when.precision.value
        draft = MemoryDraft(
            text=new_text,
            scope=old_record.scope,
            speaker_id=old.speaker_id,
            speaker_name=old.speaker_name,
            subject_id=old.subject_id,
            subject_name=old.subject_name,
            kind=old.kind,  # type: ignore[arg-type]
            tags=list(tags) if tags is not None else old_record.tags,
            importance=importance or old_record.importance,
            provenance=provenance,
            source=source,
            happened_at=happened,
        )
        (new_row,) = await repository.insert_memories(uow.session, editor.bot_id, [draft], moment)
        if not await repository.supersede(uow.session, old, new_row, moment):
            raise ConcurrentChange(f"记忆 #{memory_id} 已被修改或删除，本次更正未保存")
        await knowledge_source_superseded(uow, editor.bot_id, old.id, new_row.id, moment)
        uow.record(IndexWorkQueued(), MemoriesChanged(editor.bot_id))
        await uow.commit()
    log_event(
        "correct",
        memory_id=memory_id,
        new_id=new_row.id,
        scope=old_record.scope.key,
        absolute=gate.ok,
        by=actor_name(editor.actor),
    )
    return repository.to_record(new_row)


def _anchored(
    engine: CognitionEngine, text: str, local: datetime, anchoring: bool
) -> tuple[AnchoredText, GateVerdict, AdmissionVerdict]:
    """The correction's text anchored at its local message time, judged by the gate and by
    admission (CPU work, run off the event loop). Anchoring that would take it past the fact limit
    is not applied: the text is kept as said (no day), and the gate judges that."""
    said = checked_text(engine, text)
    anchored = anchor(said, local) if anchoring else AnchoredText(said, None, "", ())
    if len(anchored.text) > engine.config.memory_max_chars:
        anchored = AnchoredText(said, None, "", ())
    return anchored, check_fact(anchored.text), admit(anchored.text)


async def merge_head(engine: CognitionEngine, bot_id: str, memory_id: int) -> int:
    """What a forget of ``memory_id`` removes: a fact merged by a consolidation cycle (a merge's
    source, superseded by it) is forgotten through the current version of its merge, which takes
    the whole lineage with it (its other sources too: ``memory_sources.closure``); any other id is
    itself."""
    async with engine.unit_of_work() as uow:
        row = (await repository.get_rows(uow.session, bot_id, [memory_id])).get(memory_id)
        if row is None or row.status != MemoryStatus.SUPERSEDED.value:
            return memory_id
        head = await memory_sources.head_of(uow.session, memory_id)
    return head.id if head is not None and head.bot_id == bot_id else memory_id


async def forgettable(engine: CognitionEngine, context: ChatContext, memory_id: int) -> MemoryRecord:
    """The fact ``memory_id`` if this chat's speaker may forget it now (read only: the confirm
    step shows it before ``forget_memory`` runs); else why not, in Chinese. A merged fact's id
    names its merge (``merge_head``)."""
    memory_id = await merge_head(engine, context.bot_id, memory_id)
    async with engine.unit_of_work() as uow:
        record = repository.to_record(
            await load_visible(uow, context, memory_id, engine.config.scope_policy, expired_ok=True)
        )
    permissions.check_forget_memory(context, record)
    return record


async def forget_memory(
    engine: CognitionEngine, context: ChatContext, memory_id: int, now: datetime | None = None
) -> MemoryRecord:
    """Forget a fact and every version it replaced (a barrier for each: nothing comes back), and
    the short-term traces of the messages they were drawn from (``_remove_traces``). A merged
    fact and its merge go together, whichever is named (``merge_head``, ``repository.forget``).
    The consolidation cycles' summaries of the chat and a message they left unsent are blanked
    (``cycle_runs.blank_chat``: they may quote it)."""
    return await _forget(engine, Editor.of(context), memory_id, now)


async def forget_in_chat(
    engine: CognitionEngine, actor: Operator, bot_id: str, scope: Scope, memory_id: int, now: datetime | None = None
) -> MemoryRecord:
    """The operator's forget of a fact of ``scope`` (the consolidation cycle's, naming ``actor`` in
    the barriers' reason): ``forget_memory``'s path, lineage, traces, knowledge and cycle summaries included."""
    return await _forget(engine, Editor(actor, bot_id, scope), memory_id, now)


async def _forget(engine: CognitionEngine, editor: Editor, memory_id: int, now: datetime | None) -> MemoryRecord:
    memory_id = await merge_head(engine, editor.bot_id, memory_id)
    async with engine.unit_of_work() as uow:
        await lock_for(uow, editor, memory_id)
        row = await load_visible(uow, editor, memory_id, engine.config.scope_policy, expired_ok=True)
        record = repository.to_record(row)
        permissions.check_forget(editor.actor, record)
        moment = aware_or_now(now)
        lineage = await repository.whole_lineage(uow.session, row.id)
        versions = [record, *(repository.to_record(older) for older in lineage)]
        by = actor_name(editor.actor)
        removed = await repository.forget(uow.session, row, reason=f"by:{by}", now=moment)
        if not removed:
            raise ConcurrentChange(f"记忆 #{memory_id} 已被修改或删除，请重新查看")
        traces = await _remove_traces(uow, editor.bot_id, versions, moment)
        await queue_rebuilds(engine, uow, editor.bot_id, removed, moment)  # same commit as the forget
        await knowledge_sources_removed(uow, editor.bot_id, removed, moment)  # hidden or deleted with it
        # the chats' cycle summaries and a message not sent yet may quote it: blanked
        for scope in sorted({version.scope for version in versions}, key=lambda scope: scope.key):
            await cycle_runs.blank_chat(uow.session, editor.bot_id, scope)
        uow.record(IndexWorkQueued(), MemoriesChanged(editor.bot_id))
        await uow.commit()
    log_event("forget", memory_id=memory_id, scope=record.scope.key, versions=len(removed), by=by, **traces)
    return record


async def _remove_traces(
    uow: UnitOfWork, bot_id: str, versions: Sequence[MemoryRecord], now: datetime
) -> dict[str, int]:
    """What the forgotten versions were drawn from goes with them, in the forget's transaction:
    the ``end`` notes and the transcript turns of their source messages, and the historian jobs
    made from those messages (``domain/sources.py`` says why whole notes and turns). The chat is
    the fact's own (it was said there), which ``lock_for`` has locked."""
    by_chat: dict[Scope, set[str]] = {}
    for version in versions:
        by_chat.setdefault(version.scope, set()).update(source_messages(version.source))
    counts = {"notes": 0, "turns": 0, "jobs": 0}
    for scope, message_ids in by_chat.items():
        if not message_ids:
            continue
        removed = await short_term.remove_traces(uow.session, bot_id, scope, message_ids)
        counts["jobs"] += await jobs.drop_message_sources(uow.session, bot_id, scope, message_ids, removed.turns, now)
        counts["notes"] += removed.notes
        counts["turns"] += len(removed.turns)
        if removed.notes:
            uow.record(NotesChanged(bot_id, scope))
        if removed.turns:
            uow.record(TranscriptChanged(bot_id, scope))
    return counts


async def list_memories(
    engine: CognitionEngine,
    context: ChatContext,
    target: Literal["user", "group"],
    offset: int = 0,
    limit: int = 10,
) -> tuple[list[MemoryRecord], int]:
    """Newest first. ``user``: the speaker's own facts visible here; ``group``: the chat's."""
    if not 1 <= limit <= 50:
        raise InvalidInput("limit 必须在 1 到 50 之间")
    if offset < 0:
        raise InvalidInput("offset 不能为负数")
    target_scope(context, target)  # refuses a target that means nothing here
    query = repository.visible_memories_query(listing_visibility(context, target))
    async with engine.unit_of_work() as uow:
        return await repository.list_visible(uow.session, query, offset, limit)
