"""LLM tools: argument models (``arguments``), registration and validation (``registry``), and the
handlers (``handlers``, ``knowledge`` and ``turn_end``; importing them registers the tools with Amrita).

Every tool answers one short JSON object: ``{"ok": true, ...}`` or ``{"ok": false, "error": …}``
with a Chinese message the model can act on. Tool results stay in chat history, so they are
kept short and carry no more than the caller asked for.
"""

from __future__ import annotations

from . import handlers, knowledge, turn_end
from .registry import TOOLS, function_parameters, parse_arguments

__all__ = ["TOOLS", "function_parameters", "handlers", "knowledge", "parse_arguments", "turn_end"]
