"""A historian worker in a process of its own (tests/integration/test_historian.py kills it with SIGKILL
mid-job). It polls the shared queue until it is killed.

Usage: python process_historian.py DATABASE_URL HOME MODEL_BASE_URL PRESET
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ["COGNITION_ENGINE_ONLY"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"
sys.path.insert(0, str(Path(__file__).parent))

from process_writer import HashEmbedder


async def main(database_url: str, home: Path, base_url: str, preset: str) -> None:
    from amrita_plugin_cognition.standalone import init_engine_only

    init_engine_only(home, "ERROR", database_url)
    from amrita_core import ModelPreset, PresetManager
    from nonebot_plugin_orm import get_session

    from amrita_plugin_cognition.cli.loopback import chat_preset
    from amrita_plugin_cognition.config import CognitionConfig
    from amrita_plugin_cognition.engine.factory import build_engine

    model = chat_preset(preset, "historian-model", base_url, "sk", False)
    PresetManager().add_preset(ModelPreset.model_validate(model))
    config = CognitionConfig.model_validate(
        {
            "llm": {"preset": preset, "timeout_seconds": 30},
            "historian": {"max_concurrency": 2, "job_lease_seconds": 10},
            "profiles": {"merge": False},  # the historian alone: merges are tested in test_profile_merge.py
        }
    )
    engine = build_engine(config, home / "data", get_session, embedder=HashEmbedder())  # type: ignore[arg-type]
    await engine.start()
    print("started", flush=True)
    while True:  # until killed
        await engine.historian.tick()
        await asyncio.sleep(0.05)


if __name__ == "__main__":
    url, home, base_url, preset = sys.argv[1:5]
    asyncio.run(main(url, Path(home), base_url, preset))
