"""Build a ready engine from configuration: the same assembly for the bot, the CLI and the harness."""

from __future__ import annotations

from pathlib import Path

from ..config import CognitionConfig
from ..index.embedders import Embedder, build_embedder
from ..index.vector import ChromaVectorIndex
from ..llm.gateway import LLMGateway
from .service import CognitionEngine, SessionFactory


def build_engine(
    config: CognitionConfig,
    data_dir: Path,
    session_factory: SessionFactory,
    embedder: Embedder | None = None,
) -> CognitionEngine:
    data_dir.mkdir(parents=True, exist_ok=True)
    return CognitionEngine(
        config=config,
        session_factory=session_factory,
        embedder=embedder or build_embedder(config.embedder),
        vector_index=ChromaVectorIndex(config.chroma, data_dir),
        data_dir=data_dir,
        llm=LLMGateway(config.llm),
    )
