"""Who is asking: the WebUI's own login (its token cookie, checked against its token store on
every request, not only by its middleware), and the CSRF guard of every change.

A change is a ``POST`` carrying the header ``X-Cognition-Page: 1`` (a cross-site form cannot set
a header, and a cross-site script cannot send one without a CORS preflight, which is not granted)
and, when the browser sends an ``Origin``, one equal to the page's own. The WebUI's cookie is
``SameSite=Lax`` besides. Reads are ``GET`` and change nothing."""

from __future__ import annotations

from datetime import datetime, timezone

from fastapi import HTTPException, Request

from ...api import Operator

CSRF_HEADER = "X-Cognition-Page"


async def webui_user(request: Request) -> str:
    """The WebUI user of this request's session (401 without a live one)."""
    from amrita.plugins.webui.service.authlib import TOKEN_KEY, TokenManager

    token = request.cookies.get(TOKEN_KEY)
    if not token:
        raise HTTPException(status_code=401, detail="未登录 WebUI")
    data = await TokenManager().get_token_data(token, None)
    if data is None or data.expire < datetime.now(timezone.utc):
        raise HTTPException(status_code=401, detail="WebUI 登录已过期，请重新登录")
    return str(data.username)


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None:  # same-origin GETs and some clients send none; the header check still holds
        return True
    host = request.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}")


async def page_operator(request: Request) -> Operator:
    """The operator a change is made and audited as (``webui:<user>``), after the CSRF checks."""
    user = await webui_user(request)
    if request.headers.get(CSRF_HEADER) != "1":
        raise HTTPException(status_code=403, detail="缺少页面请求标记，已拒绝（防跨站请求）")
    if not _same_origin(request):
        raise HTTPException(status_code=403, detail="请求来源与页面不一致，已拒绝（防跨站请求）")
    return Operator(f"webui:{user}"[:64])
