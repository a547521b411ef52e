"""The benchmarks use the plugin the way any caller does: through ``amrita_plugin_cognition.api``.

A benchmark that measures a raw floor (a bare SQL insert, a kernel, one pure stage of the
historian) or needs a harness tool (the standalone boot, the loopback model) may import that one
module directly; each such import is listed here with its reason, and a listed import no bench
makes any more is an error too, so the list stays a true account."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "amrita_plugin_cognition"
BENCH = Path(__file__).parents[2] / "bench"

#: (bench file, module it imports besides the api): why.
FLOORS: dict[tuple[str, str], str] = {
    ("_common.py", f"{PACKAGE}.standalone"): "the harness boots NoneBot engine-only, as the CLI does",
    ("_common.py", f"{PACKAGE}.cli.runtime"): "the harness creates the schema and the data folder as the CLI does",
    ("_common.py", f"{PACKAGE}.store.models"): "the outbox emptied (benches that seed without vectors)",
    ("_common.py", f"{PACKAGE}.index.embedders"): "the flat embedder's fingerprint (benches that seed without vectors)",
    ("_common.py", f"{PACKAGE}.cli.loopback"): "the preset of a loopback model server (benches with a fake model)",
    ("_corpus.py", f"{PACKAGE}.index.embedders"): "the corpus is embedded once with the local model, no engine",
    ("_fake_agent.py", f"{PACKAGE}.cli.loopback"): "the loopback model server the demo uses",
    ("cache_memory.py", f"{PACKAGE}.bot"): "the hook's own recall_queries is what is measured",
    ("cache_memory.py", f"{PACKAGE}.engine.caches"): "the report names the caches' own TTL",
    ("decay_sweep.py", f"{PACKAGE}.store"): "bulk seeding with bare inserts; the bank reset between busy passes",
    ("decay_sweep.py", f"{PACKAGE}.store.models"): "the rows reset in SQL between busy passes",
    ("decay_sweep.py", f"{PACKAGE}.store.decay"): "the sweep's cursor row cleared between passes",
    (
        "dedup_clusters.py",
        f"{PACKAGE}.domain.clusters",
    ): "the candidate search kernel alone, against Chroma's neighbours",
    ("dedup_clusters.py", f"{PACKAGE}.store"): "the chat's copy read alone, against the index's paged read",
    ("end_latency.py", f"{PACKAGE}.store.models"): "the floor: the same note row committed in a bare session",
    ("erasure_bytes.py", f"{PACKAGE}.store"): "bulk seeding with bare inserts; the SQLite delete modes compared",
    ("historian_cpu.py", f"{PACKAGE}.domain.timeresolve"): "the resolver's own CPU cost, one stage of a job",
    ("historian_cpu.py", f"{PACKAGE}.engine"): "the historian's answer handling (historian_facts) without a model",
    ("historian_cpu.py", f"{PACKAGE}.engine.historian"): "the historian's drafting stage without a model",
    ("historian_cpu.py", f"{PACKAGE}.engine.historian_sources"): "the prompt's numbered sources, one stage",
    ("historian_cpu.py", f"{PACKAGE}.store.jobs"): "a lease built by hand for the stages above",
    ("exact_search.py", f"{PACKAGE}.engine.recall"): "recall's index search alone (_index_search), against the copy's",
    ("exact_search.py", f"{PACKAGE}.store"): "the copy written as the drain writes it, and marked complete",
    ("exact_search.py", f"{PACKAGE}.store.models"): "the copy's rows of vectors with no fact behind them, bare inserts",
    ("index_memory.py", f"{PACKAGE}.index.vector"): "the vector index alone: the memory its chats' indexes take",
    ("index_ops_memory.py", f"{PACKAGE}.index.vector"): "the vector index alone: what each kind of operation leaves",
    ("index_writes.py", f"{PACKAGE}.index.vector"): "the vector index alone: what one saved write costs",
    ("index_writes.py", f"{PACKAGE}.index.collections"): "the floor: chromadb's own write on the same settings",
    ("inert_render.py", f"{PACKAGE}.domain.inert"): "the renderer itself (inert_lines), a pure kernel",
    ("mmr.py", f"{PACKAGE}.domain.scoring"): "the MMR kernel and its numpy reference",
    ("profile_merges.py", f"{PACKAGE}.cli.loopback"): "the loopback model server the demo uses",
    ("profile_merges.py", f"{PACKAGE}.engine.historian"): "the loopback model answers the historian's tool by name",
    ("profile_merges.py", f"{PACKAGE}.engine.profile_prompt"): "the loopback model answers the merge tool by name",
    ("reindex.py", f"{PACKAGE}.store.models"): "rows counted in SQL before and after the rebuild",
    ("reindex.py", f"{PACKAGE}.index.vector"): "the collections of the new generation named and counted",
    ("recall_latency.py", f"{PACKAGE}.index.collections"): "the floor queries the chat's own collection by its name",
    ("recall_latency.py", f"{PACKAGE}.domain.tokenize"): "the floor's FTS5 statement: the query's terms as indexed",
    ("recall_latency.py", f"{PACKAGE}.store.keyword"): "the floor's raw FTS5 statement on the index's own table",
    (
        "recall_latency.py",
        f"{PACKAGE}.store.planner_stats",
    ): "a store built on PostgreSQL gets the statistics a bot's housekeeping (or autovacuum) keeps",
    ("relevance_floor.py", f"{PACKAGE}.cli.evaluation"): "the recall eval's corpus loader and seeding",
    ("relevance_floor.py", f"{PACKAGE}.engine.search"): "the relevance floor's own predicates are what is tuned",
    ("relevance_floor.py", f"{PACKAGE}.index.embedders"): "similarities of the local model, no engine",
    (
        "_scale_store.py",
        f"{PACKAGE}.store",
    ): "the million-memory load: the store's own insert (rows, keyword rows, outbox rows), many chats a commit",
    ("_chaos_worker.py", f"{PACKAGE}.standalone"): "the killed worker boots NoneBot engine-only on the run's database",
    ("_chaos_worker.py", f"{PACKAGE}.cli.runtime"): "the worker creates the schema as the CLI does",
    ("_chaos_worker.py", f"{PACKAGE}.cli.loopback"): "the preset of the loopback model server",
    ("_chaos_worker.py", f"{PACKAGE}.store.models"): "the invariants are counted in SQL: jobs, outbox, facts, turns",
    ("chaos.py", f"{PACKAGE}.cli.loopback"): "the loopback model's tool-call answers",
    ("chaos.py", f"{PACKAGE}.cli.replay_model"): "the historian answered by the demo's replay rules",
    ("chaos.py", f"{PACKAGE}.cli.demo_card_model"): "card merges answered by the demo's rules",
    ("chaos.py", f"{PACKAGE}.cli.demo_cycle_model"): "the cycle's judgement answered by the demo's rules",
    ("_whole_bot_model.py", f"{PACKAGE}.cli.loopback"): "the loopback model server and its tool-call answers",
    ("_whole_bot_model.py", f"{PACKAGE}.cli.replay_model"): "the historian answered by the demo's replay rules",
    ("_whole_bot_model.py", f"{PACKAGE}.cli.demo_card_model"): "card merges answered by the demo's rules",
    ("_whole_bot_model.py", f"{PACKAGE}.cli.demo_cycle_model"): "a consolidation cycle answered by the demo's rules",
    ("_whole_bot_project.py", f"{PACKAGE}.cli.loopback"): "the bot projects' model preset for the loopback model",
    ("_whole_bot_probe.py", f"{PACKAGE}.runtime"): "the measuring plugin inside the bot reaches the bot's own engine",
    ("second_model_latency.py", f"{PACKAGE}.index.embedders"): "each model's query embedding timed alone",
    ("second_model_latency.py", f"{PACKAGE}.index.second_model"): "the two models, alone and joined",
    ("second_model_quality.py", f"{PACKAGE}.cli.evaluation"): "the recall eval's store and queries, asked per weight",
    ("second_model_quality.py", f"{PACKAGE}.index.embedders"): "a fresh query cache per weight",
    ("second_model_quality.py", f"{PACKAGE}.index.second_model"): "the joined embedder whose weights are tuned",
    ("second_model_quality.py", f"{PACKAGE}.domain.vector_parts"): "the layout whose weights are tuned",
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == PACKAGE or name.startswith(f"{PACKAGE}.")}


def test_benchmarks_import_the_package_through_the_api_only() -> None:
    made = {
        (path.name, module)
        for path in sorted(BENCH.glob("*.py"))
        for module in _imports(path)
        if module != f"{PACKAGE}.api"
    }
    assert made - FLOORS.keys() == set(), "import these through amrita_plugin_cognition.api (or list the floor)"
    assert FLOORS.keys() - made == set(), "listed floors no bench imports any more"
