"""Typed configuration, every default documented in one place.

Sources, later ones win: the defaults below; a TOML file (``cognition.toml`` in the plugin's
config folder, or the path in ``COGNITION_CONFIG``); environment variables
``COGNITION_<KEY>`` for top-level keys and ``COGNITION_<SECTION>__<KEY>`` for nested ones
(``COGNITION_EMBEDDER__PROVIDER=openai``). Values of the form ``${NAME}`` are read from the
environment, so secrets such as API keys need not sit in the file.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from .errors import ConfigurationError
from .llm.settings import LLMSettings

CONFIG_FILE_NAME = "cognition.toml"
ENV_PREFIX = "COGNITION_"


class EmbedderSettings(BaseModel):
    provider: Literal["local", "openai", "ollama"] = "local"
    url: str = ""
    api_key: str = ""
    model: str = ""
    dimensions: int = Field(0, ge=0)
    batch_size: int = Field(64, ge=1, le=2048)
    timeout: float = Field(15.0, gt=0)
    #: CPU threads for the local model.
    threads: int = Field(1, ge=1, le=64)
    #: What to do when the stored fingerprint differs from the configured embedder.
    on_mismatch: Literal["auto", "ask", "never"] = "auto"
    query_cache_seconds: float = Field(300.0, ge=0)


class ChromaSettings(BaseModel):
    mode: Literal["embedded", "server"] = "embedded"
    #: Embedded: folder (relative paths are under the data folder).
    path: str = "chroma"
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    ssl: bool = False
    headers: dict[str, str] = Field(default_factory=dict)
    tenant: str = "default_tenant"
    database: str = "default_database"
    #: Embedded: a call that takes longer is given up and vector search is off until it returns.
    call_timeout_seconds: float = Field(120.0, ge=1, le=3600)


class RecallSettings(BaseModel):
    top_k: int = Field(8, ge=1, le=50)
    candidates: int = Field(50, ge=5, le=500)
    #: "score": weighted sum of normalised scores (measured best); "rrf": reciprocal-rank fusion.
    fusion: Literal["score", "rrf"] = "score"
    dense_normalisation: Literal["minmax", "ratio"] = "minmax"
    vector_weight: float = Field(0.6, ge=0)
    keyword_weight: float = Field(0.4, ge=0)
    rrf_k: float = Field(60.0, gt=0)
    #: Added to the relevance of facts said by someone the query names.
    speaker_boost: float = Field(0.3, ge=0, le=5)
    recency_floor: float = Field(0.85, ge=0, le=1)
    recency_min_similarity: float = Field(0.3, ge=-1, le=1)
    mmr_lambda: float = Field(0.7, ge=0, le=1)
    #: Pseudo-relevance feedback: candidates close to the best few keep more of their score (0 = off).
    feedback_weight: float = Field(2.0, ge=0, le=10)
    feedback_docs: int = Field(3, ge=1, le=20)
    #: Queries this short (in characters) get the previous message as context.
    short_query_chars: int = Field(20, ge=0)
    #: Token budget of the injected memory block.
    token_budget: int = Field(1200, ge=100, le=32000)
    current_group_boost: float = Field(1.15, ge=1)
    current_private_boost: float = Field(1.25, ge=1)


class CognitionConfig(BaseModel):
    #: Master switch of the plugin (hook, tools, commands).
    enable: bool = True
    #: "strict": each group sees only its own memories; "open": groups see each other's too.
    scope_policy: Literal["strict", "open"] = "strict"
    #: Time zone used to show times to the model and to users.
    timezone: str = "Asia/Shanghai"
    #: Data folder; empty = the plugin folder nonebot-plugin-localstore assigns.
    data_dir: str = ""
    memo_max_chars: int = Field(1000, ge=50, le=20000)
    memory_max_chars: int = Field(500, ge=20, le=5000)
    pins_max_per_scope: int = Field(50, ge=1, le=1000)
    memories_max_per_scope: int = Field(100000, ge=10)
    #: Chats where the plugin is off, e.g. ["group:20001", "private:10001"].
    disabled_scopes: list[str] = Field(default_factory=list)
    outbox_interval_seconds: float = Field(30.0, ge=1)
    #: The per-turn memory lookup gives up after this long and the reply goes on without memory.
    hook_timeout_seconds: float = Field(5.0, ge=0.1, le=120)
    #: Within a turn's memory lookup, the vector side (embedding + Chroma) gets at most this
    #: share of ``hook_timeout_seconds``; when it misses, the turn keeps the keyword results.
    vector_budget_share: float = Field(0.6, gt=0, le=1)
    #: Every tool call and chat command of the plugin gives up after this long (answering so).
    tool_timeout_seconds: float = Field(20.0, ge=1, le=600)
    #: Vector-index work of one fact is retried with backoff this many times, then kept as
    #: "dead" (counted by ``status``, retried by ``ambot cognition outbox retry``).
    outbox_max_attempts: int = Field(8, ge=1, le=100)
    #: Replaced versions of each chat's pinned memo kept for ``ambot cognition memo restore``.
    memo_revisions_keep: int = Field(5, ge=0, le=100)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    chroma: ChromaSettings = Field(default_factory=ChromaSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    @field_validator("timezone")
    @classmethod
    def _check_timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise ValueError(f"unknown time zone {value!r}") from error
        return value

    @field_validator("disabled_scopes")
    @classmethod
    def _check_scopes(cls, value: list[str]) -> list[str]:
        for key in value:
            kind, _, scope_id = key.partition(":")
            if kind not in ("group", "private") or not scope_id:
                raise ValueError(f"{key!r} is not 'group:<id>' or 'private:<id>'")
        return value


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand_env(value: Any, environ: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _ENV_REF.sub(lambda match: environ.get(match.group(1), ""), value)
    if isinstance(value, dict):
        return {key: _expand_env(item, environ) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand_env(item, environ) for item in value]
    return value


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == f"{ENV_PREFIX}CONFIG":
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        target = overrides
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = _parse_env_value(raw)
    return overrides


def _parse_env_value(raw: str) -> Any:
    """Env values are TOML literals when they parse as one (numbers, booleans, lists), else text."""
    try:
        return tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        return raw


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_config(path: Path | None = None, environ: dict[str, str] | None = None) -> CognitionConfig:
    """Read the configuration from ``path`` (if it exists) and the environment."""
    environ = dict(os.environ) if environ is None else environ
    if path is None and environ.get(f"{ENV_PREFIX}CONFIG"):
        path = Path(environ[f"{ENV_PREFIX}CONFIG"])
    data: dict[str, Any] = {}
    if path is not None and path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise ConfigurationError(
                f"配置文件 {path} 不是有效的 TOML：{error}", en=f"{path}: not valid TOML: {error}"
            ) from error
    data = _deep_merge(data, _env_overrides(environ))
    try:
        return CognitionConfig.model_validate(_expand_env(data, environ))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigurationError(
            f"配置项 {where} 无效：{first['msg']}", en=f"config key {where}: {first['msg']}"
        ) from error
