"""Which amrita_core model preset an LLM call runs on.

amrita_core's call functions fall back to ``PresetManager().get_default_preset()`` when no preset
is passed, and inside a bot that global default is never set (the Amrita chat plugin builds a
``MultiPresetManager`` per session instead), so every call of the gateway passes a resolved
preset explicitly.

Resolution, the way Amrita itself resolves a preset name:

* When the Amrita chat plugin is running in this process (``amrita.plugins.chat.config`` is
  already imported — this module never imports it), its preset store is the authority: the
  ``models/*.json`` presets, with ``preset`` from ``chat/config.toml`` as the default (the preset
  the chat itself answers with). A name that is not in the store's cache is looked up once more
  on disk, so a preset file added while the bot runs is found. Unlike the chat's hot path this
  never falls back to another preset and never rewrites the chat's configuration: a missing
  preset is an error the operator should see.
* Otherwise (CLI, harness, tests without the chat plugin) amrita_core's global
  ``PresetManager`` is asked: a named preset registered there, or its default preset.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..errors import LLMUnavailable

if TYPE_CHECKING:
    from amrita_core import ModelPreset

#: ``resolver(name)`` → the preset to use; ``name == ""`` asks for the default preset.
PresetResolver = Callable[[str], Awaitable["ModelPreset"]]

CHAT_CONFIG_MODULE = "amrita.plugins.chat.config"


def _missing(name: str, where: str) -> LLMUnavailable:
    label = name or "默认"
    return LLMUnavailable(
        f"找不到模型预设「{label}」，请检查记忆插件的 [llm] preset 设置或 Amrita 的模型预设",
        en=f"llm unavailable: model preset {name or '(default)'!r} not found ({where})",
    )


def _chat_config_manager() -> Any | None:
    """The Amrita chat plugin's config manager, when that plugin is loaded (never imported here)."""
    module = sys.modules.get(CHAT_CONFIG_MODULE)
    return getattr(module, "config_manager", None) if module is not None else None


async def resolve_amrita_preset(name: str) -> ModelPreset:
    """The preset called ``name`` (``""``: the default chat preset); :class:`LLMUnavailable` if none."""
    manager = _chat_config_manager()
    if manager is not None:
        wanted = name or str(manager.config.preset)
        preset = await manager.get_preset(wanted, fix=False, cache=True)
        if preset is None:
            preset = await manager.get_preset(wanted, fix=False, cache=False)
        if preset is not None:
            return preset
        if not name:
            raise _missing(wanted, "the Amrita chat's default preset")
    from amrita_core import PresetManager

    core = PresetManager()
    try:
        return core.get_preset(name) if name else core.get_default_preset()
    except (ValueError, RuntimeError) as error:
        raise _missing(name, "Amrita chat presets and amrita_core PresetManager") from error
