"""API embedders against the fake OpenAI-compatible server on 127.0.0.1; the query cache."""

from __future__ import annotations

import numpy as np
import pytest

from amrita_plugin_cognition.config import EmbedderSettings
from amrita_plugin_cognition.index.embedders import (
    CachedQueryEmbedder,
    EmbedderUnavailable,
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
