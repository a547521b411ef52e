"""Recall quality with the second local model (the ``e5`` extra) over a grid of fusion weights.

Stores a recall file once with the fused embedder (bundled USE + multilingual-e5-small), then
asks every query again for each setting of the grid: ``embedder.second_weight`` (the second
model's share of the dense score; 0 = the bundled model alone over the same store) and
``recall.vector_weight`` / ``recall.keyword_weight`` (dense against keyword in the fusion). Both
are read at query time, so one store serves the whole grid; the figures are those of
``ambot cognition eval recall`` (the same store and query functions), except that the turn's
deadline is raised so that no query goes keyword-only on a loaded machine.

Evaluation hygiene: choose the weights on a dev part of a public set and report them on the
other part (bench/README.md says which part chose what); never per question type.

    uv run python bench/second_model_quality.py FILE [--second 0,0.5,0.7] [--dense 0.6,0.5]
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from _common import (
    init_engine_only,
    machine_line,
    open_engine,
    parse_args,
    quiet_cognition_logs,
    remove_home,
    throwaway_home,
)


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def _add_arguments(parser: Any) -> None:
    parser.add_argument("file", type=Path)
    parser.add_argument("--second", default="0,0.3,0.5,0.7,0.85", help="second_weight values")
    parser.add_argument("--dense", default="0.6", help="vector_weight values (keyword_weight = 1 - it)")
    parser.add_argument("--json-out", type=Path, default=None)


def _reweighed(engine: Any, fused: Any, second_weight: float, dense_weight: float) -> None:
    from amrita_plugin_cognition.domain.vector_parts import VectorLayout
    from amrita_plugin_cognition.index.embedders import CachedQueryEmbedder

    fused.layout = VectorLayout(fused.layout.parts, (1.0 - second_weight, second_weight))
    engine.vectors.layout = fused.layout
    engine.embedder = CachedQueryEmbedder(fused)  # query vectors join with the new weights
    recall = engine.config.recall.model_copy(
        update={"vector_weight": dense_weight, "keyword_weight": round(1.0 - dense_weight, 6)}
    )
    engine.config = engine.config.model_copy(update={"recall": recall})


class _RememberedQueries:
    """A model whose query rows are computed once per text: the grid asks the same queries with
    other weights, and the rows of one model do not depend on them (documents pass through)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.fingerprint = model.fingerprint
        self._rows: dict[str, Any] = {}

    async def embed(self, texts: Any) -> Any:
        return await self.model.embed(texts)

    async def embed_queries(self, texts: Any, timeout: float | None = None) -> Any:
        import numpy as np

        missing = [text for text in dict.fromkeys(texts) if text not in self._rows]
        if missing:
            for text, row in zip(missing, await self.model.embed_queries(missing, timeout=timeout), strict=True):
                self._rows[text] = row
        return np.vstack([self._rows[text] for text in texts])


async def _run(args: Any) -> list[dict[str, Any]]:
    import amrita_plugin_cognition.cli.evaluation as evaluation
    from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder
    from amrita_plugin_cognition.index.second_model import FusedEmbedder, LocalE5Embedder

    home = throwaway_home("second-quality")
    init_engine_only(home)
    quiet_cognition_logs()
    fused = FusedEmbedder(_RememberedQueries(LocalUSEEmbedder()), _RememberedQueries(LocalE5Embedder()))  # type: ignore[arg-type]
    # quality, not latency: a query's vector side is not cut short on a loaded machine (the
    # per-turn deadline would make some queries keyword-only; bench/second_model_latency.py
    # measures the time)
    engine = await open_engine(home, embedder=fused, hook_timeout_seconds=120)
    rows: list[dict[str, Any]] = []
    try:
        memories, queries = evaluation.parse_recall_file(args.file)
        record_of = await evaluation.store_recall_memories(memories, engine)
        for dense_weight in _floats(args.dense):
            for second_weight in _floats(args.second):
                _reweighed(engine, fused, second_weight, dense_weight)
                report = await evaluation.ask_recall_queries(record_of, queries, engine)
                row = {"second_weight": second_weight, "vector_weight": dense_weight, "report": report}
                rows.append(row)
                by_category = {name: figures["recall@10"] for name, figures in report["by_category"].items()}
                print(
                    f"second {second_weight:.2f} dense {dense_weight:.2f}: R@5 {report['overall']['recall@5']:.4f} "
                    f"R@10 {report['overall']['recall@10']:.4f} MRR {report['overall']['mrr']:.4f} "
                    f"R@10 by category {json.dumps(by_category)} p50 {report['latency_ms']['p50']} ms",
                    flush=True,
                )
    finally:
        await engine.close()
        remove_home(home)
    return rows


def main() -> None:
    args = parse_args("recall quality with the second local model over a weight grid", _add_arguments)
    print(f"# bench/second_model_quality.py {args.file}  {machine_line()}")
    rows = asyncio.run(_run(args))
    if args.json_out:
        args.json_out.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
