"""The memory page in Amrita's WebUI: JSON routes under ``/api/cognition`` and a page 「记忆」 in
the sidebar (an ES module the WebUI's SPA imports), both behind the WebUI's own login.

``mount_when_ready()`` is called while the plugin's bot layer is imported: it mounts at once when
the WebUI plugin is loaded already, else in a startup hook registered before the WebUI's own (the
WebUI adds its catch-all route at the driver's start, so routes must be registered before it). It
does nothing when the bot does not load the WebUI (it never imports it: that would load it) or
``webui_enable`` is false, and the plugin works the same without it.
"""

from __future__ import annotations

from nonebot.log import logger

PAGE_PATH = "/cognition/memory"
PAGE_NAME = "记忆"
API_PREFIX = "/api/cognition"
MODULE_URL = f"{API_PREFIX}/assets/memory.js"

_mounted = False


WEBUI_PLUGIN = "amrita.plugins.webui"


def webui_loaded() -> bool:
    """Whether this bot loaded Amrita's WebUI plugin. Asked of NoneBot, never by importing it:
    importing ``amrita.plugins.webui`` loads it, and with it the manager and permission plugins
    (and their migrations), into a bot that did not ask for them."""
    import nonebot

    try:
        return nonebot.get_plugin_by_module_name(WEBUI_PLUGIN) is not None
    except ValueError:  # NoneBot not initialised
        return False


def webui_enabled() -> bool:
    """Whether Amrita's WebUI is loaded in this bot and switched on in its configuration."""
    if not webui_loaded():
        return False
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


def mount_when_ready() -> None:
    """Mount now when the WebUI is loaded already; otherwise at the driver's start, once every
    plugin is loaded (a WebUI loaded after this plugin registers its catch-all route in a
    startup hook of its own, which runs after this one)."""
    if mount():
        return
    import nonebot

    try:
        driver = nonebot.get_driver()
    except ValueError:  # NoneBot not initialised: no bot, no page
        return

    @driver.on_startup
    async def _mount_at_start() -> None:
        mount()
