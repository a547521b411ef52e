"""Loading the typed configuration: its sources read, merged and checked, and what is wrong named.
The schema, every default documented in one place, is ``config_schema``; the renamed keys are
``config_renames``; this module re-exports the public names of both.

Sources, later ones win: the defaults (``config_schema``); a TOML file (where it is: ``config_location``;
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

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from .config_renames import _RENAMED_BY_OLD, RENAMED_KEYS, RenamedKey, _move_renamed, _Source, _warn_renamed
from .config_schema import (
    ChromaSettings,
    CognitionConfig,
    ConsolidationSettings,
    EmbedderSettings,
    HistorianSettings,
    ProfileSettings,
    RecallSettings,
)
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
    "ConsolidationSettings",
    "EmbedderSettings",
    "HistorianSettings",
    "LLMSettings",
    "ProfileSettings",
    "RecallSettings",
    "RenamedKey",
    "load_config",
]

logger = logging.getLogger("cognition")


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
