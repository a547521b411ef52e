"""Prompt templates: Jinja2 files shipped inside the package under ``prompt/``.

Templates are read with :mod:`importlib.resources`, so they are found from an installed wheel as
well as from a checkout. Rendering is strict (:class:`jinja2.StrictUndefined`): a variable the
caller forgot is an error, never an empty string in front of the model.

A template may export two top-level block assignments, ``{% set system %}…{% endset %}`` and
``{% set user %}…{% endset %}``; they become the system and the user message. A template that
exports neither is one user message (its whole output). Top-level macros are visible in both.
Stored text is rendered through the filters ``inert`` and ``inert_lines`` (``domain.inert``): it
cannot forge a header, an item or a tag of the prompt it sits in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2

from ..domain.inert import inert_line, inert_lines

PROMPT_PACKAGE = "amrita_plugin_cognition"
PROMPT_FOLDER = "prompt"
SYSTEM_PART = "system"
USER_PART = "user"


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The messages one template produced: an optional system message and a user message."""

    template: str
    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        """OpenAI-shaped ``role``/``content`` messages (the system one only when not empty)."""
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": self.user})
        return messages


class PromptTemplates:
    """Loads and renders the templates of one package folder (default: this plugin's ``prompt/``)."""

    def __init__(self, package: str = PROMPT_PACKAGE, folder: str = PROMPT_FOLDER) -> None:
        self.package = package
        self.folder = folder
        self._environment = jinja2.Environment(
            loader=jinja2.FunctionLoader(self._load_source),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        # stored or chat text in a prompt: ``{{ text | inert }}`` (one line), ``| inert_lines`` (a body)
        self._environment.filters["inert"] = lambda text, limit=None: inert_line(str(text), limit)
        self._environment.filters["inert_lines"] = lambda text, limit=None: inert_lines(str(text), limit)

    def _load_source(self, name: str) -> tuple[str, str | None, Callable[[], bool]] | None:
        if any(part in ("", ".", "..") for part in name.split("/")):
            return None
        resource = resources.files(self.package).joinpath(self.folder)
        for part in name.split("/"):  # one part per call: Traversable.joinpath takes one before 3.11
            resource = resource.joinpath(part)
        if not resource.is_file():
            return None
        return resource.read_text(encoding="utf-8"), None, lambda: True

    def names(self) -> list[str]:
        """The template files shipped in the folder."""
        folder = resources.files(self.package).joinpath(self.folder)
        return sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".jinja"))

    def render(self, name: str, context: Mapping[str, Any] | None = None) -> RenderedPrompt:
        """Render ``name`` with ``context``.

        Raises :class:`jinja2.TemplateNotFound` for an unknown template, :class:`jinja2.UndefinedError`
        for a missing variable, and :class:`ValueError` when the user message comes out empty.
        """
        template = self._environment.get_template(name)
        module = template.make_module(dict(context or {}))
        exported = module.__dict__
        if SYSTEM_PART in exported or USER_PART in exported:
            system = str(exported.get(SYSTEM_PART, "")).strip()
            user = str(exported.get(USER_PART, "")).strip()
        else:
            system, user = "", str(module).strip()
        if not user:
            raise ValueError(f"prompt template {name!r} rendered an empty user message")
        return RenderedPrompt(template=name, system=system, user=user)


@lru_cache(maxsize=1)
def default_templates() -> PromptTemplates:
    """The plugin's own templates (one shared, cached environment)."""
    return PromptTemplates()
