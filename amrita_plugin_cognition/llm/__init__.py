"""The LLM gateway: every LLM call of the plugin, on an explicit amrita_core preset, with a
Jinja2 prompt from ``prompt/``, a timeout, retries with backoff, and counters."""

from .gateway import LLMGateway, PurposeCounters
from .presets import PresetResolver, resolve_amrita_preset
from .prompts import PromptTemplates, RenderedPrompt, default_templates
from .settings import LLMSettings

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
