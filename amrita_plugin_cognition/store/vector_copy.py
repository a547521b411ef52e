"""The vector index's copy in SQL (``cognition_memory_vector``): each fact's stored vector per
generation, as float16 bytes, in the caller's transaction.

Derived, like the index itself: the outbox drain writes and removes rows right after the index
call (one outbox row completes only when both went through), the repair compares and refills
them, an erasure removes them with the fact. A generation's copy is only read once the repair has
marked it complete (``mark_complete``): before that (a bank made before the copy existed, a
reindex half way), recall asks the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import delete, select, union
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from ..domain.records import MemoryStatus, Scope
from . import meta
from .models import MemoryRow, MemoryVectorRow

#: How the vectors are kept: half precision halves the table against float32; a cosine moves by
#: about 1e-3 (``tests/integration/test_exact_search.py`` ranks a chat both ways: same order).
STORED_DTYPE = np.dtype("<f2")
#: Ids per statement, and rows per insert (six values each: under SQLite's oldest bind limit, 999).
_CHUNK = 500
_ROWS = 150
_MARK = "vector_copy:"


def complete_key(generation: int) -> str:
    """The meta key that says a generation's copy holds every vector the index holds."""
    return f"{_MARK}{generation}"


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).astype(STORED_DTYPE).tobytes()


def decode(blobs: Sequence[bytes]) -> np.ndarray:
    """Rows of stored bytes as an n x d float32 matrix (0 x 0 when there are none)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    matrix = np.frombuffer(b"".join(blobs), dtype=STORED_DTYPE).reshape(len(blobs), -1)
    return matrix.astype(np.float32)


async def put(
    session: AsyncSession, generation: int, bot_id: str, scope: Scope, ids: Sequence[int], vectors: np.ndarray
) -> None:
    """Store (or replace) the vectors of one chat's facts in ``generation``: an upsert, so that a
    drain and the repair writing the same fact at once both succeed. The copies of facts no longer
    active are taken out again in the same transaction. The drain
    read its rows and called the index before this, and a fact forgotten or erased meanwhile (its
    copy removed by that commit) must not come back. Checking first would not do on SQLite, whose
    driver opens the transaction only at the first write; once the insert holds the write lock, the
    clean-up reads what every other writer has committed, and a later forget deletes these rows."""
    rows = [
        {
            "generation": generation,
            "memory_id": int(memory_id),
            "bot_id": bot_id,
            "scope_kind": scope.kind,
            "scope_id": scope.id,
            "vector": encode(vector),
        }
        for memory_id, vector in zip(ids, vectors, strict=True)
    ]
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    for start in range(0, len(rows), _ROWS):
        statement = insert(MemoryVectorRow).values(rows[start : start + _ROWS])
        await session.execute(
            statement.on_conflict_do_update(
                index_elements=["generation", "memory_id"],
                set_={
                    "bot_id": statement.excluded.bot_id,
                    "scope_kind": statement.excluded.scope_kind,
                    "scope_id": statement.excluded.scope_id,
                    "vector": statement.excluded.vector,
                },
            )
        )
    active = select(MemoryRow.id).where(
        MemoryRow.id == MemoryVectorRow.memory_id, MemoryRow.status == MemoryStatus.ACTIVE.value
    )
    for start in range(0, len(rows), _CHUNK):
        chunk = [row["memory_id"] for row in rows[start : start + _CHUNK]]
        await session.execute(
            delete(MemoryVectorRow)
            .where(MemoryVectorRow.generation == generation, MemoryVectorRow.memory_id.in_(chunk), ~active.exists())
            .execution_options(synchronize_session=False)
        )


async def remove(session: AsyncSession, generation: int | None, ids: Sequence[int]) -> None:
    """Remove the copies of ``ids`` in ``generation`` (``None``: in every generation)."""
    for start in range(0, len(ids), _CHUNK):
        chunk = [int(memory_id) for memory_id in ids[start : start + _CHUNK]]
        statement = delete(MemoryVectorRow).where(MemoryVectorRow.memory_id.in_(chunk))
        if generation is not None:
            statement = statement.where(MemoryVectorRow.generation == generation)
        await session.execute(statement)


async def chat(
    session: AsyncSession, generation: int, bot_id: str, scope: Scope, limit: int | None = None
) -> tuple[list[int], np.ndarray]:
    """Up to ``limit`` (None: all) of one chat's stored vectors: (memory ids, an n x d float32 matrix)."""
    rows = (
        await session.execute(
            select(MemoryVectorRow.memory_id, MemoryVectorRow.vector)
            .where(
                MemoryVectorRow.generation == generation,
                MemoryVectorRow.bot_id == bot_id,
                MemoryVectorRow.scope_kind == scope.kind,
                MemoryVectorRow.scope_id == scope.id,
            )
            .limit(limit)
        )
    ).all()
    return [int(row[0]) for row in rows], decode([row[1] for row in rows])


