"""What every route shares: the engine, the WebUI's answer shape, errors in Chinese."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Any

from fastapi import Depends
from fastapi.responses import JSONResponse

from ....api import (
    CognitionEngine,
    CognitionError,
    ConcurrentChange,
    InvalidInput,
    LimitExceeded,
    NotFound,
    Operator,
    PermissionDenied,
)
from ....errors import EngineUnavailable
from ....logs import log_event
from ....runtime import get_engine
from ..auth import page_operator

_STATUS: tuple[tuple[type[CognitionError], int], ...] = (
    (NotFound, 404),
    (PermissionDenied, 403),
    (ConcurrentChange, 409),
    (InvalidInput, 400),
    (LimitExceeded, 400),
)


async def engine() -> CognitionEngine:
    """The process's engine (a dependency; tests put their own in its place)."""
    return await get_engine()


def ok(data: Any = None, message: str = "ok") -> JSONResponse:
    """The WebUI's answer shape: ``{code, message, success, data}``."""
    return JSONResponse({"code": 200, "message": message, "success": True, "data": data})


def fail(status: int, message: str) -> JSONResponse:
    return JSONResponse({"code": status, "message": message, "success": False, "data": None}, status_code=status)


async def answer(work: Awaitable[Any], message: str = "ok") -> JSONResponse:
    """``work``'s result as an answer; a refusal of the engine as its Chinese message."""
    try:
        return ok(await work, message)
    except EngineUnavailable as error:
        return fail(503, error.zh)
    except CognitionError as error:
        for kind, status in _STATUS:
            if isinstance(error, kind):
                return fail(status, error.zh)
        log_event("webui", outcome="error", error=str(error))
        return fail(503, error.zh)


#: The engine of a route (``Depends``), and the operator a change is made as (after the CSRF checks).
Memory = Annotated[CognitionEngine, Depends(engine)]
PageActor = Annotated[Operator, Depends(page_operator)]
