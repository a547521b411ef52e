"""``ambot cognition profile list|show|restore|export``: the profile cards of users and groups,
their kept versions, and the seed's Markdown layout on disk.

A card part is named as the plugin keys it: ``group`` (a group's card; a user's cross-group
part, what groups see under the ``open`` scope policy), ``group:<group id>`` (a user's part in
that group, what it sees of them under ``strict``) and ``private`` (a user's private part)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .commands import _open_engine, cognition, emit, home_option, json_option, run_engine
from .params import ROW_ID

if TYPE_CHECKING:
    from ..api import CardRevision, ListedCard

ENTITY_TYPES = ("user", "group")
_PART = re.compile(r"group|private|group:[0-9]{1,20}")


def _part_name(context: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not _PART.fullmatch(value):
        raise click.BadParameter("写作 group、private 或 group:群号", ctx=context, param=param)
    return value


type_argument = click.argument("entity_type", metavar="TYPE", type=click.Choice(ENTITY_TYPES))
part_option = click.option(
    "--part",
    default=None,
    metavar="PART",
    callback=_part_name,
    help="画像的哪一部分：group 群内可见（群的画像；用户的跨群部分），group:群号 用户在该群的部分，private 仅私聊",
)


def _digits(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit():
        raise click.BadParameter("写作 QQ 号或群号（纯数字）", param_hint=what)
    return value


def _check_part(entity_type: str, part: str | None) -> None:
    if entity_type == "group" and part not in (None, "group"):
        raise click.BadParameter("群的画像只有 group 部分", param_hint="--part")


def listing(listed: list[ListedCard], total: int) -> dict[str, Any]:
    """What ``profile list`` answers (``--json``), and what its table shows."""
    cards = [{**item.card.as_dict(), "updated_by": item.updated_by, "revisions": item.revisions} for item in listed]
    return {"total": total, "cards": cards}


def revision_document(item: CardRevision) -> dict[str, Any]:
    return {
        "id": item.id,
        **item.card.as_dict(),
        "written_by": item.written_by,
        "replaced_at": item.replaced_at.isoformat(),
        "replaced_by": item.replaced_by,
    }


@cognition.group("profile")
def profile_group() -> None:
    """画像卡片：列出、查看（含历史版本）、恢复历史版本、导出为 Markdown 文件"""


@profile_group.command("list")
@home_option
@click.option("--bot", default=None, help="只看这个机器人 QQ 号的")
@click.option("--type", "entity_type", type=click.Choice(ENTITY_TYPES), default=None, help="只看用户或群的画像")
@click.option("--id", "entity_id", default=None, help="只看这个 QQ 号或群号的")
@part_option
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="最多列出张数")
@json_option
def profile_list(
    home: Path | None,
    bot: str | None,
    entity_type: str | None,
    entity_id: str | None,
    part: str | None,
    limit: int,
    as_json: bool | None,
) -> None:
    """列出画像（最近更新的在前）：对象、部分、名称、标签、更新时间与更新者、保留的历史版本数"""
    bot, entity_id = _digits(bot, "--bot"), _digits(entity_id, "--id")

    async def run() -> dict[str, Any]:
        from ..api import ProfileFilter

        wanted = ProfileFilter(bot, entity_type, entity_id, part)
        engine = await _open_engine(read_only=True)
        listed, total = await engine.profiles.list(wanted, limit)
        return listing(listed, total)

    from . import render_profiles

    emit(run_engine(run, home, read_only=True), as_json, render_profiles.card_list)


@profile_group.command("show")
@click.argument("bot")
@type_argument
@click.argument("entity_id", metavar="ID")
@part_option
@click.option("--revision", type=ROW_ID, default=None, help="显示这个历史版本（而不是当前版本）")
@click.option("--revisions", "list_revisions", is_flag=True, help="列出保留的历史版本")
@home_option
@json_option
def profile_show(
    bot: str,
    entity_type: str,
    entity_id: str,
    part: str | None,
    revision: int | None,
    list_revisions: bool,
    home: Path | None,
    as_json: bool | None,
) -> None:
    """显示画像文档（元数据、评价、正文、吐槽，以 --- 分隔）；用户不加 --part 时显示所有部分"""
    bot_id, entity = _digits(bot, "BOT") or "", _digits(entity_id, "ID") or ""
    _check_part(entity_type, part)

    async def run() -> dict[str, Any]:
        from ..api import card_label, render_document
        from ..errors import NotFound

        engine = await _open_engine(read_only=True)
        if list_revisions:
            kept = await engine.profiles.revisions(bot_id, entity_type, entity, part)
            return {"revisions": [revision_document(item) for item in kept]}
        if revision is not None:
            found = (await engine.profiles.revision(bot_id, entity_type, entity, revision)).card
            cards = [found] if part is None or found.part == part else []
        else:
            cards = await engine.profiles.get_parts(bot_id, entity_type, entity, None if part is None else [part])
        if not cards:
            raise NotFound(f"{card_label(entity_type, entity, part)}不存在")
        return {"cards": [{**card.as_dict(), "document": render_document(card)} for card in cards]}

    from . import render_profiles

    emit(run_engine(run, home, read_only=True), as_json, render_profiles.shown)


@profile_group.command("restore")
@click.argument("bot")
@type_argument
@click.argument("entity_id", metavar="ID")
@click.argument("revision", type=ROW_ID)
@part_option
@home_option
def profile_restore(
    bot: str, entity_type: str, entity_id: str, revision: int, part: str | None, home: Path | None
) -> None:
    """把画像恢复为历史版本 REVISION（当前内容先存为一个历史版本，所以恢复也可以撤销）"""
    bot_id, entity = _digits(bot, "BOT") or "", _digits(entity_id, "ID") or ""
    _check_part(entity_type, part)

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        return await engine.profiles.restore(bot_id, entity_type, entity, revision, part)

    saved = run_engine(run, home)
    label = saved.card.label
    if not saved.changed:
        click.echo(f"{label}已经是版本 #{revision} 的内容，未改动")
        return
    kept = f"；恢复前的内容已存为版本 #{saved.revision_id}" if saved.revision_id else ""
    click.echo(f"已把{label}恢复为版本 #{revision}{kept}")


@profile_group.command("export")
@home_option
@click.option("--bot", default=None, help="只导出这个机器人 QQ 号的（默认：所有机器人账号）")
@click.option(
    "--output",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="写入这个目录：<机器人>/profiles/users/<QQ>.md（在某个群的部分 <QQ>.group-<群号>.md，"
    "私聊部分 <QQ>.private.md）、<机器人>/profiles/groups/<群号>.md",
)
def profile_export(home: Path | None, bot: str | None, output: Path) -> None:
    """把画像导出为 Markdown 文档（与种子项目相同的目录结构，每个机器人账号一个目录）；同名文件会被覆盖"""
    bot = _digits(bot, "--bot")
    folder = output.resolve()

    async def run():  # type: ignore[no-untyped-def]
        engine = await _open_engine()
        return await engine.profiles.export(folder, bot)

    report = run_engine(run, home)
    if not report.files:
        click.echo("没有可导出的画像")
        return
    private = sum(1 for name in report.files if name.endswith(".private.md"))
    in_group = sum(1 for name in report.files if re.search(r"\.group-[0-9]+\.md$", name))
    groups = sum(1 for name in report.files if "/profiles/groups/" in name)
    users = len(report.files) - private - in_group - groups
    click.echo(
        f"已导出 {len(report.files)} 份画像到 {folder}"
        f"（用户群内可见部分 {users} 份，用户在某个群的部分 {in_group} 份，私聊部分 {private} 份，群 {groups} 份）"
    )