async def person_in_groups(
    session: AsyncSession, generation: int, bot_id: str, person: str, most: int
) -> tuple[list[int], list[str], np.ndarray] | None:
    """The stored vectors of the active group facts said by or about ``person`` (what the index's
    filter on ``speaker_id`` or ``subject_id`` finds), in every group of the bot at once: (memory
    ids, their groups, an n x d float32 matrix); None when they are more than ``most``. The ids come
    from the memory table's two person indices, then the copy's rows by primary key: two statements
    whose plans need no statistics (one joined statement was planned as a scan of the copy on a
    PostgreSQL table not yet analysed)."""
    mine = (MemoryRow.bot_id == bot_id, MemoryRow.scope_kind == "group", MemoryRow.status == MemoryStatus.ACTIVE.value)
    theirs = union(
        select(MemoryRow.id).where(MemoryRow.speaker_id == person, *mine),
        select(MemoryRow.id).where(MemoryRow.subject_id == person, *mine),
    ).limit(most + 1)
    wanted = [int(memory_id) for memory_id in (await session.execute(theirs)).scalars()]
    if len(wanted) > most:
        return None
    rows: list[Any] = []
    for start in range(0, len(wanted), _CHUNK):
        rows += (
            await session.execute(
                select(MemoryVectorRow.memory_id, MemoryVectorRow.scope_id, MemoryVectorRow.vector).where(
                    MemoryVectorRow.generation == generation,
                    MemoryVectorRow.memory_id.in_(wanted[start : start + _CHUNK]),
                )
            )
        ).all()
    return [int(row[0]) for row in rows], [str(row[1]) for row in rows], decode([row[2] for row in rows])


async def stored_ids(session: AsyncSession, generation: int) -> dict[tuple[str, Scope], set[int]]:
    """Every id the copy holds in ``generation``, per (bot, chat)."""
    found: dict[tuple[str, Scope], set[int]] = {}
    rows = await session.stream(
        select(
            MemoryVectorRow.bot_id, MemoryVectorRow.scope_kind, MemoryVectorRow.scope_id, MemoryVectorRow.memory_id
        ).where(MemoryVectorRow.generation == generation)
    )
    async for bot_id, kind, scope_id, memory_id in rows:
        found.setdefault((bot_id, Scope(kind, scope_id)), set()).add(int(memory_id))  # type: ignore[arg-type]
    return found


async def drop_other_generations(session: AsyncSession, keep: int) -> None:
    """Remove every generation's copy but ``keep``'s, and their completeness marks."""
    await session.execute(delete(MemoryVectorRow).where(MemoryVectorRow.generation != keep))
    for key in await meta.keys_with_prefix(session, _MARK):
        if key != complete_key(keep):
            await meta.remove(session, key)


async def is_complete(session: AsyncSession, generation: int) -> bool:
    return await meta.get(session, complete_key(generation)) is not None


async def mark_complete(session: AsyncSession, generation: int) -> None:
    await meta.put(session, complete_key(generation), "1")
