"""Typed configuration, every default documented in one place.

Sources, later ones win: the defaults below; a TOML file (where it is: ``config_location``;
the path in ``COGNITION_CONFIG`` when set); environment variables
``COGNITION_<KEY>`` for top-level keys and ``COGNITION_<SECTION>__<KEY>`` for nested ones
(``COGNITION_EMBEDDER__PROVIDER=openai``). Values of the form ``${NAME}`` are read from the
environment, so secrets such as API keys need not sit in the file; an unset ``NAME`` is an error.

Values are strict: a key takes only its own type (``enable = "yes"`` is refused, as is a number
in quotes), and an invalid value is refused naming the file or variable, the key, what it takes
and what it was. An environment variable, or a whole ``${NAME}`` in the file, is read as a TOML
literal for a key that is no text (``COGNITION_RECALL__TOP_K=12``, ``port = "${CHROMA_PORT}"``)
and as the text it is for a key that is (an API key of digits stays text).

Unknown keys are refused, naming the file (or environment variable), the dotted key and the
nearest valid key. Environment variables with the prefix whose first part is no configuration
key (``COGNITION_ENGINE_ONLY``, ``COGNITION_HOME`` …) belong to other parts of the project and
are ignored; one that names a section with an unknown key (``COGNITION_EMBEDDER__PROVDIER``) is
refused like a key in the file.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo

from .config_renames import _RENAMED_BY_OLD, RENAMED_KEYS, RenamedKey, _move_renamed, _Source, _warn_renamed
from .domain.records import parse_chat_key
from .errors import ConfigurationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, as a package before Python 3.11
    import tomli as tomllib
from .llm.settings import LLMSettings

ENV_PREFIX = "COGNITION_"
#: The one prefixed variable that is not an override: where the file is.
CONFIG_ENV = f"{ENV_PREFIX}CONFIG"

__all__ = [
    "CONFIG_ENV",
    "ENV_PREFIX",
    "RENAMED_KEYS",
    "ChromaSettings",
    "CognitionConfig",
    "EmbedderSettings",
    "HistorianSettings",
    "LLMSettings",
    "ProfileSettings",
    "RecallSettings",
    "RenamedKey",
    "load_config",
]

logger = logging.getLogger("cognition")


class _Settings(BaseModel):
    """Base of every settings section: a key the model does not know is an error, and a value is
    taken only as its own type (strict: ``enable = "yes"`` or ``top_k = "8"`` is refused, naming
    the key, instead of being read as true or 8; a whole number is a valid float)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class EmbedderSettings(_Settings):
    provider: Literal["local", "openai", "ollama"] = "local"
    url: str = ""
    api_key: str = ""
    model: str = ""
    dimensions: int = Field(0, ge=0)
    batch_size: int = Field(64, ge=1, le=2048)
    #: One embedding request gives up after this long.
    timeout_seconds: float = Field(15.0, gt=0)
    #: CPU threads for the local model.
    threads: int = Field(1, ge=1, le=64)
    #: What to do when the stored fingerprint differs from the configured embedder.
    on_mismatch: Literal["auto", "ask", "never"] = "auto"
    query_cache_seconds: float = Field(300.0, ge=0)


class ChromaSettings(_Settings):
    mode: Literal["embedded", "server"] = "embedded"
    #: Embedded: folder (relative paths are under the data folder).
    path: str = "chroma"
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    ssl: bool = False
    headers: dict[str, str] = Field(default_factory=dict)
    tenant: str = "default_tenant"
    database: str = "default_database"
    #: Both modes: a call that takes longer is given up and vector search is off until it returns
    #: (a hung server degrades like a dead one).
    call_timeout_seconds: float = Field(120.0, ge=1, le=3600)


class RecallSettings(_Settings):
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


