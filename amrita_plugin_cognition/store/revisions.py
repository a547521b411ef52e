"""Kept versions: after a version is kept, only the newest of its owner stay (memo revisions per
chat, card revisions per card part)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.ext.asyncio import AsyncSession


async def keep_newest(session: AsyncSession, model: Any, owner: ColumnElement[bool], keep: int) -> None:
    """Delete the rows of ``model`` matching ``owner`` except the newest ``keep`` (by id; 0 keeps
    none), in the caller's transaction."""
    newest = select(model.id).where(owner).order_by(model.id.desc()).limit(keep)
    keep_ids = list((await session.scalars(newest)).all())
    await session.execute(delete(model).where(owner, model.id.not_in(keep_ids)))
