"""Reading a chat's lineage back from storage after a consolidation (``engine.governance.inspect``):
which active memory each memory now lives in, and what the planted pairs became."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


async def heads(engine: Any, bot_id: str, scope: Any) -> Callable[[int], Any]:
    """``current(memory_id)``: the active memory a memory of the chat now lives in (itself while
    active, else the active merge that superseded it and names it as a source), or None (lost)."""
    from amrita_plugin_cognition.api import InspectFilter

    found = {}
    offset = 0
    while True:
        page, total = await engine.governance.inspect(InspectFilter(bot_id=bot_id, scope=scope), offset, 200)
        found.update((item.record.id, item) for item in page)
        offset += len(page)
        if not page or offset >= total:
            break

    def current(memory_id: int) -> Any:
        item = found.get(memory_id)
        if item is None:
            return None
        if item.record.status.value == "active":
            return item.record
        head = found.get(item.superseded_by[-1]) if item.superseded_by else None
        if head is None or head.record.status.value != "active":
            return None
        if memory_id not in head.record.source.get("sources", []):
            return None
        return head.record

    return current


def merged_pairs(current: Callable[[int], Any], pairs: Sequence[tuple[int, int]], texts: dict[int, str]) -> int:
    """Pairs that now live in one active ``consolidated`` memory whose text is one of theirs."""
    merged = 0
    for original, copy in pairs:
        first, second = current(original), current(copy)
        same = first is not None and second is not None and first.id == second.id
        if same and first.provenance == "consolidated" and first.text in (texts[original], texts[copy]):
            merged += 1
    return merged


def joined_pairs(current: Callable[[int], Any], pairs: Sequence[tuple[int, int]]) -> int:
    """Pairs that now live in one memory (for near-misses: must be 0)."""
    return sum(
        1
        for first, second in pairs
        if current(first) is not None and current(second) is not None and current(first).id == current(second).id
    )


async def lineage_check(engine, bot_id, scope, ids, pairs, near_pairs, texts):  # type: ignore[no-untyped-def]
    """(planted pairs merged, memories reachable, near pairs merged), read back from storage."""
    current = await heads(engine, bot_id, scope)
    reachable = sum(1 for memory_id in ids if current(memory_id) is not None)
    return merged_pairs(current, pairs, texts), reachable, joined_pairs(current, near_pairs)
