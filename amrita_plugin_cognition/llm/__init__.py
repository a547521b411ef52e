"""The LLM gateway: every LLM call of the plugin, on an explicit amrita_core preset, with a
Jinja2 prompt from ``prompt/``, a timeout, retries with backoff, and counters.

The names below are imported on first use (PEP 562): the configuration imports ``llm.settings``
alone, and a command that calls no model (the CLI's read commands) does not import the gateway,
its prompt templates or Jinja2."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .gateway import LLMGateway, PurposeCounters
    from .presets import PresetResolver, resolve_amrita_preset
    from .prompts import PromptTemplates, RenderedPrompt, default_templates
    from .settings import LLMSettings

_WHERE = {
    "LLMGateway": ".gateway",
    "PurposeCounters": ".gateway",
    "PresetResolver": ".presets",
    "resolve_amrita_preset": ".presets",
    "PromptTemplates": ".prompts",
    "RenderedPrompt": ".prompts",
    "default_templates": ".prompts",
    "LLMSettings": ".settings",
}

__all__ = [
    "LLMGateway",
    "LLMSettings",
    "PresetResolver",
    "PromptTemplates",
    "PurposeCounters",
    "RenderedPrompt",
    "default_templates",
    "resolve_amrita_preset",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
