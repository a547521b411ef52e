"""Keep the raw keyword-index objects (FTS5 tables, tsvector tables; memories', cards' and
knowledge entries') out of alembic autogenerate.

nonebot-plugin-orm has no per-plugin hook; its only one is the global ``alembic_context``. We
chain an ``include_name`` filter there (orm itself does not use ``include_name``), so that
``orm check`` stays clean and a new revision never proposes dropping the keyword index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import keyword, knowledge_index, profile_index

RAW_TABLE_PREFIXES = keyword.RAW_TABLE_PREFIXES + profile_index.RAW_TABLE_PREFIXES + knowledge_index.RAW_TABLE_PREFIXES
RAW_INDEXES = keyword.RAW_INDEXES | profile_index.RAW_INDEXES | knowledge_index.RAW_INDEXES


def is_raw_keyword_object(name: str | None, type_: str) -> bool:
    if not name:
        return False
    if type_ == "table":
        return any(name == prefix or name.startswith(prefix + "_") for prefix in RAW_TABLE_PREFIXES)
    if type_ == "index":
        return name in RAW_INDEXES
    return False


def install() -> None:
    from nonebot_plugin_orm import plugin_config

    context: dict[str, Any] = plugin_config.alembic_context
    previous: Callable[..., bool] | None = context.get("include_name")
    if getattr(previous, "_cognition", False):
        return

    def include_name(name: str | None, type_: str, parent_names: Any) -> bool:
        if is_raw_keyword_object(name, type_):
            return False
        return previous(name, type_, parent_names) if previous else True

    include_name._cognition = True  # type: ignore[attr-defined]
    context["include_name"] = include_name
