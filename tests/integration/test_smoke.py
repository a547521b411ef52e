from nonebug import App


async def test_engine_starts(app: App) -> None:
    from amrita_plugin_cognition.runtime import get_engine

    engine = await get_engine()
    status = await engine.index.status()
    assert status["index"]["healthy"] is True
