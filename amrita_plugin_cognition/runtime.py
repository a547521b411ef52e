"""The plugin's process-wide engine: paths from nonebot-plugin-localstore, sessions from
nonebot-plugin-orm. Shared by the bot adapter and the CLI run under ``ambot``."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from .config import CONFIG_FILE_NAME, CognitionConfig, ConfigurationError, load_config
from .engine.factory import build_engine
from .engine.service import CognitionEngine
from .errors import EngineUnavailable

PLUGIN_NAME = "amrita_plugin_cognition"
logger = logging.getLogger("cognition")

_engine: CognitionEngine | None = None
_engine_lock = asyncio.Lock()
#: Set when startup refused the engine (e.g. an embedding model mismatch nobody confirmed).
_unavailable_reason: str | None = None


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


def current_engine() -> CognitionEngine | None:
    """The engine if one was built in this process (never builds one)."""
    return _engine


async def get_engine() -> CognitionEngine:
    """The started engine of this process (built on first use)."""
    global _engine
    if _unavailable_reason is not None:
        raise EngineUnavailable(_unavailable_reason)
    if _engine is not None:
        _reload_if_changed(_engine)
        return _engine
    async with _engine_lock:
        if _engine is None:
            from nonebot_plugin_orm import get_session

            _config_state["mtime"] = _config_mtime()
            config = plugin_config()
            engine = build_engine(config, data_dir(config), get_session)
            await engine.start()
            _engine = engine
    return _engine


#: Keys that need a restart: they decide which model, index and folder the engine opened.
RESTART_KEYS = ("embedder", "chroma", "data_dir", "outbox_interval_seconds")
_config_state: dict[str, float | None] = {"mtime": None}


def _config_mtime() -> float | None:
    try:
        return config_file().stat().st_mtime
    except OSError:
        return None


def _reload_if_changed(engine: CognitionEngine) -> None:
    """Hot reload: a changed config file applies at the next turn, except the restart keys."""
    mtime = _config_mtime()
    if mtime == _config_state["mtime"]:
        return
    _config_state["mtime"] = mtime
    try:
        fresh = plugin_config()
    except ConfigurationError as error:
        logger.error("[cognition] stage=config_reload rejected=%s (keeping the previous configuration)", error)
        return
    kept = {key: getattr(engine.config, key) for key in RESTART_KEYS}
    changed = [key for key in RESTART_KEYS if getattr(fresh, key) != kept[key]]
    engine.config = fresh.model_copy(update=kept)
    logger.info("[cognition] stage=config_reload applied=1 restart_needed_for=%s", ",".join(changed) or "-")
