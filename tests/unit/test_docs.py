"""Every configuration key is documented in the README and in the example configuration."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from amrita_plugin_cognition.config import CognitionConfig, tomllib

ROOT = Path(__file__).parents[2]


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys.extend(_keys(annotation, f"{prefix}{name}."))
        else:
            keys.append(f"{prefix}{name}")
    return keys


def test_every_config_key_is_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = tomllib.loads((ROOT / "config" / "cognition.example.toml").read_text(encoding="utf-8"))
    for key in _keys(CognitionConfig):
        assert f"`{key}`" in readme, f"{key} missing from the README configuration table"
        node = example
        for part in key.split("."):
            assert part in node, f"{key} missing from config/cognition.example.toml"
            node = node[part]


def test_example_config_is_the_defaults() -> None:
    example = tomllib.loads((ROOT / "config" / "cognition.example.toml").read_text(encoding="utf-8"))
    assert CognitionConfig.model_validate(example) == CognitionConfig()


def test_the_readme_says_which_keys_need_a_restart_as_the_code_decides() -> None:
    """The "热重载" column of the README's table is what a reload does (``config_restart``)."""
    from amrita_plugin_cognition.config_restart import needs_restart

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    seen = set()
    for line in readme.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != 4 or cells[2] not in ("是", "需重启"):
            continue  # another table
        for key in re.findall(r"`([a-z_.]+)`", cells[0]):
            assert (cells[2] == "需重启") == needs_restart(key), f"README: {key} is marked {cells[2]}"
            seen.add(key)
    assert set(_keys(CognitionConfig)) <= seen
