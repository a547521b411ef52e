"""Key-value facts about the store itself: embedding fingerprint, vector generation."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from .models import MetaRow

GENERATION = "vector_generation"
FINGERPRINT = "embedding_fingerprint"


async def get(session: AsyncSession, key: str) -> str | None:
    row = await session.get(MetaRow, key)
    return None if row is None else row.value


async def put(session: AsyncSession, key: str, value: str) -> None:
    row = await session.get(MetaRow, key)
    if row is None:
        session.add(MetaRow(key=key, value=value))
    else:
        row.value = value


async def remove(session: AsyncSession, key: str) -> None:
    row = await session.get(MetaRow, key)
    if row is not None:
        await session.delete(row)


async def keys_with_prefix(session: AsyncSession, prefix: str) -> list[str]:
    rows = await session.execute(select(MetaRow.key).where(MetaRow.key.startswith(prefix, autoescape=True)))
    return list(rows.scalars())
