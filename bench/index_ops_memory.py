"""Which of the embedded index's operations makes the process grow, one kind at a time.

The whole bot's memory grows while it runs, and with its vectors on a Chroma server most of the
growth shows in the server (``whole_bot.py --chroma-server``). This bench asks the embedded index
(``index/vector.py``, as the plugin opens it) for each kind of operation the bot makes, in a fresh
process per kind, over ``--chats`` chats that already hold ``--per-chat`` memories each and a
bot's card collection of ``--cards`` card parts: single inserts of new memories with the bot's
metadata; rewrites of stored ids (what a correction or a reindex of one fact does); deletes of
stored ids followed by inserts of new ones (a forget, a supersede); queries of a chat (with the
vectors back, as recall asks) with and without the person filter a private chat uses; rewrites
and queries of the card collection (every card merge rewrites a card's parts). Each kind runs
``--rounds`` rounds of ``--ops`` operations after one round of warm-up; reported: RSS growth per
1,000 operations in each round (flat when the kind leaves nothing behind). No network, no model.

    uv run python bench/index_ops_memory.py [--quick] [--chats 100] [--per-chat 20] [--ops N] [--rounds N]
"""

from __future__ import annotations

import json
import sys
from typing import Any

from _common import child_json, machine_line, parse_args, remove_home, rss_mb, throwaway_home

DIMENSIONS = 512
KINDS = (
    "insert",
    "rewrite",
    "delete_insert",
    "query",
    "query_person",
    "card_rewrite",
    "card_query",
)


def _metadata(chat: int, memory_id: int) -> dict[str, str | int | float | bool]:
    return {"speaker_id": str(10_000 + memory_id % 7), "subject_id": str(10_000 + chat), "t": memory_id, "tier": "m"}


def _card_metadata(part: int) -> dict[str, str | int | float | bool]:
    """A card part's: three sections per person."""
    return {"subject_id": str(part // 3), "section": part % 3}


def child(kind: str, chats: int, per_chat: int, cards: int, ops: int, rounds: int) -> dict[str, Any]:
    """One kind in this process: RSS growth (MB per 1,000 operations) of each round after the warm-up."""
    import numpy as np

    from amrita_plugin_cognition.api import CognitionConfig, Scope
    from amrita_plugin_cognition.index.vector import ChromaVectorIndex

    home = throwaway_home("index-ops-memory")
    rng = np.random.default_rng(11)
    settings = CognitionConfig.model_validate({"chroma": {"path": str(home / "chroma")}})
    index = ChromaVectorIndex(settings.chroma, home)
    scopes = [Scope("group" if chat % 2 else "private", str(chat)) for chat in range(chats)]
    stored = {chat: list(range(chat * 100_000, chat * 100_000 + per_chat)) for chat in range(chats)}
    next_id = {chat: chat * 100_000 + per_chat for chat in range(chats)}

    def vectors(count: int) -> np.ndarray:
        return rng.standard_normal((count, DIMENSIONS)).astype(np.float32)

    def one(step: int) -> None:
        chat = int(rng.integers(chats))
        scope = scopes[chat]
        if kind == "insert":
            memory_id = next_id[chat]
            next_id[chat] += 1
            index.upsert(0, "42", scope, [memory_id], vectors(1), [_metadata(chat, memory_id)])
        elif kind == "rewrite":
            memory_id = stored[chat][int(rng.integers(per_chat))]
            index.upsert(0, "42", scope, [memory_id], vectors(1), [_metadata(chat, memory_id)])
        elif kind == "delete_insert":
            old = stored[chat].pop(int(rng.integers(len(stored[chat]))))
            index.delete(0, "42", scope, [old])
            memory_id = next_id[chat]
            next_id[chat] += 1
            stored[chat].append(memory_id)
            index.upsert(0, "42", scope, [memory_id], vectors(1), [_metadata(chat, memory_id)])
        elif kind == "query":
            index.query(0, "42", scope, vectors(1)[0], 50)
        elif kind == "query_person":
            person = str(10_000 + step % 7)
            where = {"$or": [{"speaker_id": person}, {"subject_id": person}]}
            index.query(0, "42", scope, vectors(1)[0], 50, where)
        elif kind == "card_rewrite":
            part = int(rng.integers(cards))
            index.upsert_cards(0, "42", [part], vectors(1), [_card_metadata(part)])
        elif kind == "card_query":
            index.query_cards(0, "42", vectors(1)[0], 8, {"subject_id": str(int(rng.integers(cards // 3)))})

    try:
        index.open()
        for chat, scope in enumerate(scopes):
            ids = stored[chat]
            index.upsert(0, "42", scope, ids, vectors(len(ids)), [_metadata(chat, i) for i in ids])
        for first in range(0, cards, 50):
            part_ids = list(range(first, min(cards, first + 50)))
            index.upsert_cards(0, "42", part_ids, vectors(len(part_ids)), [_card_metadata(part) for part in part_ids])
        for step in range(ops):  # warm-up: every index loaded, the allocator's pools formed
            one(step)
        growth: list[float] = []
        for _ in range(rounds):
            before = rss_mb()
            for step in range(ops):
                one(step)
            growth.append((rss_mb() - before) * 1000 / ops)
        return {"kind": kind, "mb_per_1000": growth, "end_mb": rss_mb()}
    finally:
        index.close()
        remove_home(home)


def main() -> None:
    if len(sys.argv) == 8 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], *(int(value) for value in sys.argv[3:]))))
        return

    def extra(parser) -> None:  # type: ignore[no-untyped-def]
        parser.add_argument("--chats", type=int, default=100)
        parser.add_argument("--per-chat", type=int, default=20)
        parser.add_argument("--cards", type=int, default=600)
        parser.add_argument("--ops", type=int, help="operations per round (default 2000, --quick 300)")
        parser.add_argument("--rounds", type=int, help="measured rounds (default 3, --quick 2)")

    args = parse_args(__doc__.splitlines()[0], extra)
    ops = args.ops or (300 if args.quick else 2000)
    rounds = args.rounds or (2 if args.quick else 3)
    print(machine_line())
    print(
        f"{args.chats} chats of {args.per_chat} memories, {args.cards} card parts; per kind a fresh process, "
        f"one warm-up round and {rounds} measured rounds of {ops} operations"
    )
    for kind in KINDS:
        figures = dict(
            child_json(
                __file__, "--child", kind, str(args.chats), str(args.per_chat), str(args.cards), str(ops), str(rounds)
            )
        )
        rows = " / ".join(f"{value:+.2f}" for value in figures["mb_per_1000"])
        end = figures["end_mb"]
        print(f"{kind:14} RSS growth per 1,000 operations, by round: {rows} MB (process at the end {end:.0f} MB)")


if __name__ == "__main__":
    main()
