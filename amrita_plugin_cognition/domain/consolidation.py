"""The consolidation pre-pass's policy, without the model: which members of an exact-duplicate
cluster are merged, and what the merged memory keeps of them.

An exact cluster (``domain/clusters.py``: the same text once width, case, spaces and punctuation
are folded) is merged outright, but only among members that state the same fact in every other
respect: the same kind, said by the same person about the same person, happening at the same time
(the same words said of two different days are two events). A conversation line (kind ``turn``)
is a quote of one moment and is never merged. Each such group of two or more becomes one
``MergePlan``:

* the text of the newest member (its latest wording);
* the highest importance, the union of the tags (first seen first), ``keep`` if any member had it;
* ``recorded_at`` the earliest (when the fact was first learned); ``updated_at`` the latest (the
  decay clock runs from when it was last said: a merge neither restarts nor shortens it);
* the names as the newest member gives them.

A **judged merge** (``judged_merge``: the cycle's model decided that the members of a near cluster
state one fact) keeps the same values but the text, the importance and the tags, which are the
model's; like an exact merge it takes two or more facts of one chat and never a conversation line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ..errors import InvalidInput
from .records import Importance, MemoryKind, MemoryRecord, Scope

_RANK = {Importance.LOW: 0, Importance.MEDIUM: 1, Importance.HIGH: 2}


@dataclass(frozen=True, slots=True)
class MergePlan:
    """One merge of exact duplicates: the sources (oldest id first) and the merged memory's values."""

    source_ids: tuple[int, ...]
    scope: Scope
    text: str
    kind: str
    speaker_id: str
    speaker_name: str
    subject_id: str
    subject_name: str
    importance: Importance
    tags: tuple[str, ...]
    happened_at: datetime | None
    recorded_at: datetime
    updated_at: datetime
    keep: bool
    #: The model's merge of a near cluster (``judged_merge``), not an exact one.
    judged: bool = False


def _same_fact(record: MemoryRecord) -> tuple[str, str, str, datetime | None]:
    return (str(record.kind), record.speaker_id, record.subject_id or record.speaker_id, record.happened_at)


def exact_merges(members: Sequence[MemoryRecord]) -> list[MergePlan]:
    """The merges of one exact cluster's active members (see the module's docstring)."""
    groups: dict[tuple[str, str, str, datetime | None], list[MemoryRecord]] = {}
    for record in sorted(members, key=lambda item: item.id):
        if str(record.kind) == MemoryKind.TURN.value:
            continue
        groups.setdefault(_same_fact(record), []).append(record)
    return [merge_plan(group) for group in groups.values() if len(group) >= 2]


def merge_plan(group: Sequence[MemoryRecord]) -> MergePlan:
    """What the merged memory of ``group`` (one fact, two or more records) keeps."""
    ordered = sorted(group, key=lambda item: item.id)
    newest = ordered[-1]
    return MergePlan(
        source_ids=tuple(item.id for item in ordered),
        scope=newest.scope,
        text=newest.text,
        kind=str(newest.kind),
        speaker_id=newest.speaker_id,
        speaker_name=newest.speaker_name,
        subject_id=newest.subject_id,
        subject_name=newest.subject_name,
        importance=max((item.importance for item in ordered), key=lambda value: _RANK[Importance(value)]),
        tags=tuple(dict.fromkeys(tag for item in ordered for tag in item.tags)),
        happened_at=newest.happened_at,
        recorded_at=min(item.recorded_at for item in ordered),
        updated_at=max(item.updated_at for item in ordered),
        keep=any(item.keep for item in ordered),
    )


def judged_merge(group: Sequence[MemoryRecord], text: str, importance: Importance, tags: Sequence[str]) -> MergePlan:
    """The merge of ``group`` the model judged one fact, with its ``text``, ``importance`` and
    ``tags`` (``InvalidInput`` in Chinese when ``group`` cannot be merged: see the module doc)."""
    ids = sorted({item.id for item in group})
    if len(ids) < 2:
        raise InvalidInput("合并至少需要两条不同的记忆", en="a merge needs two memories or more")
    if len({item.scope for item in group}) > 1:
        raise InvalidInput("只能合并同一个会话里的记忆", en="a merge within one chat only")
    turns = [item.id for item in group if str(item.kind) == MemoryKind.TURN.value]
    if turns:
        raise InvalidInput(f"#{turns[0]} 是原话记录，不能合并", en="conversation lines are never merged")
    kept_tags = tuple(dict.fromkeys(tag.strip() for tag in tags if tag.strip()))
    return replace(merge_plan(group), text=text, importance=importance, tags=kept_tags, judged=True)
