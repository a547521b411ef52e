"""Make a real amrita-plugin-memory data folder with amrita-plugin-memory itself (its 0.8.1 wheel
from PyPI is a dev dependency: ``uv sync`` installs it on Python >= 3.11, which it requires).

Run as a script in its own process (it boots NoneBot with that plugin loaded, so never inside the
test session's NoneBot):

    python tests/apm_fixture.py OUT_FOLDER

OUT_FOLDER gets ``data/amrita_plugin_memory/`` (the plugin's data folder: its Chroma folder,
knowledge base and profile) and ``data/nonebot_plugin_orm/db.sqlite3`` (the bot's database, where
the plugin keeps memos and its background loop's state), written by the plugin's own functions;
embeddings come from the fake OpenAI-compatible server on 127.0.0.1 (``fake_openai.py``). What it
writes is listed in ``RECORDS`` (the tests import it to know what to expect).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

#: (chat key, scope, text, tags, importance) of the long-term memories written.
MEMORIES = [
    ("QQPlatform_Group_20001", "group", "群里约定每周五晚上八点一起打游戏", "约定,游戏", "high"),
    ("QQPlatform_Private_10001", "user", "阿明对花生过敏，吃了会起疹子", "健康", "high"),
    ("QQPlatform_Private_10001", "user", "阿明的服务器密码是 hunter2-Secret-99", "账号", "medium"),
    ("QQPlatform_Private_10002", "user", "小红养了一只叫团子的橘猫", "宠物", "low"),
]
MEMOS = {
    "QQPlatform_Group_20001": "本群是桌游爱好者群，群主是老王。",
    "QQPlatform_Private_10001": "阿明希望被称呼为明哥。",
}
KNOWLEDGE = [("周五游戏夜", "每周五晚八点的联机游戏活动", "地点：线上语音房间\n常玩：狼人杀、剧本杀")]
PROFILE = ("阿明，程序员，喜欢桌游。", "饮食：对花生过敏\n爱好：桌游、跑步")
SUGGESTIONS = [{"action": "create", "title": "群规", "summary": "群规摘要", "body": "不刷屏", "reason": "", "kid": ""}]
RECORDS = {"memory": len(MEMORIES), "memo": len(MEMOS), "knowledge": len(KNOWLEDGE), "profile": 1}


async def _write(data_dir: Path) -> None:
    import chromadb
    from amrita_plugin_memory import memo, vector
    from amrita_plugin_memory.profile_store import PROFILE_PATH
    from amrita_plugin_memory.rethinking.knowledge import KnowledgeBaseManager
    from amrita_plugin_memory.rethinking.runner import SubconsciousRunner

    # L2: the plugin's own writer (``AsyncUserMemory.add_note``), embedding through its preset
    memories = vector.AsyncUserMemory(vector.get_db_conn())
    for key, scope, text, tags, importance in MEMORIES:
        metadata = vector.MemoryMetadata(tags=tags, importance=importance, scope=scope)
        await memories.add_note(key, text, metadata)
    # L1: one memo per chat key (``memo.set_memo``)
    for key, content in MEMOS.items():
        await memo.set_memo(key, content)
    # the knowledge base (``KnowledgeBaseManager.create``: file + index + vector)
    knowledge = KnowledgeBaseManager(data_dir=data_dir)
    await knowledge.init()
    for title, summary, body in KNOWLEDGE:
        await knowledge.create(title, summary, body)
    # the profile of the loop's target user (``SubconsciousRunner._update_profile``)
    await SubconsciousRunner._update_profile(SimpleNamespace(_profile_path=PROFILE_PATH), *PROFILE)  # type: ignore[arg-type]
    # the loop's state row (``SubconsciousRunner._write_state_payload``)
    state = {"total_runs": 3, "penalty": 0, "knowledge_suggestions": SUGGESTIONS, "pending_messages": []}
    await SubconsciousRunner._write_state_payload("amrita_memory", state)
    del chromadb


def main(out: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from fake_openai import FakeOpenAI

    fake = FakeOpenAI()
    fake.start()
    os.environ.update(
        ANONYMIZED_TELEMETRY="False",
        EMBEDDING_MODEL_URL=fake.base_url,
        EMBEDDING_MODEL_NAME="fake-embedding",
        EMBEDDING_PROCTOL="ollama-embed",  # its own adapter; the fake answers /api/embed,
        EMBEDDING_MODEL_API_KEY="sk-test",
        EMBED_CHECK_ON_STARTUP="false",
    )
    data = out / "data"
    database = data / "nonebot_plugin_orm" / "db.sqlite3"
    database.parent.mkdir(parents=True, exist_ok=True)
    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter

    nonebot.init(
        driver="~fastapi",
        localstore_config_dir=str(out / "config"),
        localstore_data_dir=str(data),
        localstore_cache_dir=str(out / "cache"),
        sqlalchemy_database_url=f"sqlite+aiosqlite:///{database}",
        webui_enable=False,
        log_level="WARNING",
    )
    nonebot.get_driver().register_adapter(Adapter)
    nonebot.load_plugin("amrita_plugin_memory")
    from nonebot_plugin_orm.__main__ import main as orm_main

    orm_main(["upgrade"], prog_name="orm", standalone_mode=False)

    async def run() -> None:
        driver = nonebot.get_driver()
        await driver._lifespan.startup()  # type: ignore[attr-defined]
        try:
            await _write(data / "amrita_plugin_memory")
        finally:
            await driver._lifespan.shutdown()  # type: ignore[attr-defined]

    try:
        asyncio.run(run())
    finally:
        fake.stop()
    print(json.dumps({"data_dir": str(data / "amrita_plugin_memory"), "database": str(database)}))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
