"""Configuration values are taken as their own type only (issue 20, item 15): ``enable = "yes"`` was
read as true, a number in quotes as the number. Every boolean, integer and float key is strict,
in the file, in the environment and in the WebUI's class, and the refusal names the key, what it
takes and what it was given; environment values and whole ``${NAME}`` references still become
the type of their key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomli
from pydantic import BaseModel, ValidationError

from amrita_plugin_cognition.config import CognitionConfig, load_config
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


# ---------------------------------------------------------------------------- what the owner reads


def _leaf_keys(model: type[BaseModel] = CognitionConfig, prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += _leaf_keys(annotation, f"{prefix}{name}.")
        else:
            keys.append(prefix + name)
    return keys


def test_the_first_file_has_every_default_under_its_comment_line(tmp_path: Path) -> None:
    from amrita_plugin_cognition.config_form import default_file_text, describe
    from amrita_plugin_cognition.config_location import write_default_file

    written = write_default_file(tmp_path, default_file_text())
    assert written == tmp_path / "config.toml"
    text = written.read_text(encoding="utf-8")
    assert load_config(written, environ={}) == CognitionConfig()  # exactly the defaults
    assert tomli.loads(text) == CognitionConfig().model_dump()
    lines = text.splitlines()
    section = ""
    for index, line in enumerate(lines):
        if line.startswith("["):
            section = line.strip("[]") + "."
            assert lines[index - 1] == f"# {describe(section[:-1])}", line
        elif line and not line.startswith("#"):
            key = section + line.split(" = ")[0]
            assert lines[index - 1] == f"# {describe(key)}", key
    assert len([line for line in lines if " = " in line and not line.startswith("#")]) == len(_leaf_keys())
    assert "WebUI" in text and "注释" in text  # the header says a WebUI save drops the comments
    written.write_text("enable = false\n", encoding="utf-8")
    assert write_default_file(tmp_path, default_file_text()) is None  # never over an existing file
    assert written.read_text(encoding="utf-8") == "enable = false\n"


def test_every_key_says_what_it_takes_in_the_webui() -> None:
    from amrita_plugin_cognition.config_form import UNITLESS, UNITS

    document = settings_document()
    for key in _leaf_keys():
        *sections, name = key.split(".")
        model: Any = document
        for part in sections:
            model = model.model_fields[part].annotation
        field = model.model_fields[name]
        description = field.description or ""
        if field.annotation in (int, float):
            assert key in UNITS or key in UNITLESS, f"{key}: no unit decided"
            bounds = [
                f"{getattr(item, bound):g}" if isinstance(getattr(item, bound), float) else str(getattr(item, bound))
                for item in field.metadata
                for bound in ("ge", "gt", "le", "lt")
                if getattr(item, bound, None) is not None
            ]
            assert bounds and all(bound in description for bound in bounds), (key, description)
            assert UNITS.get(key, "") in description, (key, description)
        elif field.annotation is bool:
            assert "true 或 false" in description, key
    assert "整数 1 到 50 条" in document.model_fields["recall"].annotation.model_fields["top_k"].description


def test_a_refused_webui_save_names_the_field_whose_description_gives_the_range() -> None:
    """What the WebUI's save does with a value out of range (amrita/plugins/webui confedit.py):
    pydantic's error names the field; the field's description in the editor gives the range."""
    merged = CognitionConfig().model_dump()
    merged["recall"]["top_k"] = 500
    with pytest.raises(ValidationError) as refused:
        settings_document().model_validate(merged)
    field = ".".join(str(part) for part in refused.value.errors()[0]["loc"])
    assert field == "recall.top_k"
    assert "1 到 50" in settings_document().model_fields["recall"].annotation.model_fields["top_k"].description
