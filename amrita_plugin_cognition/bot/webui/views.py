"""What the page's routes answer: plain JSON documents of the engine's results. Text stays text
(the page puts it into the DOM with ``textContent``); nothing here is markup."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...api import (
    Card,
    CardRevision,
    ChatSummary,
    Inspected,
    KnowledgeEntry,
    ListedCard,
    MemoRevision,
    Pin,
    WhyChain,
    as_utc,
    describe_source,
    memory_document,
)


def iso(moment: datetime | None) -> str | None:
    value = as_utc(moment)
    return value.isoformat() if value is not None else None


def chat(summary: ChatSummary) -> dict[str, Any]:
    return {
        "chat": summary.scope.key,
        "kind": summary.scope.kind,
        "id": summary.scope.id,
        "active": summary.active,
        "expired": summary.expired,
        "superseded": summary.superseded,
        "memory_on": summary.memory_on,
    }


def memory(item: Inspected) -> dict[str, Any]:
    document = memory_document(item)
    document["how"] = describe_source(item.record.source, message_ids=True)
    return document


def why(chain: WhyChain) -> dict[str, Any]:
    return {
        "memory": memory(chain.memory),
        "steps": [
            {
                "stage": step.stage,
                "title": step.title,
                "items": [{"label": label, "text": text} for label, text in step.items],
                "memory_ids": step.memory_ids,
            }
            for step in chain.steps
        ],
    }


def card(value: Card) -> dict[str, Any]:
    return {
        "entity_type": value.entity_type,
        "entity_id": value.entity_id,
        "part": value.part,
        "label": value.label,
        "name": value.name,
        "tags": list(value.tags),
        "evaluation": value.evaluation,
        "body": value.body,
        "roast": value.roast,
        "updated_at": iso(value.updated_at),
        "source_ids": list(value.source_ids),
    }


def listed_card(listed: ListedCard) -> dict[str, Any]:
    return {**card(listed.card), "updated_by": listed.updated_by, "revisions": listed.revisions}


def card_revision(revision: CardRevision) -> dict[str, Any]:
    return {
        "id": revision.id,
        "card": card(revision.card),
        "written_by": revision.written_by,
        "replaced_at": iso(revision.replaced_at),
        "replaced_by": revision.replaced_by,
    }


def memo_revision(revision: MemoRevision) -> dict[str, Any]:
    return {
        "id": revision.id,
        "content": revision.content,
        "written_at": iso(revision.written_at),
        "written_by": revision.written_by,
        "replaced_at": iso(revision.replaced_at),
        "replaced_by": revision.replaced_by,
    }


def pin(value: Pin) -> dict[str, Any]:
    return {"id": value.id, "content": value.content, "updated_at": iso(value.updated_at), "by": value.created_by}


def knowledge(entry: KnowledgeEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "title": entry.title,
        "summary": entry.summary,
        "body": entry.body,
        "source_ids": list(entry.source_ids),
        "state": entry.state,
        "version": entry.version,
        "updated_at": iso(entry.updated_at),
        "updated_by": entry.updated_by,
    }
