"""The page's ES modules and stylesheet, served from the package (no build step)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

STATIC = Path(__file__).resolve().parent.parent / "static"
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

router = APIRouter()


def known_assets() -> dict[str, Path]:
    return {path.name: path for path in STATIC.iterdir() if path.suffix in _TYPES}


@router.get("/assets/{name}", include_in_schema=False)
async def asset(name: str) -> FileResponse:
    path = known_assets().get(name)  # only the files of the folder, by exact name
    if path is None:
        raise HTTPException(status_code=404, detail="没有这个文件")
    return FileResponse(path, media_type=_TYPES[path.suffix], headers={"Cache-Control": "no-cache"})
