"""The store about itself: key-value facts (fingerprint, generation, cursors) and LLM usage counters."""

from __future__ import annotations

from datetime import datetime

from nonebot_plugin_orm import Model
from sqlalchemy import BigInteger, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .types import UTCDateTime


class MetaRow(Model):
    """Key-value facts about the store itself: embedding fingerprint, vector generation."""

    __tablename__ = "cognition_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class LLMUsageRow(Model):
    """What the plugin's LLM calls did, per day (in the configured zone) and purpose, summed over
    every process that shares the database (the bot, the CLI): what ``status`` shows. One upsert
    per call; the calls are background work (historian, card merges), never the chat's turn."""

    __tablename__ = "cognition_llm_usage"

    #: ``YYYY-MM-DD`` in the configured time zone.
    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    #: ``historian_rewrite``, ``historian_extract``, ``profile_merge`` …
    purpose: Mapped[str] = mapped_column(String(32), primary_key=True)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    retries: Mapped[int] = mapped_column(Integer, default=0)
    timeouts: Mapped[int] = mapped_column(Integer, default=0)
    invalid_outputs: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    #: English reason of the day's last failed call ("" when none failed).
    last_error: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
