"""API embedders against the fake OpenAI-compatible server on 127.0.0.1; the query cache; the
local model's query thread."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from amrita_plugin_cognition.config import EmbedderSettings
from amrita_plugin_cognition.index.embedders import (
    INLINE_MAX_SECONDS,
    CachedQueryEmbedder,
    EmbedderUnavailable,
    LocalUSEEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    build_embedder,
)


async def test_openai_embedder_batches_normalises_and_learns_the_dimension(fake_openai) -> None:
    embedder = OpenAIEmbedder(url=fake_openai.base_url, model="fake-embed", api_key="sk-test", batch_size=2)
    vectors = await embedder.embed(["小明吃火锅", "小红看电影", "老王跑步"])
    assert vectors.shape == (3, 64) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert len(fake_openai.embedding_requests) == 2  # batches of two
    assert embedder.fingerprint.dimension == 64 and embedder.fingerprint.protocol == "openai"
    sized = OpenAIEmbedder(url=fake_openai.base_url, model="fake-embed", dimensions=32)
    assert (await sized.embed(["x"])).shape == (1, 32)


async def test_ollama_embedder(fake_openai) -> None:
    embedder = OllamaEmbedder(url=fake_openai.root_url, model="bge-m3")
    vectors = await embedder.embed(["小明吃火锅", "小红看电影"])
    assert vectors.shape == (2, 64) and embedder.fingerprint.protocol == "ollama"
    assert fake_openai.embedding_requests[-1]["model"] == "bge-m3"


async def test_embedder_errors_are_typed(fake_openai) -> None:
    fake_openai.embeddings_down = True
    with pytest.raises(EmbedderUnavailable):
        await OpenAIEmbedder(url=fake_openai.base_url, model="m").embed(["x"])
    with pytest.raises(EmbedderUnavailable):
        await OllamaEmbedder(url=fake_openai.root_url, model="m").embed(["x"])
    with pytest.raises(EmbedderUnavailable):
        build_embedder(EmbedderSettings(provider="openai", url=""))


async def test_query_cache_avoids_repeat_requests(fake_openai) -> None:
    cached = CachedQueryEmbedder(OpenAIEmbedder(url=fake_openai.base_url, model="m"), ttl_seconds=60)
    first = await cached.embed_queries(["小明吃火锅", "小红看电影"])
    again = await cached.embed_queries(["小红看电影", "小明吃火锅"])
    assert len(fake_openai.embedding_requests) == 1
    assert np.allclose(first[0], again[1]) and np.allclose(first[1], again[0])
    expired = CachedQueryEmbedder(OpenAIEmbedder(url=fake_openai.base_url, model="m"), ttl_seconds=0)
    await expired.embed_queries(["x"])
    await expired.embed_queries(["x"])
    assert len(fake_openai.embedding_requests) == 3


async def test_api_query_embedding_has_a_deadline_and_document_embedding_keeps_its_timeout(fake_openai) -> None:
    embedder = OpenAIEmbedder(url=fake_openai.base_url, model="m", timeout=5)
    fake_openai.embeddings_delay = 0.5
    assert (await embedder.embed(["小明吃火锅"])).shape == (1, 64)  # documents: within the setting
    with pytest.raises(EmbedderUnavailable, match="no answer within"):
        await embedder.embed_queries(["小明吃火锅"], timeout=0.2)
    assert (await embedder.embed_queries(["小明吃火锅"], timeout=2)).shape == (1, 64)


async def test_local_model_still_loading_misses_the_deadline_then_answers() -> None:
    embedder = LocalUSEEmbedder()  # a model of its own: the first query loads it
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable, match="local embedder: no answer within"):
        await embedder.embed_queries(["小明下个月去成都出差"], timeout=0.05)
    assert time.monotonic() - started < 0.5
    vectors = await embedder.embed_queries(["小明下个月去成都出差"], timeout=60)
    assert vectors.shape == (1, 512) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


async def test_local_queries_run_on_the_event_loop_only_once_measured_fast() -> None:
    threads: list[str] = []

    class Model:
        seconds = 0.0

        def encode(self, texts: list[str]) -> np.ndarray:
            threads.append(threading.current_thread().name)
            time.sleep(self.seconds)
            return np.ones((len(texts), 512), dtype=np.float32)

    model = Model()
    embedder = LocalUSEEmbedder()
    embedder._load = lambda: setattr(embedder, "_model", model) or model  # type: ignore[method-assign]
    await embedder.embed_queries(["a"], timeout=1)
    await embedder.embed_queries(["b"], timeout=1)
    loop_thread = threading.current_thread().name
    assert threads == ["cognition-embed-query", loop_thread]  # measured fast on its thread first
    model.seconds = INLINE_MAX_SECONDS * 2  # measured slow: the next one goes back to its thread
    await embedder.embed_queries(["c"], timeout=1)
    await embedder.embed_queries(["d"], timeout=1)
    assert threads[2:] == [loop_thread, "cognition-embed-query"]


def test_the_local_model_holds_its_matrix_products_to_the_configured_blas_threads() -> None:
    """numpy's OpenBLAS keeps its worker threads spinning on a core after each product it shares
    among them (bench/blas_threads.py: recall turns every 50 ms took 122 % of a core against 24 %
    with the hold): the model's products run on ``embedder.threads`` BLAS threads, whatever the
    process's own setting (here 2, so a lost hold shows on a one-core machine too)."""
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()
    assert controller.select(user_api="blas").lib_controllers, "numpy's BLAS is not visible to threadpoolctl"
    embedder = LocalUSEEmbedder(threads=1)
    texts = [f"第{number}次说起周末去爬山的事" for number in range(64)]
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(lib["num_threads"] for lib in controller.select(user_api="blas").info())

    with controller.limit(limits=2, user_api="blas"):
        embedder.embed_sync(texts[:1])  # the model loaded outside the watch
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            for _ in range(10):
                embedder.embed_sync(texts)
                if 1 in seen:
                    break
        finally:
            done.set()
            watcher.join()
        after = {lib["num_threads"] for lib in controller.select(user_api="blas").info()}
    assert 1 in seen, seen
    assert after == {2}  # the rest of the process keeps its own setting
