"""The plugin's process-wide engine: paths from nonebot-plugin-localstore, sessions from
nonebot-plugin-orm. Shared by the bot adapter and the CLI run under ``ambot``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .config import CONFIG_FILE_NAME, CognitionConfig, load_config
from .engine.factory import build_engine
from .engine.service import CognitionEngine

PLUGIN_NAME = "amrita_plugin_cognition"

_engine: CognitionEngine | None = None
_engine_lock = asyncio.Lock()
#: Set when startup refused the engine (e.g. an embedding model mismatch nobody confirmed).
_unavailable_reason: str | None = None


class EngineUnavailable(RuntimeError):
    """Memory is switched off for this process; the message says why."""


def mark_unavailable(reason: str | None) -> None:
    global _unavailable_reason
    _unavailable_reason = reason


def config_file() -> Path:
    from nonebot_plugin_localstore import get_config_dir

    return get_config_dir(PLUGIN_NAME) / CONFIG_FILE_NAME


def plugin_config() -> CognitionConfig:
    return load_config(config_file())


def data_dir(config: CognitionConfig) -> Path:
    if config.data_dir:
        return Path(config.data_dir)
    from nonebot_plugin_localstore import get_data_dir

    return get_data_dir(PLUGIN_NAME)


async def get_engine() -> CognitionEngine:
    """The started engine of this process (built on first use)."""
    global _engine
    if _unavailable_reason is not None:
        raise EngineUnavailable(_unavailable_reason)
    if _engine is not None:
        return _engine
    async with _engine_lock:
        if _engine is None:
            from nonebot_plugin_orm import get_session

            config = plugin_config()
            engine = build_engine(config, data_dir(config), get_session)
            await engine.start()
            _engine = engine
    return _engine


def set_engine(engine: CognitionEngine | None) -> None:
    """Replace the process engine (tests, standalone runs)."""
    global _engine
    _engine = engine
