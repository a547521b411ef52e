"""A copy of each fact's stored vector in SQL, so that a small chat is searched exactly there."""

from __future__ import annotations

from nonebot_plugin_orm import Model
from sqlalchemy import Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from .types import ID


class MemoryVectorRow(Model):
    """The vector a generation of the index stores for one fact, as half-precision bytes
    (``store/vector_copy.py``). Derived like the index: written and removed by the outbox drain
    after the index call, checked and refilled by the repair, removed with the fact by an erasure.
    Recall reads a chat's rows and ranks them exactly when the chat is small (``engine/exact_search.py``)."""

    __tablename__ = "cognition_memory_vector"
    __table_args__ = (Index("ix_cognition_memory_vector_chat", "generation", "bot_id", "scope_kind", "scope_id"),)

    generation: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    memory_id: Mapped[int] = mapped_column(ID, primary_key=True, autoincrement=False)
    bot_id: Mapped[str] = mapped_column(String(32))
    scope_kind: Mapped[str] = mapped_column(String(16))
    scope_id: Mapped[str] = mapped_column(String(64))
    #: float16, little-endian, the embedder's whole row (both models' parts when there are two).
    vector: Mapped[bytes] = mapped_column(LargeBinary)
