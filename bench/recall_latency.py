"""Recall latency of ``build_context`` (engine/context.py; no LLM) on large stores, against the
peer a Chroma-only memory plugin is: a dense-only query with a ``where`` scope filter on ONE
shared collection holding the same vectors.

Cases: (a) 50,000 memories in one scope; (b) 100,000 memories across 1,000 scopes. Local
embedder (USE multilingual v3). A few hundred short Chinese queries, each distinct (so the
query embedding cache misses, as in a real chat), asked of a random scope in (b). Per query,
interleaved: ours ``cold`` (build_context, embedding included), peer ``cold`` (embed with the
same model + filtered Chroma query), then both again ``warm`` (the query vector already known:
search and assembly only), then the floor (issue 23): what recall cannot do without, one after
the other: the query's embedding (the same model, no cache), one query of the chat's own Chroma
collection (the candidates' count, distances only), and one raw FTS5 statement for the query's
terms in that chat (the keyword index's own tokens and scope token; every term, none pruned),
on a connection of its own; in a chat drawn apart from ours, so that its index is as often out of
memory as ours was. p50/p95 per round, median over rounds, ratios ours/peer and ours/floor.
Targets: ours cold p95 <= 25 ms; <= 1.5x the floor's; <= 0.10x the peer's.

The store is written through the engine's real path (``engine.memories.remember`` per scope, then
``engine.index.drain()``); the full-scale stores are cached under /tmp/cognition-bench-cache
(first build: several minutes; the build time is printed and kept in ``complete.json``).

    uv run python bench/recall_latency.py [--quick] [--case a|b] [--rebuild] [--backend embedded|server] [--exact-max N]

Each case runs in its own process (one NoneBot, one SQLite per store). ``--backend server``: the
same on PostgreSQL (a database per store on the server of ``COGNITION_TEST_PG``, 127.0.0.1:5432 by
default, kept with the cache) and a ``chroma run`` server of the run's own on 127.0.0.1 (the
peer's shared collection on it too); the floor's keyword statement is then the raw ``tsvector``
query on a connection of its own. Nothing else leaves the machine.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from _common import REPO_ROOT, machine_line, median, ms_since, p50_p95, parse_args, remove_home, verdict

from amrita_plugin_cognition.api import UTC

TARGET_P95_MS = 25.0
TARGET_FLOOR_RATIO = 1.5
TARGET_PEER_RATIO = 0.10
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
#: case -> (memories, scopes) at full and quick scale
CASES = {"a": ((50_000, 1), (1_000, 1)), "b": ((100_000, 1_000), (2_000, 20))}


async def run_case(
    case: str,
    quick: bool,
    rebuild: bool,
    build_only: bool = False,
    profile: bool = False,
    backend: str = "embedded",
    exact_max: int | None = None,
) -> None:
    from _corpus import queries
    from _store import BOT_ID, PEER_COLLECTION, ServerStore, build_or_open, peer_client, scope_ids, store_dir

    count, scopes = CASES[case][1 if quick else 0]
    home = None
    if quick:
        from _common import throwaway_home

        home = throwaway_home(f"recall-{case}")
    server = None
    if backend == "server":
        server = ServerStore(home or store_dir(count, scopes, backend), count, scopes, throwaway=quick)
    try:
        started = time.perf_counter()
        engine, record = await build_or_open(
            count, scopes, home=home or store_dir(count, scopes, backend), rebuild=rebuild or quick, server=server
        )
        setup = time.perf_counter() - started
        if exact_max is not None:  # the copy in SQL against the index, on one store
            engine.config.recall.exact_search_max_vectors = exact_max
        print(f"recall.exact_search_max_vectors = {engine.config.recall.exact_search_max_vectors}")
        if server is not None:  # what a bot's housekeeping (or autovacuum) keeps current: the planner's statistics
            from amrita_plugin_cognition.store.planner_stats import analyse_stale

            async with engine.unit_of_work() as uow:
                analysed = await analyse_stale(uow.session)
                await uow.commit()
            print(f"tables analysed before the run: {', '.join(analysed) or 'none (statistics current)'}")
        if build_only:
            print(f"store ready: {record}")
            return
        from amrita_plugin_cognition.api import ChatContext, Scope

        client = server.peer_client() if server is not None else peer_client(engine_home(engine))
        peer = client.get_collection(PEER_COLLECTION, embedding_function=None)
        query_embedder = engine.embedder.inner.inner  # the same LocalUSEEmbedder model the engine uses
        top_k = engine.config.recall.top_k
        per_round = 60 if quick else 200
        rounds = 1 if quick else 3
        texts = queries(per_round * rounds + 20)
        rng = random.Random(5)
        ids = scope_ids(scopes)
        print(
            f"## case ({case}) {count:,} memories across {scopes:,} scope(s); peer collection holds "
            f"{peer.count():,} vectors; engine vectors "
            f"{await asyncio.to_thread(engine.vectors.total_count, engine.generation):,}"
        )
        if record.get("cached"):
            print(f"store reused from cache (built {record['built_at']}: {fmt_build(record)}); open {setup:.1f} s")
        else:
            print(f"store built in {setup:.0f} s ({fmt_build(record)})")

        async def ours(context: ChatContext, text: str) -> tuple[float, int]:
            begin = time.perf_counter()
            built = await engine.turns.context(context, [text], now=NOW)
            return ms_since(begin), built.memories

        async def theirs(scope_key: str, text: str, vector=None) -> float:  # type: ignore[no-untyped-def]
            begin = time.perf_counter()
            if vector is None:
                vector = (await query_embedder.embed([text]))[0]
            await asyncio.to_thread(
                peer.query, query_embeddings=vector[None, :], n_results=top_k, where={"scope": scope_key}
            )
            return ms_since(begin)

        # warm-up: model, connections, HNSW segments loaded into memory
        for text in texts[-20:]:
            context = ChatContext(BOT_ID, Scope("group", rng.choice(ids)), "40001", "小明")
            await ours(context, text)
            await theirs(context.scope.key, text)
        if profile:
            await profile_turns(
                engine,
                [ChatContext(BOT_ID, Scope("group", rng.choice(ids)), "40001", "小明") for _ in range(100)],
                texts[:100],
            )
            return
        floor = Floor(engine, query_embedder, BOT_ID) if server is None else PgFloor(engine, query_embedder, BOT_ID)
        await floor.connect(server.url if server is not None else "")
        floor_rng = random.Random(11)
        for text in texts[-20:]:  # the raw connection's first statements
            await floor.measure(Scope("group", rng.choice(ids)), text)
        parts = ("floor_embed", "floor_chroma", "floor_fts")
        figures: dict[str, list[tuple[float, float]]] = {
            key: [] for key in ("ours_cold", "peer_cold", "ours_warm", "peer_warm", "floor", *parts)
        }
        empty = 0
        for round_index in range(rounds):
            samples: dict[str, list[float]] = {key: [] for key in figures}
            for position, text in enumerate(texts[round_index * per_round : (round_index + 1) * per_round]):
                context = ChatContext(BOT_ID, Scope("group", rng.choice(ids)), "40001", "小明")
                key = context.scope.key
                if position % 2:
                    samples["peer_cold"].append(await theirs(key, text))
                    elapsed, found = await ours(context, text)
                else:
                    elapsed, found = await ours(context, text)
                    samples["peer_cold"].append(await theirs(key, text))
                samples["ours_cold"].append(elapsed)
                empty += found == 0
                vector = (await engine.embedder.embed_queries([text]))[0]  # cached by the cold call
                samples["ours_warm"].append((await ours(context, text))[0])
                samples["peer_warm"].append(await theirs(key, text, vector))
                # a chat of its own draw: in (b) most turns meet a chat whose index is not in memory,
                # as ours did; the chat ours just asked would be warm
                measured = await floor.measure(Scope("group", floor_rng.choice(ids)), text)
                for part, value in zip(parts, measured, strict=True):
                    samples[part].append(value)
                samples["floor"].append(sum(measured))
            for name, values in samples.items():
                figures[name].append(p50_p95(values))
        summary: dict[str, tuple[float, float]] = {}
        for name in figures:
            p50 = median([pair[0] for pair in figures[name]])
            p95 = median([pair[1] for pair in figures[name]])
            summary[name] = (p50, p95)
            print(
                f"{name:<12} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms   (median of {rounds} round(s) x {per_round} queries)"
            )
        for mode in ("cold", "warm"):
            ours_p50, ours_p95 = summary[f"ours_{mode}"]
            peer_p50, peer_p95 = summary[f"peer_{mode}"]
            print(f"ratio ours/peer ({mode}): p50 {ours_p50 / peer_p50:.2f}  p95 {ours_p95 / peer_p95:.2f}")
        floor_p50, floor_p95 = summary["floor"]
        ours_p50, ours_p95 = summary["ours_cold"]
        print(f"ratio ours cold/floor: p50 {ours_p50 / floor_p50:.2f}  p95 {ours_p95 / floor_p95:.2f}")
        print(f"turns that recalled nothing: {empty} of {per_round * rounds}")
        print(f"case ({case}) ours cold p95 {ours_p95:.2f} ms: {verdict(ours_p95, TARGET_P95_MS)}")
        print(
            f"case ({case}) ours cold p95 / floor p95 {ours_p95 / floor_p95:.2f}: "
            f"{verdict(ours_p95 / floor_p95, TARGET_FLOOR_RATIO)}"
        )
        print(
            f"case ({case}) ours cold p95 / peer p95 {ours_p95 / summary['peer_cold'][1]:.2f}: "
            f"{verdict(ours_p95 / summary['peer_cold'][1], TARGET_PEER_RATIO)}"
        )
        await floor.close()
    finally:
        if server is not None:
            if quick:
                await server.drop()
            server.close()
        if home is not None:
            remove_home(home)


class Floor:
    """What one recall cannot do without, each part timed alone: the query embedding (the engine's
    model, no cache), one query of the chat's own Chroma collection (the handle the engine
    opened; the candidates' count, distances only) and one raw FTS5 statement for every term of
    the query in that chat, on a sqlite3 connection of its own (no ORM, no pool, no pruning)."""

    def __init__(self, engine, embedder, bot_id: str) -> None:  # type: ignore[no-untyped-def]
        self.engine = engine
        self.embedder = embedder
        self.bot_id = bot_id
        self.limit = engine.config.recall.candidates

    async def connect(self, url: str) -> None:
        import sqlite3

        self.database = sqlite3.connect(f"file:{engine_home(self.engine) / 'cognition.sqlite3'}?mode=ro", uri=True)

    async def keyword(self, scope, text: str) -> None:  # type: ignore[no-untyped-def]
        self.database.execute(*self.fts_statement(scope, text)).fetchall()

    async def measure(self, scope, text: str) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
        from amrita_plugin_cognition.index.collections import collection_name

        begin = time.perf_counter()
        vector = (await self.embedder.embed([text]))[0]
        embed = ms_since(begin)
        name = collection_name(self.engine.generation, self.bot_id, scope)
        collection = await self.engine.vectors.off_loop("floor", lambda: self.engine.vectors._existing(name, False))
        begin = time.perf_counter()
        collection.query(query_embeddings=vector[None, :], n_results=self.limit, include=["distances"])
        chroma = ms_since(begin)
        begin = time.perf_counter()
        await self.keyword(scope, text)
        return embed, chroma, ms_since(begin)

    def fts_statement(self, scope, text: str) -> tuple[str, tuple[str, int]]:  # type: ignore[no-untyped-def]
        from amrita_plugin_cognition.domain.tokenize import query_terms
        from amrita_plugin_cognition.store.keyword import CONTEXT_WEIGHT, FTS_TABLE, _fts_quote, scope_token

        words = " OR ".join(map(_fts_quote, dict.fromkeys(query_terms(text))))
        match = f"scope : {_fts_quote(scope_token(self.bot_id, scope))} AND {{tokens context}} : ({words})"
        table = FTS_TABLE
        statement = (
            f"SELECT rowid, bm25({table}, 0.0, 0.0, 1.0, {CONTEXT_WEIGHT}) AS rank FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY rank LIMIT ?"
        )
        return statement, (match, self.limit)

    async def close(self) -> None:
        self.database.close()


class PgFloor(Floor):
    """The floor on PostgreSQL: the keyword part is the raw ``tsvector`` query the store runs
    (``store/keyword.search``: the chat's scope token and every term of the query), on an asyncpg
    connection of its own."""

    async def connect(self, url: str) -> None:
        import asyncpg

        self.connection = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))

    async def keyword(self, scope, text: str) -> None:  # type: ignore[no-untyped-def]
        from amrita_plugin_cognition.domain.tokenize import query_terms
        from amrita_plugin_cognition.store.keyword import CONTEXT_WEIGHT, PG_TABLE, _pg_quote, scope_token

        words = " | ".join(map(_pg_quote, dict.fromkeys(query_terms(text))))
        statement = (
            f"SELECT memory_id, ts_rank('{{0, 0, {CONTEXT_WEIGHT}, 1}}', doc, words) AS rank FROM {PG_TABLE}, "
            "CAST($1 AS tsquery) AS words WHERE doc @@ CAST($2 AS tsquery) ORDER BY rank DESC LIMIT $3"
        )
        query = f"({_pg_quote(scope_token(self.bot_id, scope))}) & ({words})"
        await self.connection.fetch(statement, words, query, self.limit)

    async def close(self) -> None:
        await self.connection.close()


async def profile_turns(engine, contexts, texts) -> None:  # type: ignore[no-untyped-def]
    """cProfile of build_context: each turn cold (new query) then warm (query vector cached)."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for context, text in zip(contexts, texts, strict=True):
        await engine.turns.context(context, [text], now=NOW)
        await engine.turns.context(context, [text], now=NOW)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(35)
    print(f"# cProfile of {len(texts)} turns x (cold + warm) build_context, cumulative")
    print(out.getvalue())


def engine_home(engine) -> Path:  # type: ignore[no-untyped-def]
    """The standalone home: the plugin data folder is ``HOME/data/amrita_plugin_cognition``."""
    import os

    return Path(os.environ["COGNITION_STANDALONE_HOME"])


def fmt_build(record: dict) -> str:
    return (
        f"engine remember+drain {record['engine_write_and_index_seconds']} s "
        f"(drain_outbox {record['of_which_drain_outbox_seconds']} s), peer add {record['peer_seconds']} s, "
        f"embedding {record['embed_seconds_this_run']} s (0 when the vector cache was warm)"
    )


def main() -> None:
    def extra(parser) -> None:  # type: ignore[no-untyped-def]
        parser.add_argument("--case", choices=sorted(CASES), help="run one case in this process")
        parser.add_argument("--rebuild", action="store_true", help="ignore the cached store")
        parser.add_argument("--build-only", action="store_true", help="build (or check) the cached store and stop")
        parser.add_argument("--profile", action="store_true", help="with --case: cProfile 100 turns instead of timing")
        parser.add_argument(
            "--backend",
            choices=("embedded", "server"),
            default="embedded",
            help="SQLite + embedded Chroma, or PostgreSQL + a Chroma server",
        )
        parser.add_argument(
            "--exact-max",
            type=int,
            help="recall.exact_search_max_vectors for this run (0: every chat through the index)",
        )

    args = parse_args("recall latency of build_context vs a Chroma-only peer", extra)
    if args.case:
        asyncio.run(
            run_case(args.case, args.quick, args.rebuild, args.build_only, args.profile, args.backend, args.exact_max)
        )
        return
    backend = "" if args.backend == "embedded" else "  [PostgreSQL + Chroma server]"
    print(f"# bench/recall_latency.py  {machine_line()}{'  [quick]' if args.quick else ''}{backend}", flush=True)
    for case in sorted(CASES):
        command = [sys.executable, str(Path(__file__).resolve()), "--case", case, "--backend", args.backend]
        command += ["--quick"] if args.quick else []
        command += ["--rebuild"] if args.rebuild else []
        command += ["--exact-max", str(args.exact_max)] if args.exact_max is not None else []
        completed = subprocess.run(command, cwd=REPO_ROOT, check=False)
        if completed.returncode:
            raise SystemExit(f"case {case} failed (exit {completed.returncode})")


if __name__ == "__main__":
    main()
