"""The page's routes, one router under ``/api/cognition`` (``register_router`` mounts it)."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from ..auth import webui_user
from . import assets, chats, memories, records, users

#: Every route needs the WebUI's login, checked here as well as by the WebUI's middleware.
router = APIRouter(prefix="/api/cognition", dependencies=[Depends(webui_user)], tags=["cognition"])
for part in (assets, chats, memories, records, users):
    router.include_router(part.router)

__all__ = ["router"]
