"""Amrita model presets named on the command line (``demo --preset``, ``eval admission --model``):
a path to a preset JSON file, or a preset's name looked up in the bot's Amrita model folder."""

from __future__ import annotations

import json
from pathlib import Path


def preset_search_dirs() -> list[Path]:
    """Where preset names are looked up: the bot's Amrita model folder, when a bot is loaded."""
    try:
        from amrita.plugins.chat.config import ConfigManager
    except ImportError:  # no Amrita chat here: only paths can be used
        return []
    return [Path(ConfigManager.custom_models_dir)]


def find_preset_file(value: str, folders: list[Path]) -> Path | None:
    """A preset JSON file from a path or from a preset name (file stem or ``name`` field) in
    ``folders``; None when there is none."""
    path = Path(value).expanduser()
    if path.is_file():
        return path.resolve()
    if path.suffix.lower() != ".json" and len(path.parts) == 1:
        for folder in folders:
            for candidate in sorted(folder.glob("*.json")):
                if candidate.stem == value:
                    return candidate.resolve()
                try:
                    name = json.loads(candidate.read_text(encoding="utf-8")).get("name")
                except (OSError, ValueError, AttributeError):
                    continue
                if name == value:
                    return candidate.resolve()
    return None
