"""Queueing merges (``profiles.merge``): in the transaction that writes a job's facts
(``historian._commit``), ``queue_merges`` asks for one merge per card the facts touch
(``domain/profile_policy.merges_for``, under the scope policy in force: a group fact grows a
user's part in that group under ``strict``, their cross-group part under ``open``). The request
is a durable ``profile_merge`` job in the historian's queue, one pending job per (bot account,
entity): a group's job has the group's scope, a user's the user's private scope, and lists per
part the ids of the new facts (never their text: a fact forgotten or corrected before the merge
runs is simply not there then, and an erasure has no text to scrub from the queue). A pending
job is extended (its ids appended, its due time kept), else one is added that is due
``profiles.merge_window_seconds`` later: every job for one card part within the window becomes
one merge. Opted-out users get none.

**Rebuilds after a forget** (``queue_rebuilds``): in the transaction that removes facts (a forget,
``corrections.forget_memory``; a delete-all, ``erasure.delete_all``), every card part whose
``source_ids`` hold a removed id is flagged: the ids leave its ``source_ids`` (under the entity's
write lock), the kept revisions built from them are deleted (no restore brings them back), and
its entity's merge job lists the part under ``"rebuild"`` (a list of parts), extended when one is
pending, else added due at once. The flag and the card change commit or roll back with the
forget itself: a crash cannot forget the fact and lose the re-merge. Opt-outs and switches do not
stop a rebuild (it only takes away); ``profile_merge`` decides what a rebuild may write. A restore
that keeps a card part whose sources lost a forgotten fact asks for its rebuild the same way
(``queue_part_rebuilds``, in the restore's transaction).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..domain.events import ProfilesChanged
from ..domain.job_kinds import MERGE_JOB
from ..domain.profile_policy import entity_scope, merges_for
from ..domain.records import MemoryRecord, Scope
from ..store import jobs, profile_sources
from ..store import profiles as profile_store
from ..store.unit_of_work import UnitOfWork, take_write_lock
from .profiles import lock_entity
from .switches import switch_state

if TYPE_CHECKING:
    from .service import CognitionEngine

#: New facts (ids) a pending merge job carries (the newest), the query of its recall.
OBSERVATIONS_KEEP = 40


async def queue_merges(
    engine: CognitionEngine, uow: UnitOfWork, bot_id: str, scope: Scope, written: Sequence[MemoryRecord], now: datetime
) -> int:
    """In the caller's transaction (which writes ``written``): ask for the merges these facts
    call for, coalesced per entity. Returns the merge jobs added (not those extended)."""
    settings = engine.config.profiles
    if not settings.merge or not written:
        return 0
    wanted = merges_for(bot_id, scope, written, engine.config.scope_policy)
    if not wanted:
        return 0
    switches = await switch_state(engine, bot_id)
    added = 0
    for entity_type, entity_id in sorted(wanted):  # one lock order for every process
        if entity_type == "user" and switches.is_opted_out(entity_id):
            continue
        parts = wanted[(entity_type, entity_id)]
        target = entity_scope(entity_type, entity_id)
        await take_write_lock(uow.session, f"cognition:profile-merge:{bot_id}:{entity_type}:{entity_id}")
        pending = await jobs.pending_of(uow.session, MERGE_JOB, bot_id, target)
        if pending is not None:
            payload = _extended(payload_of(pending.payload), parts)
            if await jobs.replace_payload(uow.session, pending.id, payload, now):
                continue
        payload = _extended({"entity_type": entity_type, "entity_id": entity_id, "parts": {}}, parts)
        not_before = now + timedelta(seconds=settings.merge_window_seconds) if settings.merge_window_seconds else None
        await jobs.enqueue(uow.session, MERGE_JOB, bot_id, target, payload, now, not_before)
        added += 1
    return added


async def queue_rebuilds(
    engine: CognitionEngine, uow: UnitOfWork, bot_id: str, removed: Sequence[int], now: datetime
) -> int:
    """In the caller's transaction (which removes the facts ``removed``): flag every card part of
    the bot built from one of them and ask for its rebuild (see the module docstring). Returns
    the card parts flagged."""
    if not removed:
        return 0
    entities = sorted(
        {(row.entity_type, row.entity_id) for row in await profile_sources.citing(uow.session, bot_id, removed)}
    )
    flagged = 0
    for entity_type, entity_id in entities:  # one lock order for every process
        await lock_entity(uow, bot_id, entity_type, entity_id)
        await take_write_lock(uow.session, f"cognition:profile-merge:{bot_id}:{entity_type}:{entity_id}")
        gone = set(removed)
        rows = [
            row
            for row in await profile_store.get_rows(uow.session, bot_id, entity_type, entity_id)
            if gone.intersection(profile_sources.source_list(row.source_ids))
        ]
        if not rows:  # rebuilt or deleted before the lock was ours
            continue
        for row in rows:
            await profile_sources.drop_sources(uow.session, row, removed)
        parts = [row.part for row in rows]
        flagged += len(parts)
        await _ask_rebuild(uow, bot_id, entity_type, entity_id, parts, now)
    await profile_sources.drop_revisions_citing(uow.session, bot_id, removed)
    return flagged


async def queue_part_rebuilds(uow: UnitOfWork, parts: Sequence[tuple[str, str, str, str]], now: datetime) -> int:
    """In the caller's transaction: ask for the rebuild of these card parts ((bot account, entity
    type, entity id, part)), whose sources lost a forgotten fact elsewhere (a restore keeps their
    text as it was). Returns the entities asked for."""
    wanted: dict[tuple[str, str, str], set[str]] = {}
    for bot_id, entity_type, entity_id, part in parts:
        wanted.setdefault((bot_id, entity_type, entity_id), set()).add(part)
    for (bot_id, entity_type, entity_id), names in sorted(wanted.items()):  # one lock order
        await take_write_lock(uow.session, f"cognition:profile-merge:{bot_id}:{entity_type}:{entity_id}")
        await _ask_rebuild(uow, bot_id, entity_type, entity_id, sorted(names), now)
    return len(wanted)


async def _ask_rebuild(
    uow: UnitOfWork, bot_id: str, entity_type: str, entity_id: str, parts: Sequence[str], now: datetime
) -> None:
    """List ``parts`` under ``"rebuild"`` in the entity's pending merge job, or add one due at once."""
    target = entity_scope(entity_type, entity_id)
    pending = await jobs.pending_of(uow.session, MERGE_JOB, bot_id, target)
    if pending is None or not await jobs.replace_payload(
        uow.session, pending.id, _with_rebuild(payload_of(pending.payload), parts), now
    ):
        payload = _with_rebuild({"entity_type": entity_type, "entity_id": entity_id, "parts": {}}, parts)
        await jobs.enqueue(uow.session, MERGE_JOB, bot_id, target, payload, now)  # due at once
    uow.record(ProfilesChanged(bot_id, entity_type, entity_id))


def rebuild_parts(payload: dict[str, Any]) -> list[str]:
    """The parts a merge job must rebuild (a fact they were built from was forgotten)."""
    value = payload.get("rebuild")
    return [part for part in value if isinstance(part, str)] if isinstance(value, list) else []


def _with_rebuild(payload: dict[str, Any], parts: Sequence[str]) -> dict[str, Any]:
    return {**payload, "rebuild": sorted({*rebuild_parts(payload), *parts})}


def payload_of(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def memory_ids(value: Any) -> list[int]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, int) and not isinstance(item, bool)]


def _extended(payload: dict[str, Any], parts: dict[str, list[int]]) -> dict[str, Any]:
    known = payload.get("parts")
    merged = {str(part): memory_ids(ids) for part, ids in (known.items() if isinstance(known, dict) else [])}
    for part, ids in parts.items():
        merged[part] = list(dict.fromkeys([*merged.get(part, []), *ids]))[-OBSERVATIONS_KEEP:]
    return {**payload, "parts": merged}
