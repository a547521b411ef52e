"""Configuration values are taken as their own type only (issue 20, item 15): ``enable = "yes"`` was
read as true, a number in quotes as the number. Every boolean, integer and float key is strict,
in the file, in the environment and in the WebUI's class, and the refusal names the key, what it
takes and what it was given; environment values and whole ``${NAME}`` references still become
the type of their key."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli
from pydantic import ValidationError

from amrita_plugin_cognition.config import load_config
from amrita_plugin_cognition.config_form import settings_document
from amrita_plugin_cognition.errors import ConfigurationError

#: (file content, the key named, what the message says it takes)
LAX_VALUES = [
    ('enable = "yes"\n', "enable", "true 或 false"),
    ("enable = 1\n", "enable", "true 或 false"),
    ('[profiles]\nmerge = "false"\n', "profiles.merge", "true 或 false"),
    ('[chroma]\nssl = "no"\n', "chroma.ssl", "true 或 false"),
    ('[recall]\ntop_k = "8"\n', "recall.top_k", "整数"),
    ("[recall]\ntop_k = 8.0\n", "recall.top_k", "整数"),
    ("[recall]\ntop_k = true\n", "recall.top_k", "整数"),
    ('memory_max_chars = "500"\n', "memory_max_chars", "整数"),
    ('hook_timeout_seconds = "5"\n', "hook_timeout_seconds", "数字"),
    ("[llm]\ntimeout_seconds = false\n", "llm.timeout_seconds", "数字"),
    ("timezone = 8\n", "timezone", "文本"),
    ("[recall]\ntop_k = 500\n", "recall.top_k", "不大于 50"),
]


@pytest.mark.parametrize(("content", "key", "takes"), LAX_VALUES, ids=[case[0].strip() for case in LAX_VALUES])
def test_a_value_of_another_type_is_refused_naming_the_key(tmp_path: Path, content: str, key: str, takes: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigurationError) as refused:
        load_config(path, environ={})
    assert refused.value.zh.startswith(f"配置文件 {path}：配置项 {key} 无效：") and takes in refused.value.zh
    assert "现在是" in refused.value.zh


@pytest.mark.parametrize("content", [case[0] for case in LAX_VALUES[:-1]])
def test_the_webui_class_refuses_them_too(content: str) -> None:
    with pytest.raises(ValidationError):
        settings_document().model_validate(tomli.loads(content))


def test_an_environment_value_is_strict_as_well() -> None:
    with pytest.raises(ConfigurationError) as refused:
        load_config(None, environ={"COGNITION_ENABLE": "yes"})
    assert refused.value.zh.startswith("环境变量 COGNITION_ENABLE：配置项 enable 无效：应为 true 或 false")


def test_environment_values_and_references_take_the_type_of_their_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[chroma]\nport = "${CHROMA_PORT}"\n[embedder]\napi_key = "${KEY}"\n', encoding="utf-8")
    environ = {
        "CHROMA_PORT": "9000",
        "KEY": "123456",
        "COGNITION_ENABLE": "false",
        "COGNITION_RECALL__TOP_K": "12",
        "COGNITION_HOOK_TIMEOUT_SECONDS": "3",
        "COGNITION_EMBEDDER__MODEL": "2024",
        "COGNITION_CHROMA__HEADERS__X_TOKEN": "42",
        "COGNITION_DISABLED_SCOPES": '["group:20001"]',
    }
    config = load_config(path, environ=environ)
    assert config.chroma.port == 9000 and config.embedder.api_key == "123456"
    assert config.enable is False and config.recall.top_k == 12 and config.hook_timeout_seconds == 3.0
    assert config.embedder.model == "2024" and config.chroma.headers == {"x_token": "42"}
    assert config.disabled_scopes == ["group:20001"]
