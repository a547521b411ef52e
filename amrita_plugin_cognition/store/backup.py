"""The store side of backups: every table read in id pages, and a restore that replaces the
plugin's rows in one transaction while every forget barrier stays in force.

Knowledge entries, their revisions and the suggestions are restored the same way (``_add_knowledge``:
an entry keeping some sources comes back hidden until re-derived, as a forget leaves it).

Profile cards and their revisions are restored too, checked against the barriers (those of the
file and those made since) and the memories skipped as forgotten: a kept revision built from any
forgotten fact is not restored, nor is a card whose every source was forgotten (its text came
from those facts). A card that keeps some of its sources is restored without the forgotten ids,
its text as it was, and counted (``cards_trimmed``, the parts listed in ``trimmed``); the engine
asks for their rebuild in the same transaction (``profile_queue.queue_part_rebuilds``), as a
forget does.

The chat switches, the opt-outs and the audit records travel too, but a restore merges them with
today's instead of replacing them (``merge_kept``): a choice made or an erasure recorded after the
backup must outlive it. Once the rows are in, ``store/restore_erasures.py`` replays the delete-alls
the audit records since the backup."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.knowledge import STALE
from ..domain.records import MemoryStatus
from . import keyword, knowledge_index, profile_index, restore_erasures
from .models import (
    AuditRow,
    BarrierRow,
    ChatSwitchRow,
    KnowledgeRevisionRow,
    KnowledgeRow,
    KnowledgeSuggestionRow,
    MemoRevisionRow,
    MemoRow,
    MemoryRow,
    MemorySourceRow,
    OptOutRow,
    OutboxRow,
    PinRow,
    ProfileRevisionRow,
    ProfileRow,
)
from .turns import index_keywords

#: Tables a backup carries, by the name used in the file.
TABLES: dict[str, Any] = {
    "memory": MemoryRow,
    "memory_source": MemorySourceRow,
    "memo": MemoRow,
    "memo_revision": MemoRevisionRow,
    "pin": PinRow,
    "barrier": BarrierRow,
    "profile": ProfileRow,
    "profile_revision": ProfileRevisionRow,
    "knowledge": KnowledgeRow,
    "knowledge_revision": KnowledgeRevisionRow,
    "knowledge_suggestion": KnowledgeSuggestionRow,
    "chat_switch": ChatSwitchRow,
    "optout": OptOutRow,
    "audit": AuditRow,
}
#: Tables merged with today's rows on restore, never emptied (a file of version 1 has none of them).
MERGED_TABLES = ("chat_switch", "optout", "audit")
#: The tables a restore empties and fills from the file.
REPLACED_TABLES = tuple(table for table in TABLES if table not in MERGED_TABLES)
#: The card tables: their rows are checked against the barriers once the whole file is read.
CARD_TABLES = ("profile", "profile_revision")
#: The knowledge tables checked the same way (an entry, then its kept versions).
KNOWLEDGE_TABLES = ("knowledge", "knowledge_revision")


def encode(row: Any) -> dict[str, Any]:
    values = {}
    for column in row.__table__.columns:
        value = getattr(row, column.key)
        values[column.key] = value.isoformat() if isinstance(value, datetime) else value
    return values


def decode(model: Any, values: dict[str, Any]) -> Any:
    decoded = {}
    for column in model.__table__.columns:
        if column.key not in values:
            continue
        value = values[column.key]
        if value is not None and column.type.python_type is datetime:
            value = datetime.fromisoformat(value)
        decoded[column.key] = value
    return model(**decoded)


def _has_id(model: Any) -> bool:
    return "id" in model.__table__.columns


async def page(session: AsyncSession, table: str, position: int, size: int) -> tuple[list[dict[str, Any]], int]:
    """One page of ``table`` from ``position`` (the last id read; for a table keyed otherwise, the
    rows read so far, in key order) and the position after it."""
    model = TABLES[table]
    if _has_id(model):
        query = select(model).where(model.id > position).order_by(model.id)
    else:
        query = select(model).order_by(*model.__table__.primary_key.columns).offset(position)
    rows = [encode(row) for row in (await session.execute(query.limit(size))).scalars()]
    if not rows:
        return rows, position
    return rows, rows[-1]["id"] if _has_id(model) else position + len(rows)


@dataclass(slots=True)
class Restore:
    """One restore in progress, inside the caller's transaction: ``begin``, ``add`` every row of
    the file, ``finish``."""

    session: AsyncSession
    restored: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    skipped_forgotten: int = 0
    #: Cards whose every source is forgotten and revisions with a forgotten source: not restored.
    cards_dropped: int = 0
    #: Cards restored without some of their sources (forgotten), their text unchanged.
    cards_trimmed: int = 0
    #: Those cards: (bot, entity type, entity id, part).
    trimmed: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: Knowledge entries whose every source is forgotten and kept versions citing a forgotten
    #: fact (or of such an entry): not restored.
    knowledge_dropped: int = 0
    #: Knowledge entries restored without their forgotten sources, hidden until re-derived.
    knowledge_hidden: int = 0
    _barriers: list[BarrierRow] = field(default_factory=list)
    _barred_hashes: set[str] = field(default_factory=set)
    _barred_ids: set[int] = field(default_factory=set)
    _kept: set[tuple[int | None, str]] = field(default_factory=set)
    _skipped_ids: set[int] = field(default_factory=set)
    _cards: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _merged: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: Lineage rows of merges, restored at ``finish`` when neither side was forgotten.
    _lineage: list[dict[str, Any]] = field(default_factory=list)
    #: Nicknames seen in the facts skipped as forgotten, by bot and user (a replayed erasure
    #: looks for them: ``restore_erasures``).
    forgotten_names: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    async def begin(self) -> None:
        """Remember today's barriers, then empty the plugin's replaced tables."""
        self._barriers = list((await self.session.execute(select(BarrierRow))).scalars())
        self._barred_hashes = {row.content_hash for row in self._barriers}
        self._barred_ids = {row.memory_id for row in self._barriers if row.memory_id is not None}
        for model in (OutboxRow, *(TABLES[table] for table in REPLACED_TABLES)):
            await self.session.execute(delete(model))
        await keyword.clear(self.session)

    def add(self, items: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Rows of the backup; a fact forgotten by id or content (then or since) is skipped. Cards
        wait for ``finish`` (they are checked against every barrier of the file)."""
        for table, values in items:
            if table not in TABLES:
                continue
            if table == "memory" and (
                values["content_hash"] in self._barred_hashes or values["id"] in self._barred_ids
            ):
                self.skipped_forgotten += 1
                self._skipped_ids.add(values["id"])
                restore_erasures.note_names(self.forgotten_names, values)
                continue
            if table in MERGED_TABLES:
                self._merged.append((table, values))
                continue
            if table == "memory_source":
                self._lineage.append(values)
                continue
            if table in CARD_TABLES or table in KNOWLEDGE_TABLES:
                self._cards.append((table, values))
                continue
            if table == "barrier":
                self._kept.add((values.get("memory_id"), values["content_hash"]))
            self.session.add(decode(TABLES[table], values))
            self.restored[table] += 1

    async def finish(self) -> int:
        """Put back the barriers made after the backup, rebuild the keyword index and the id
        sequences. Returns the number of memory rows now stored."""
        self._add_cards()
        self._add_lineage()
        await self._merge_kept()
        for barrier in self._barriers:
            if (barrier.memory_id, barrier.content_hash) not in self._kept:
                self.session.add(
                    BarrierRow(
                        memory_id=barrier.memory_id,
                        content_hash=barrier.content_hash,
                        bot_id=barrier.bot_id,
                        reason=barrier.reason,
                        created_at=barrier.created_at,
                    )
                )
        await self.session.flush()
        active = list(
            (
                await self.session.execute(
                    select(MemoryRow).where(MemoryRow.status == MemoryStatus.ACTIVE.value).order_by(MemoryRow.id)
                )
            ).scalars()
        )
        await index_keywords(self.session, active)
        await profile_index.rebuild(self.session)  # the cards' keyword rows (their vectors: reindex)
        await knowledge_index.rebuild(self.session)  # the shown entries' keyword rows (vectors: reindex)
        await _reset_sequences(self.session)
        return int((await self.session.execute(select(func.count()).select_from(MemoryRow))).scalar_one())

    def _add_cards(self) -> None:
        forgotten = self._barred_ids | self._skipped_ids | {memory_id for memory_id, _ in self._kept if memory_id}
        self._add_knowledge(forgotten)
        for table, values in self._cards:
            sources = _source_ids(values.get("source_ids"))
            left = [item for item in sources if item not in forgotten]
            if len(left) < len(sources):
                if not left or table == "profile_revision":
                    self.cards_dropped += 1
                    continue
                self.cards_trimmed += 1
                self.trimmed.append((values["bot_id"], values["entity_type"], values["entity_id"], values["part"]))
                values = {**values, "source_ids": json.dumps(left)}
            self.session.add(decode(TABLES[table], values))
            self.restored[table] += 1
        self._cards = []

    def _add_lineage(self) -> None:
        """A merge's lineage rows, unless the merge or the source was forgotten (a forget takes
        both sides: ``memory_sources.closure``; a row naming a forgotten id would point at nothing)."""
        forgotten = self._barred_ids | self._skipped_ids | {memory_id for memory_id, _ in self._kept if memory_id}
        for values in self._lineage:
            if values.get("memory_id") in forgotten or values.get("source_id") in forgotten:
                continue
            self.session.add(decode(MemorySourceRow, values))
            self.restored["memory_source"] += 1
        self._lineage = []

    def _add_knowledge(self, forgotten: set[int]) -> None:
        """Knowledge entries as a forget leaves them: one whose every source is forgotten is not
        restored; one that keeps some is restored without the others and hidden (``stale``) until
        re-derived; a kept version citing a forgotten fact, or of an entry not restored, is not
        restored. Entries first, then versions (whatever order the file has)."""
        dropped: set[Any] = set()
        for wanted in KNOWLEDGE_TABLES:
            for table, values in self._cards:
                if table != wanted:
                    continue
                sources = _source_ids(values.get("source_ids"))
                left = [item for item in sources if item not in forgotten]
                if table == "knowledge_revision" and (len(left) < len(sources) or values.get("entry_id") in dropped):
                    self.knowledge_dropped += 1
                    continue
                if len(left) < len(sources):
                    if not left:
                        self.knowledge_dropped += 1
                        dropped.add(values.get("id"))
                        continue
                    self.knowledge_hidden += 1
                    values = {**values, "source_ids": json.dumps(left), "state": STALE}
                self.session.add(decode(TABLES[table], values))
                self.restored[table] += 1
        self._cards = [(table, values) for table, values in self._cards if table not in KNOWLEDGE_TABLES]

    async def _merge_kept(self) -> None:
        """Today's switches, opt-outs and audit records with the file's: a key or id only in the
        file is added; a switch or opt-out in both keeps the newer (an opt-out is never dropped:
        an opt-in since the backup deleted its row, so the file's comes back)."""
        switches = {
            (row.bot_id, row.scope_kind, row.scope_id): row
            for row in (await self.session.execute(select(ChatSwitchRow))).scalars()
        }
        optouts = {(row.bot_id, row.user_id): row for row in (await self.session.execute(select(OptOutRow))).scalars()}
        audited = set((await self.session.execute(select(AuditRow.id))).scalars())
        for table, values in self._merged:
            row = decode(TABLES[table], values)
            if table == "audit":
                if row.id in audited:
                    continue
                audited.add(row.id)
            elif table == "chat_switch":
                key = (row.bot_id, row.scope_kind, row.scope_id)
                if key in switches:
                    if restore_erasures.newer(row.changed_at, switches[key].changed_at):
                        current = switches[key]
                        current.memory_on, current.changed_by, current.changed_at = (
                            row.memory_on, row.changed_by, row.changed_at,
                        )  # fmt: skip
                        self.restored[table] += 1
                    continue
                switches[key] = row
            else:
                user_key = (row.bot_id, row.user_id)
                if user_key in optouts:
                    if restore_erasures.newer(row.opted_out_at, optouts[user_key].opted_out_at):
                        optouts[user_key].opted_out_at = row.opted_out_at
                    continue
                optouts[user_key] = row
            self.session.add(row)
            self.restored[table] += 1
        self._merged = []


def _source_ids(text: Any) -> list[Any]:
    try:
        value = json.loads(text or "[]")
    except (TypeError, ValueError):
        return []
    return value if isinstance(value, list) else []


async def _reset_sequences(session: AsyncSession) -> None:
    if session.get_bind().dialect.name != "postgresql":
        return
    for model in (*(model for model in TABLES.values() if _has_id(model)), OutboxRow):
        table = model.__tablename__
        highest = f"COALESCE((SELECT MAX(id) FROM {table}), 0)"
        if model is MemoryRow:  # ids of forgotten memories are never handed out again
            highest = f"GREATEST({highest}, COALESCE((SELECT MAX(memory_id) FROM cognition_barrier), 0))"
        await session.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {highest} + 1, false)"))