class HistorianSettings(_Settings):
    """The historian: the ``end`` tool's jobs and transcript capture, turned into absolute facts."""

    #: Which turns reach the historian: "end" (only what the model hands to the ``end`` tool),
    #: "transcript" (turns are extracted from the transcript, ``end`` only writes notes), or
    #: "both" (``end`` when the model calls it; otherwise the turn is extracted from the transcript).
    capture: Literal["end", "transcript", "both"] = "both"
    #: amrita_core model preset of the historian's calls; empty = ``llm.preset`` (the chat's default).
    preset: str = ""
    #: Jobs in flight at once in this process.
    max_concurrency: int = Field(4, ge=1, le=64)
    #: How often the queue is polled (an enqueue wakes the workers at once as well).
    poll_interval_seconds: float = Field(5.0, ge=0.2, le=3600)
    #: How long a worker's lease on a job lasts (renewed while it runs); a lease that runs out (its
    #: worker died or hung) is recovered and the job run again, counting one attempt.
    job_lease_seconds: float = Field(600.0, ge=10, le=86400)
    #: Attempts of a job in all (the first one included), with exponential backoff between them;
    #: after the last one the job is "dead" (kept with its error, revived by ``jobs retry``).
    job_max_attempts: int = Field(4, ge=1, le=21)
    #: Dead jobs kept (newest first) and for how long, for ``ambot cognition jobs``.
    dead_jobs_keep: int = Field(1000, ge=0)
    dead_jobs_keep_days: float = Field(30.0, ge=0)
    #: Recent messages of the chat a job carries for disambiguation, each clipped to
    #: ``source_message_max_chars`` characters (the current input batch too).
    recent_messages_k: int = Field(10, ge=0, le=100)
    source_message_max_chars: int = Field(500, ge=20, le=10000)
    #: Transcript capture: a chat's turns without ``end`` are extracted in one call once this
    #: many wait, or once the chat has been quiet for ``transcript_pause_seconds``.
    transcript_batch_turns: int = Field(8, ge=1, le=100)
    transcript_pause_seconds: float = Field(120.0, ge=1, le=86400)
    #: Short-term notes and transcript turns kept per chat (older ones are trimmed while idle).
    notes_keep: int = Field(200, ge=1, le=100000)
    turns_keep: int = Field(200, ge=1, le=100000)


class ProfileSettings(_Settings):
    """Profile cards: the replaced versions kept per card, each section's length limit, the merge."""

    #: Replaced versions kept per card (``ambot cognition profile restore``).
    revisions_keep: int = Field(5, ge=0, le=100)
    evaluation_max_chars: int = Field(200, ge=20, le=5000)
    body_max_chars: int = Field(800, ge=50, le=20000)
    roast_max_chars: int = Field(80, ge=10, le=1000)
    #: The historian's merge step: after a job writes facts, each card they touch is merged by
    #: the model (off: cards change only by restore, the CLI and the Python API).
    merge: bool = True
    #: A merge waits this long after the first job that asks for it; the jobs for the same card
    #: within the window become one merge (one model call).
    merge_window_seconds: float = Field(600.0, ge=0, le=86400)
    #: amrita_core model preset of the merge calls; empty = ``historian.preset``.
    merge_preset: str = ""
    #: Past facts of the entity (the closest to the new observations) shown to each merge.
    merge_top_k: int = Field(20, ge=1, le=200)


