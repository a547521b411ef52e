"""``/profile`` as an image, through nonebot-plugin-htmlrender when it is installed and usable.

The package is optional (the ``image`` extra: ``nonebot-plugin-htmlrender[playwright]``). Without
it, ``/profile`` answers as text. With it, the card is laid out by ``templates/profile_card.html.jinja``
(meta → evaluation → roast → body; every value escaped, it is user-derived text) and rasterised by
htmlrender's ``render_html`` with whichever provider the bot owner configured in NoneBot's
configuration (``render.provider``, ``render.provider_config``; for playwright with a system
browser ``render.provider_config.executable_path``, e.g. ``/usr/bin/chromium``).

Any failure of the renderer (no provider configured, no browser, a timeout, any exception) makes
``render_card_image`` answer ``None``, so the caller replies with the text: the user always gets
an answer. The failure is logged as ONE warning (no traceback) until a rendering succeeds again;
for ``RETRY_AFTER_SECONDS`` after a failure no rendering is tried, so a broken browser does not
make every ``/profile`` wait for a timeout.

htmlrender is a NoneBot plugin: as its documentation says, it is loaded with
``nonebot.require`` (never a bare import, which would leave it unregistered), when the bot loads
(``load_htmlrender``, so its startup and shutdown hooks run) and again, lazily, at each use
(``htmlrender``; a no-op once loaded). Nothing of it is imported when it is not installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import time
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2

from ..api import ENTITY_NAMES, SECTION_NAMES, Card, part_name
from .commands_labels import zone_of

logger = logging.getLogger("cognition")

HTMLRENDER = "nonebot_plugin_htmlrender"
TEMPLATE_FOLDER = "templates"
TEMPLATE_NAME = "profile_card.html.jinja"
#: Sections in the order the image shows them (after the meta), as the text reply does.
SHOWN_SECTIONS = ("evaluation", "roast", "body")
#: CSS pixels of the card's width; the image is ``DEVICE_PIXEL_RATIO`` times that.
WIDTH = 560
DEVICE_PIXEL_RATIO = 2.0
#: How long one rendering may take (a first one starts the browser) before the text is sent.
RENDER_TIMEOUT_SECONDS = 15.0
#: After a failure, how long ``/profile`` answers as text without trying to render.
RETRY_AFTER_SECONDS = 60.0


class _Health:
    """Whether the renderer is failing: one warning per outage, a pause before the next try."""

    failing: str | None = None
    retry_at: float = 0.0


_health = _Health()


def htmlrender() -> Any | None:
    """The loaded htmlrender plugin module, or ``None`` when it is not installed (or made
    unimportable: ``sys.modules[HTMLRENDER] = None``). Raises when it is installed but fails to load."""
    try:
        if importlib.util.find_spec(HTMLRENDER) is None:
            return None
    except (ImportError, ValueError):
        return None
    from nonebot import require

    return require(HTMLRENDER)


def load_htmlrender() -> bool:
    """Load htmlrender with the bot (its lifecycle hooks need it); False when it is not installed
    or failed to load (one warning: ``/profile`` answers as text)."""
    try:
        return htmlrender() is not None
    except Exception as error:
        _failed(error)
        return False


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    source = resources.files("amrita_plugin_cognition").joinpath(TEMPLATE_FOLDER).joinpath(TEMPLATE_NAME)
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return environment.from_string(source.read_text(encoding="utf-8"))


def card_html(card: Card, timezone: str) -> str:
    """The card as a self-contained HTML page (every value escaped)."""
    updated = card.updated_at.astimezone(zone_of(timezone)).strftime("%Y-%m-%d %H:%M")
    sections = [
        {"key": section, "title": SECTION_NAMES[section], "text": getattr(card, section).strip()}
        for section in SHOWN_SECTIONS
        if getattr(card, section).strip()
    ]
    return _template().render(
        width=WIDTH,
        label=card.label,
        name=card.name,
        entity_name=ENTITY_NAMES.get(card.entity_type, card.entity_type),
        entity_id=card.entity_id,
        part_name=part_name(card.part) if card.entity_type == "user" else "",
        tags=list(card.tags),
        updated_at=updated,
        sections=sections,
    )


def _failed(error: BaseException) -> None:
    reason = f"{type(error).__name__}: {str(error)[:300]}" if str(error) else type(error).__name__
    _health.retry_at = time.monotonic() + RETRY_AFTER_SECONDS
    if _health.failing is None:
        logger.warning(
            "[cognition] stage=command action=profile_image failed=%s; /profile answers as text "
            "(nonebot-plugin-htmlrender: set render.provider and its provider_config, see the README)",
            reason,
        )
    else:
        logger.debug("[cognition] stage=command action=profile_image failed again=%s", reason)
    _health.failing = reason


def _succeeded() -> None:
    if _health.failing is not None:
        logger.info("[cognition] stage=command action=profile_image recovered; /profile answers as an image")
    _health.failing = None
    _health.retry_at = 0.0


async def render_card_image(card: Card, timezone: str) -> bytes | None:
    """The card as image bytes (PNG), or ``None``: htmlrender not installed, or rendering failed
    (see the module docstring). Never raises (but a cancellation)."""
    try:
        module = htmlrender()
    except Exception as error:
        _failed(error)
        return None
    if module is None or time.monotonic() < _health.retry_at:
        return None
    try:
        image = await asyncio.wait_for(
            module.render_html(
                card_html(card, timezone),
                width=WIDTH,
                device_pixel_ratio=DEVICE_PIXEL_RATIO,
                image_format="png",
                timeout_seconds=RENDER_TIMEOUT_SECONDS,
            ),
            timeout=RENDER_TIMEOUT_SECONDS,
        )
        data = bytes(image)
        if not data:
            raise ValueError("the renderer returned an empty image")
    except Exception as error:  # asyncio.TimeoutError too: the text goes out instead
        _failed(error)
        return None
    _succeeded()
    return data
