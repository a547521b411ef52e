"""A second process writing into one chat (tests/e2e/test_concurrency.py): the per-chat limits and
memo appends must hold across processes. Prints one JSON line with what was acknowledged.

Usage: python process_writer.py DATABASE_URL HOME BOT TAG COUNT
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ["COGNITION_ENGINE_ONLY"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"


class HashEmbedder:
    """Deterministic, instant vectors: this process only exercises the authority store."""

    dimension = 16

    def __init__(self) -> None:
        from amrita_plugin_cognition.index.embedders import Fingerprint

        self.fingerprint = Fingerprint("test", "hash16", "", self.dimension)

    async def embed(self, texts: list[str]) -> np.ndarray:
        rows = [np.random.default_rng(abs(hash(text)) % 2**32).normal(size=self.dimension) for text in texts]
        matrix = np.array(rows, dtype=np.float32).reshape(len(texts), self.dimension)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)

    async def embed_queries(self, texts: list[str]) -> np.ndarray:
        return await self.embed(texts)


async def main(database_url: str, home: Path, bot: str, tag: str, count: int) -> None:
    from amrita_plugin_cognition.standalone import init_engine_only

    init_engine_only(home, "ERROR", database_url)
    from nonebot_plugin_orm import get_session

    from amrita_plugin_cognition.config import CognitionConfig
    from amrita_plugin_cognition.domain.records import ChatContext, Scope
    from amrita_plugin_cognition.engine import notes
    from amrita_plugin_cognition.engine.factory import build_engine
    from amrita_plugin_cognition.errors import LimitExceeded

    config = CognitionConfig.model_validate({"memories_max_per_scope": 10, "pins_max_per_scope": 5})
    engine = build_engine(config, home / "data", get_session, embedder=HashEmbedder())  # type: ignore[arg-type]
    await engine.start()
    admin = ChatContext(bot, Scope("group", "20001"), f"1{tag}", f"进程{tag}", group_role="admin")
    memories = pins = 0
    appended: list[str] = []
    for index in range(count):
        try:
            await engine.memories.write(admin, "group", f"进程{tag}写入的第{index}条群事实，编号{index}。")
            memories += 1
        except LimitExceeded:
            pass
        try:
            await notes.add_pin(engine, admin, f"进程{tag}的提醒{index}")
            pins += 1
        except LimitExceeded:
            pass
        line = f"进程{tag}追加{index}"
        await notes.append_memo(engine, admin, line)
        appended.append(line)
    await engine.settle()
    print(json.dumps({"memories": memories, "pins": pins, "appended": appended}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    url, home, bot, tag, count = sys.argv[1:6]
    asyncio.run(main(url, Path(home), bot, tag, int(count)))
    os._exit(0)
