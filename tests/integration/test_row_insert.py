"""``store/row_insert.py``: the note and the job of an ``end`` call go in with one driver call each
on SQLite and one statement on PostgreSQL. What they store must be what the ORM would have stored,
and they must stay inside the unit of work's transaction: rolled back with it, committed with it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from engine_helpers import make_engine, new_bot
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from amrita_plugin_cognition.domain.clock import as_utc
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.store import jobs, short_term
from amrita_plugin_cognition.store.models import JobRow, NoteRow
from amrita_plugin_cognition.store.row_insert import insert_rows

#: Microseconds and a zone other than UTC: the stored form is SQLAlchemy's UTC text (SQLite).
AT = datetime(2026, 11, 30, 20, 15, 7, 123456, tzinfo=timezone(timedelta(hours=8)))
CHAT = Scope("group", "70001")
PAYLOAD = {"observations": ["小明明天去成都"], "memo": "小明明天去成都"}


async def rows_of(engine, model, bot: str) -> list:  # type: ignore[no-untyped-def]
    async with engine.session() as session:
        found = await session.execute(select(model).where(model.bot_id == bot).order_by(model.id))
        return list(found.scalars())


def both(bot: str, content: str, payload: dict) -> list:  # type: ignore[type-arg]
    """What an ``end`` call writes: its note and its job, in one call."""
    return [
        short_term.note_row(bot, CHAT, "10001", "小明", content, AT, ["m1"]),
        jobs.job_row("observations", bot, CHAT, payload, AT),
    ]


def columns(model) -> list[str]:  # type: ignore[no-untyped-def]
    return [column.name for column in model.__table__.columns if column.name != "id"]


async def test_rows_written_at_once_are_stored_as_the_orm_stores_them(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    async with engine.unit_of_work() as uow:
        uow.session.add(
            NoteRow(
                bot_id=bot, scope_kind=CHAT.kind, scope_id=CHAT.id, user_id="10001", user_name="小明",
                content="小明明天去成都", created_at=AT, message_ids='["m1"]',
            )
        )  # fmt: skip
        uow.session.add(
            JobRow(
                kind="observations", bot_id=bot, scope_kind=CHAT.kind, scope_id=CHAT.id,
                payload=jobs.job_row("observations", bot, CHAT, PAYLOAD, AT)[1]["payload"], state=jobs.PENDING,
                attempts=0, last_error="", enqueued_at=AT, next_attempt_at=None, lease_token=None,
                lease_expires_at=None, updated_at=AT,
            )
        )  # fmt: skip
        await uow.session.flush()
        await insert_rows(uow.session, both(bot, "小明明天去成都", PAYLOAD))
        await uow.commit()
    for model in (NoteRow, JobRow):
        by_orm, at_once = await rows_of(engine, model, bot)
        assert [getattr(at_once, name) for name in columns(model)] == [getattr(by_orm, name) for name in columns(model)]
    note = (await rows_of(engine, NoteRow, bot))[1]
    assert as_utc(note.created_at) == AT  # the same moment (stored and read back in UTC)
    async with engine.session() as session:  # and the same text in the column, whatever the backend keeps
        stored = await session.execute(
            text("SELECT CAST(created_at AS TEXT) FROM cognition_note WHERE bot_id = :b"), {"b": bot}
        )
        assert len(set(stored.scalars())) == 1
    # one row a statement (``jobs.enqueue``, the other callers' way) stores the same
    async with engine.unit_of_work() as uow:
        await insert_rows(uow.session, [short_term.note_row(bot, CHAT, "10001", "小明", "小明明天去成都", AT, ["m1"])])
        await jobs.enqueue(uow.session, "observations", bot, CHAT, PAYLOAD, AT)
        await uow.commit()
    for model in (NoteRow, JobRow):
        found = await rows_of(engine, model, bot)
        assert [getattr(found[2], name) for name in columns(model)] == [
            getattr(found[0], name) for name in columns(model)
        ]


async def test_the_rows_are_rolled_back_or_committed_with_their_unit_of_work(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    with pytest.raises(RuntimeError):
        async with engine.unit_of_work() as uow:
            await insert_rows(uow.session, both(bot, "不会留下的便签", {"observations": ["x"]}))
            raise RuntimeError("the turn failed before its commit")
    # a later statement of the same unit of work that fails takes them with it
    with pytest.raises(Exception):  # noqa: B017 (the driver's integrity error, whichever the backend)
        async with engine.unit_of_work() as uow:
            await insert_rows(uow.session, both(bot, "也不会留下", {"observations": ["y"]}))
            uow.session.add(NoteRow(bot_id=bot, scope_kind=CHAT.kind, scope_id=CHAT.id, content=None, created_at=AT))
            await uow.commit()
    assert await rows_of(engine, NoteRow, bot) == [] and await rows_of(engine, JobRow, bot) == []
    # and committed with it: the same call, then a commit, keeps both
    async with engine.unit_of_work() as uow:
        await insert_rows(uow.session, both(bot, "留下的便签", {"observations": ["z"]}))
        await uow.commit()
    assert [note.content for note in await rows_of(engine, NoteRow, bot)] == ["留下的便签"]
    assert [job.payload for job in await rows_of(engine, JobRow, bot)] == ['{"observations": ["z"]}']


async def test_a_column_the_table_does_not_have_is_refused(tmp_root, chroma_port) -> None:
    engine = await make_engine(tmp_root, chroma_port)
    async with engine.unit_of_work() as uow:
        with pytest.raises(Exception, match="no_such_column"):
            await insert_rows(uow.session, [(NoteRow.__table__, {"bot_id": new_bot(), "no_such_column": 1})])


async def test_a_refused_row_raises_sqlalchemys_error_whichever_the_driver(tmp_root, chroma_port) -> None:
    """The unit of work and its callers read SQLAlchemy's errors (a busy SQLite, an unreachable
    database: ``store/unreachable.py``), so the driver's own are raised as SQLAlchemy raises them."""
    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    row = (
        NoteRow.__table__,
        {"bot_id": bot, "scope_kind": "group", "scope_id": "1", "content": None, "created_at": AT},
    )
    with pytest.raises(IntegrityError):
        async with engine.unit_of_work() as uow:
            await insert_rows(uow.session, [row])
    assert await rows_of(engine, NoteRow, bot) == []
