"""Which of the consolidation cycle's tools one judgement-step run is offered, by the work its
decision named (``domain/judgement.WORK``; pure policy, applied by ``engine/cycle_tools``).

Every tool's schema is sent with every round, so a run is offered only what its work needs.
:data:`ALWAYS` is what every run needs to act on what it reads: the context, the memory reads and
the basic changes (update, forget, merge). Each kind of work adds its own (:data:`BY_WORK`);
knowledge tools only in a group chat (a private chat's facts never source an entry, and its
suggestions can only be rejected). The context (``cycle_context``) shows every kind of work, so
each kind it can show is mapped here: the model is never shown a job it has no tool for. The
message to the user is offered apart from this, whenever the chat allows it. The system prompt
names only tools of :data:`ALWAYS` and the stop tool, so it stays the same bytes for every run.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Offered to every run.
ALWAYS = (
    "cycle_context",
    "cycle_memory_list",
    "cycle_memory_read",
    "cycle_memory_update",
    "cycle_memory_forget",
    "cycle_memory_merge",
)
_CARDS = ("cycle_card_read", "cycle_card_update")
_KNOWLEDGE_READ = ("cycle_knowledge_search", "cycle_knowledge_get")
#: What each kind of work adds.
BY_WORK: dict[str, tuple[str, ...]] = {
    "near_clusters": ("cycle_clusters",),
    "wording_clusters": ("cycle_clusters",),
    "new_memories": ("cycle_stats", "cycle_recent", *_CARDS),
    "stale_knowledge": (),
    "suggestions": ("cycle_suggestions", "cycle_suggestion_review"),
    "memo_full": ("cycle_memo_read", "cycle_memo_update", "cycle_memory_write"),
    "cards_touched": ("cycle_recent", *_CARDS),
}
#: What each kind of work adds in a group chat only (the knowledge base).
BY_WORK_IN_GROUP: dict[str, tuple[str, ...]] = {
    "new_memories": (*_KNOWLEDGE_READ, "cycle_knowledge_write"),
    "stale_knowledge": (*_KNOWLEDGE_READ, "cycle_knowledge_write", "cycle_knowledge_delete"),
    "suggestions": _KNOWLEDGE_READ,
}
#: Offered beside the work's tools, where the chat allows it (the tool builder decides).
UNGATED = ("cycle_send_to_user",)


def offered(work: Iterable[str], *, group: bool) -> frozenset[str] | None:
    """The names of the tools a run over ``work`` is offered; None (every tool) when a kind of
    work is not mapped here (a new kind is never left without its tools)."""
    names = set(ALWAYS) | set(UNGATED)
    for kind in work:
        if kind not in BY_WORK:
            return None
        names.update(BY_WORK.get(kind, ()))
        if group:
            names.update(BY_WORK_IN_GROUP.get(kind, ()))
    return frozenset(names)
