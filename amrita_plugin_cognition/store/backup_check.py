"""What a backup row must be before a restore writes it: the row a normal write would have made.

Every column by the model's own definition (present when it is required, of its type, within
its length; an id within the id range; a time in ISO 8601), the values the plugin's vocabulary
allows (scope kinds, statuses, importance, provenance, kinds, card parts), JSON columns of the
right shape, no id (or other primary key) or unique key twice, and the text limits of a normal write (``RowLimits``: a
fact's text within ``memory_max_chars``, a memo within ``memo_max_chars``, a pin within its limit,
each card section within its own). A restore checks the whole file first (``engine/backup.py``),
so a damaged file changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, String, UniqueConstraint

from ..domain.knowledge import ACTIVE, PENDING, REVIEW_OUTCOMES, STALE
from ..domain.profiles import check_entity
from ..domain.records import Importance, MemoryKind, MemoryStatus, Provenance, normalise_text
from ..errors import InvalidInput
from .backup import TABLES

#: The largest id SQLite's INTEGER and PostgreSQL's BIGINT hold.
MAX_ID = 2**63 - 1
#: Values a column may take, by (table, column).
ALLOWED: dict[tuple[str, str], frozenset[str]] = {
    **{
        (table, "scope_kind"): frozenset({"group", "private"})
        for table in ("memory", "memo", "memo_revision", "pin", "chat_switch")
    },
    ("memory", "status"): frozenset(status.value for status in MemoryStatus),
    ("memory", "importance"): frozenset(level.value for level in Importance),
    ("memory", "provenance"): frozenset(kind.value for kind in Provenance),
    ("memory", "kind"): frozenset(kind.value for kind in MemoryKind),
    **{(table, "entity_type"): frozenset({"user", "group"}) for table in ("profile", "profile_revision")},
    ("knowledge", "state"): frozenset({ACTIVE, STALE}),
    ("knowledge_suggestion", "state"): frozenset({PENDING, *REVIEW_OUTCOMES}),
    ("knowledge_suggestion", "scope_kind"): frozenset({"group", "private"}),
}
#: Tables whose rows name a card part: the key is checked as a card key (``profiles.check_entity``:
#: a group's ``group``; a user's ``group``, ``private`` or ``group:<id>``).
CARD_TABLES = frozenset({"profile", "profile_revision"})
#: JSON columns and the shape of their value.
JSON_SHAPES: dict[tuple[str, str], type] = {
    ("memory", "tags"): list,
    ("memory", "source"): dict,
    **{(table, "tags"): list for table in ("profile", "profile_revision")},
    **{(table, "source_ids"): list for table in ("profile", "profile_revision", "knowledge", "knowledge_revision")},
}


@dataclass(frozen=True, slots=True)
class RowLimits:
    """The text limits of a normal write: (table, column) -> (limit, the setting that sets it)."""

    text: dict[tuple[str, str], tuple[int, str]]


@dataclass(frozen=True, slots=True)
class RowProblem:
    """Why a row cannot be restored, in Chinese (for the operator) and English (for logs)."""

    zh: str
    en: str


def is_time(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _column_problem(table: str, column: Any, value: Any) -> RowProblem | None:
    name = column.key
    kind = column.type.python_type
    if value is None:
        if column.nullable:
            return None
        return RowProblem(f"{table}.{name} 不能为空", f"{table}.{name} is null")
    if kind is datetime:
        return (
            None
            if is_time(value)
            else RowProblem(
                f"{table}.{name} 不是 ISO 8601 时间：{str(value)[:40]!r}", f"{table}.{name}: not an ISO 8601 time"
            )
        )
    if isinstance(column.type, Boolean):
        return None if isinstance(value, bool) else RowProblem(f"{table}.{name} 应为 true/false", f"{table}.{name}")
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            return RowProblem(f"{table}.{name} 应为整数：{str(value)[:40]!r}", f"{table}.{name}: not an integer")
        if (name == "id" or name.endswith(("_id", "_by"))) and not 1 <= value <= MAX_ID:
            return RowProblem(f"{table}.{name} 超出编号范围：{value}", f"{table}.{name}: id out of range")
        return None
    if not isinstance(value, str):
        return RowProblem(f"{table}.{name} 应为文本", f"{table}.{name}: not text")
    length = column.type.length if isinstance(column.type, String) else None
    if length is not None and len(value) > length:
        size = len(value)
        return RowProblem(f"{table}.{name} 有 {size} 个字符，超过列宽 {length}", f"{table}.{name}: {size} > {length}")
    return _value_problem(table, name, value)


def _value_problem(table: str, name: str, value: str) -> RowProblem | None:
    allowed = ALLOWED.get((table, name))
    if allowed is not None and value not in allowed:
        choices = "、".join(sorted(allowed))
        return RowProblem(f"{table}.{name} 的值 {value[:40]!r} 不在 {choices} 之中", f"{table}.{name}: {value[:40]!r}")
    shape = JSON_SHAPES.get((table, name))
    if shape is not None:
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if not isinstance(parsed, shape):
            what = "列表" if shape is list else "对象"
            return RowProblem(f"{table}.{name} 应为 JSON {what}", f"{table}.{name}: not a JSON {shape.__name__}")
    return None


def _card_key_problem(table: str, values: dict[str, Any]) -> RowProblem | None:
    if table not in CARD_TABLES:
        return None
    key = (values.get("entity_type"), values.get("entity_id"), values.get("part"))
    try:
        check_entity(*(str(item) for item in key))
    except InvalidInput as error:
        return RowProblem(f"{table} 的画像键 {key!r} 无效：{error.zh}", f"{table}: invalid card key {key!r}")
    return None


@dataclass(slots=True)
class BackupCheck:
    """One file's rows checked in order (ids and unique keys are remembered across rows)."""

    limits: RowLimits
    counts: dict[str, int] = field(default_factory=dict)
    _seen: set[tuple[Any, ...]] = field(default_factory=set)

    def row(self, table: str, values: Any) -> RowProblem | None:
        """What is wrong with one row of ``table`` (None: it can be restored as it is)."""
        model = TABLES.get(table)
        if model is None:
            return None  # a table of a later version: not restored, not refused
        if not isinstance(values, dict):
            return RowProblem(f"{table} 的行不是 JSON 对象", f"{table}: row is not an object")
        for column in model.__table__.columns:
            if column.key not in values:
                if not column.nullable and column.default is None:
                    return RowProblem(f"{table} 的行缺少 {column.key}", f"{table}: missing {column.key}")
                continue
            problem = _column_problem(table, column, values[column.key])
            if problem is not None:
                return problem
        problem = (
            _card_key_problem(table, values)
            or self._limit_problem(table, values)
            or self._repeat_problem(table, model, values)
        )
        if problem is None:
            self.counts[table] = self.counts.get(table, 0) + 1
        return problem

    def _limit_problem(self, table: str, values: dict[str, Any]) -> RowProblem | None:
        for (limited, column), (limit, setting) in self.limits.text.items():
            if limited != table or not isinstance(values.get(column), str):
                continue
            size = len(normalise_text(values[column])) if table == "memory" else len(values[column])
            if size > limit:
                return RowProblem(
                    f"{table}.{column} 有 {size} 字，超过上限 {limit} 字（{setting}）",
                    f"{table}.{column}: {size} characters over the limit {limit} ({setting})",
                )
        if table == "memory" and not normalise_text(str(values.get("text", ""))):
            return RowProblem("memory.text 为空", "memory.text is empty")
        return None

    def _repeat_problem(self, table: str, model: Any, values: dict[str, Any]) -> RowProblem | None:
        keys: list[tuple[str, ...]] = [tuple(column.key for column in model.__table__.primary_key.columns)]
        keys += [
            tuple(column.key for column in constraint.columns)
            for constraint in model.__table__.constraints
            if isinstance(constraint, UniqueConstraint)
        ]
        for columns in keys:
            key = (table, columns, *(values.get(column) for column in columns))
            if key in self._seen:
                shown = "、".join(f"{column}={values.get(column)}" for column in columns)
                return RowProblem(f"{table} 中 {shown} 出现了两次", f"{table}: {shown} twice")
            self._seen.add(key)
        return None
