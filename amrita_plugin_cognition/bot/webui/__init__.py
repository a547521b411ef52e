"""The memory page in Amrita's WebUI: JSON routes under ``/api/cognition`` and a page 「记忆」 in
the sidebar (an ES module the WebUI's SPA imports), both behind the WebUI's own login.

``mount()`` is called while the plugin's bot layer is imported (the WebUI's catch-all route is
added at the driver's start, so routes must be registered before it); it does nothing when the
WebUI is not installed or ``webui_enable`` is false, and the plugin works the same without it.
"""

from __future__ import annotations

from nonebot.log import logger

PAGE_PATH = "/cognition/memory"
PAGE_NAME = "记忆"
API_PREFIX = "/api/cognition"
MODULE_URL = f"{API_PREFIX}/assets/memory.js"

_mounted = False


def webui_enabled() -> bool:
    """Whether Amrita's WebUI is installed and switched on in this bot's configuration."""
    try:
        from amrita.plugins.webui.service.config import get_webui_config
    except ImportError:
        return False
    try:
        return bool(get_webui_config().webui_enable)
    except ValueError:  # NoneBot not initialised: no WebUI either
        return False


def mount() -> bool:
    """Register the routes and the page with the WebUI (once); False when there is no WebUI."""
    global _mounted
    if _mounted:
        return True
    if not webui_enabled():
        return False
    from amrita.plugins.webui.API import register_page, register_router

    from .routes import router

    register_router(router)
    register_page(
        path=PAGE_PATH,
        page_name=PAGE_NAME,
        category="聊天管理",
        icon="brain",
        module_url=MODULE_URL,
    )
    _mounted = True
    logger.info(f"[cognition] stage=webui page={PAGE_PATH} api={API_PREFIX}")
    return True