class CognitionConfig(_Settings):
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
    #: Attempts of one fact's vector-index work in all, with backoff between them; after the last
    #: one the row is "dead" (counted by ``status``, revived by ``ambot cognition outbox retry``).
    outbox_max_attempts: int = Field(8, ge=1, le=100)
    #: How long a drain holds the outbox rows it took: other processes pass them by meanwhile, and
    #: rows of a drain that died are due again after it (as ``historian.job_lease_seconds``).
    outbox_lease_seconds: float = Field(300.0, ge=10, le=86400)
    #: Replaced versions of each chat's pinned memo kept for ``ambot cognition memo restore``.
    memo_revisions_keep: int = Field(5, ge=0, le=100)
    #: The chat's last short-term notes (the ``end`` tool's memos) injected each turn.
    recent_notes_inject_k: int = Field(30, ge=0, le=500)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    chroma: ChromaSettings = Field(default_factory=ChromaSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    historian: HistorianSettings = Field(default_factory=HistorianSettings)
    profiles: ProfileSettings = Field(default_factory=ProfileSettings)

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        """Old key names (``RENAMED_KEYS``) under their new names, silently: ``load_config`` has
        warned already; this covers the WebUI's class reading the file as written."""
        return _move_renamed(data) if isinstance(data, dict) else data

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
            parse_chat_key(key)  # 'group:<QQ number>' or 'private:<QQ number>', else a ValueError
        return value


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _section_model(field: FieldInfo) -> type[BaseModel] | None:
    """The settings model of a section field (``embedder``, ``recall`` …), else None."""
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _all_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for name, field in model.model_fields.items():
        keys.append(prefix + name)
        section = _section_model(field)
        if section is not None:
            keys.extend(_all_keys(section, f"{prefix}{name}."))
    return keys


def _nearest_key(key: str, model: type[BaseModel], prefix: str) -> str | None:
    """The valid key closest to ``key``: a similar one in the same section, else a key of the
    same or a similar name elsewhere (``top_k`` written at the top level → ``recall.top_k``)."""
    #: a misspelt old name (``RENAMED_KEYS``) points to its new name
    old_names = {
        renamed.old[len(prefix) :]: renamed.new.rsplit(".", 1)[-1]
        for renamed in RENAMED_KEYS
        if renamed.old.startswith(prefix) and "." not in renamed.old[len(prefix) :]
    }
    close = difflib.get_close_matches(key, [*model.model_fields, *old_names], n=1, cutoff=0.6)
    if close:
        return prefix + old_names.get(close[0], close[0])
    elsewhere = _all_keys(CognitionConfig)
    same_name = [dotted for dotted in elsewhere if dotted.rsplit(".", 1)[-1] == key]
    if same_name:
        return same_name[0]
    close = difflib.get_close_matches(key, elsewhere, n=1, cutoff=0.75)
    return close[0] if close else None


def _unknown_key_error(source: _Source, unknown: list[tuple[str, str | None]]) -> ConfigurationError:
    zh_parts = [f"未知配置项 {key}" + (f"（是不是 {nearest}？）" if nearest else "") for key, nearest in unknown]
    en_parts = [
        f"unknown config key {key}" + (f" (did you mean {nearest}?)" if nearest else "") for key, nearest in unknown
    ]
    return ConfigurationError(f"{source.zh}：{'；'.join(zh_parts)}", en=f"{source.en}: {'; '.join(en_parts)}")


def _unknown_keys(data: dict[str, Any], model: type[BaseModel], prefix: str = "") -> list[tuple[str, str | None]]:
    """Every key of ``data`` (recursively, through sections) that ``model`` does not define,
    with the nearest valid key."""
    unknown: list[tuple[str, str | None]] = []
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            unknown.append((prefix + key, _nearest_key(key, model, prefix)))
            continue
        section = _section_model(field)
        if section is not None and isinstance(value, dict):
            unknown.extend(_unknown_keys(value, section, f"{prefix}{key}."))
    return unknown


def _expand_env(value: Any, environ: dict[str, str], where: str, source: _Source) -> Any:
    """Replace ``${NAME}`` with the variable's value; an unset variable is an error."""
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in environ:
                raise ConfigurationError(
                    f"{source.zh}：配置项 {where} 引用的环境变量 {name} 未设置",
                    en=f"{source.en}: config key {where} refers to environment variable {name}, which is not set",
                )
            return environ[name]

        return _ENV_REF.sub(substitute, value)
    if isinstance(value, dict):
        return {
            key: _expand_env(item, environ, f"{where}.{key}" if where else str(key), source)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_expand_env(item, environ, f"{where}[{index}]", source) for index, item in enumerate(value)]
    return value


def _env_overrides(environ: dict[str, str]) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """The overrides in the environment, and which variable set each key path.

    A variable whose first part is no top-level key is not an override (other parts of the
    project use the prefix too) and is ignored; one that goes into a section and names an
    unknown key there is an error.
    """
    overrides: dict[str, Any] = {}
    origins: dict[tuple[str, ...], str] = {}
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name == CONFIG_ENV:
            continue
        path = tuple(name[len(ENV_PREFIX) :].lower().split("__"))
        renamed = _RENAMED_BY_OLD.get(".".join(path))
        if renamed is not None:  # an old name: set under the new one, unless that is set as well
            path = tuple(renamed.new.split("."))
        if path[0] not in CognitionConfig.model_fields:
            logger.debug("[cognition] stage=config env=%s ignored=not_a_config_key", name)
            continue
        model: type[BaseModel] | None = CognitionConfig
        annotation: Any = None
        for depth, part in enumerate(path):
            if model is None:  # below a plain value or a table such as chroma.headers: its items
                annotation = (get_args(annotation) or (Any,))[-1]
                continue
            prefix = "".join(f"{step}." for step in path[:depth])
            field = model.model_fields.get(part)
            if field is None:
                raise _unknown_key_error(_Source.env(name), [(prefix + part, _nearest_key(part, model, prefix))])
            model, annotation = _section_model(field), field.annotation
        target = overrides
        for part in path[:-1]:
            nested = target.setdefault(part, {})
            if not isinstance(nested, dict):  # a whole section was set too; the longer path wins
                nested = target[part] = {}
            target = nested
        raw = _expand_env(environ[name], environ, ".".join(path), _Source.env(name))
        value = raw if _holds_text(annotation) else _parse_env_value(raw)
        if renamed is not None:
            both = _env_name(renamed.new) in environ
            converted = renamed.convert(value) if renamed.convert else value
            _warn_renamed(renamed, _Source.env(name), both, value, converted)
            if both:
                continue
            value = converted
        target[path[-1]] = value
        origins[path] = name
    return overrides, origins


def _env_name(dotted: str) -> str:
    """The environment variable of a dotted key (``embedder.timeout_seconds`` →
    ``COGNITION_EMBEDDER__TIMEOUT_SECONDS``)."""
    return ENV_PREFIX + dotted.upper().replace(".", "__")


def _holds_text(annotation: Any) -> bool:
    """Whether a key of this type holds text: ``str``, a choice of strings, or either or None."""
    if annotation is str:
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return all(isinstance(choice, str) for choice in get_args(annotation))
    if origin in (Union, types.UnionType):
        inner = [arg for arg in get_args(annotation) if arg is not type(None)]
        return len(inner) == 1 and _holds_text(inner[0])
    return False


def _typed_references(written: dict[str, Any], expanded: dict[str, Any], model: type[BaseModel]) -> None:
    """A key that is no text, written as a whole ``${NAME}`` reference (``port = "${PORT}"``),
    takes the variable's value as a TOML literal (in place in ``expanded``)."""
    for key, value in written.items():
        field = model.model_fields.get(key)
        if field is None:
            continue
        section = _section_model(field)
        if section is not None and isinstance(value, dict):
            _typed_references(value, expanded[key], section)
        elif isinstance(value, str) and _ENV_REF.fullmatch(value.strip()) and not _holds_text(field.annotation):
            expanded[key] = _parse_env_value(expanded[key])


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


def _source_of(location: tuple[str, ...], origins: dict[tuple[str, ...], str], file: _Source | None) -> _Source | None:
    """Who set the key at ``location``: the environment variable that covers it, else the file
    (None: a default, e.g. a validator that looks at several keys)."""
    for depth in range(len(location), 0, -1):
        name = origins.get(location[:depth])
        if name is not None:
            return _Source.env(name)
    return file


def load_config(path: Path | None = None, environ: dict[str, str] | None = None) -> CognitionConfig:
    """Read the configuration from ``path`` (if it exists) and the environment.

    Raises ``ConfigurationError`` naming the file or variable and the key: invalid TOML, an
    unknown key (with the nearest valid one), an unset ``${NAME}``, or an invalid value.
    """
    environ = dict(os.environ) if environ is None else environ
    if path is None and environ.get(CONFIG_ENV):
        path = Path(environ[CONFIG_ENV])
    data: dict[str, Any] = {}
    file_source: _Source | None = None
    if path is not None and path.exists():
        file_source = _Source.file(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise ConfigurationError(
                f"配置文件 {path} 不是有效的 TOML：{error}", en=f"{path}: not valid TOML: {error}"
            ) from error
        data = _move_renamed(data, file_source)
        unknown = _unknown_keys(data, CognitionConfig)
        if unknown:
            raise _unknown_key_error(file_source, unknown)
        written, data = data, _expand_env(data, environ, "", file_source)
        _typed_references(written, data, CognitionConfig)
    overrides, origins = _env_overrides(environ)
    data = _deep_merge(data, overrides)
    try:
        return CognitionConfig.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        location = tuple(str(part) for part in first["loc"])
        where = ".".join(location)
        source = _source_of(location, origins, file_source)
        zh_prefix, en_prefix = (f"{source.zh}：", f"{source.en}: ") if source else ("", "")
        raise ConfigurationError(
            f"{zh_prefix}配置项 {where} 无效：{_explained(first)}", en=f"{en_prefix}config key {where}: {first['msg']}"
        ) from error


#: pydantic's error types → what the key takes, in Chinese (with the value it was given).
_EXPECTED = {
    "bool_type": "应为 true 或 false（不加引号）",
    "int_type": "应为整数（不加引号）",
    "float_type": "应为数字（不加引号）",
    "string_type": "应为文本（加引号）",
    "list_type": "应为列表，如 []",
    "dict_type": "应为表，如 {}",
    "greater_than_equal": "应不小于 {ge}",
    "greater_than": "应大于 {gt}",
    "less_than_equal": "应不大于 {le}",
    "less_than": "应小于 {lt}",
    "literal_error": "应为 {expected} 之一",
}


def _explained(error: Any) -> str:
    """One pydantic error as what the key takes and what it was given."""
    template = _EXPECTED.get(error["type"])
    if template is None:
        return str(error["msg"])
    expected = template.format(**(error.get("ctx") or {}))
    given = error.get("input")
    shown = f"{given!r}" if isinstance(given, str) else str(given).lower() if isinstance(given, bool) else str(given)
    return f"{expected}，现在是 {shown[:80]}"
