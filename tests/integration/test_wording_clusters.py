"""The pairs the near-duplicate check rejects only for their wording (``domain/clusters.py``'s
``wording``): the pre-pass reports them beside the near clusters, never merges them, the cycle's
tools show them labelled as doubted, the judgement step counts them as work, and the model's
merge of one goes through ``cycle_memory_merge`` as any judged merge."""

from __future__ import annotations

import re

import pytest
from cycle_helpers import Tools, desk_of, row, write
from engine_helpers import NOW, make_engine, new_bot

from amrita_plugin_cognition.cli.render_consolidation import judgement_usage_lines
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import MemoryStatus, Scope

CHAT = Scope("group", "20011")
JOB = "小明每周六都在学校旁边的那家咖啡店兼职做咖啡师。"
#: Only the wording differs (咖啡师 / 服务员), and the learned check is unsure (below its cut point):
#: doubted. (兼职 / 打工 was such a pair before the learned check; it now reads as one fact.)
JOB_DOUBTED = "小明每周六都在学校旁边的那家咖啡店兼职做服务员。"
OTHER_DAY = "小明每周日都在学校旁边的那家咖啡店打工做咖啡师。"
GYM = "QQ号10005（昵称阿杰）每周三晚上去健身房。"
GYM_REWORDED = "阿杰（QQ号10005）每个星期三晚上去健身房。"


@pytest.fixture
async def engine(tmp_root, chroma_port):  # type: ignore[no-untyped-def]
    return await make_engine(tmp_root, chroma_port)


async def test_a_pair_doubted_only_for_its_wording_is_offered_and_merged_by_the_model(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    job, job_again = await write(engine, bot, CHAT, JOB), await write(engine, bot, CHAT, JOB_DOUBTED)
    other_day = await write(engine, bot, CHAT, OTHER_DAY)  # a conflicting part (when): never offered
    gym, gym_again = await write(engine, bot, CHAT, GYM), await write(engine, bot, CHAT, GYM_REWORDED)
    await engine.index.drain()
    report = await engine.consolidation.dry_run(Operator(), bot, CHAT, now=NOW)
    assert report.near == [(gym, gym_again)]
    assert report.wording == [(job, job_again)]
    assert all(other_day not in cluster for cluster in report.wording)
    assert report.model_step is not None and "wording_clusters" in report.model_step.work
    for member in (job, job_again):  # proposed, never merged by the pre-pass
        assert (await row(engine, member)).status == MemoryStatus.ACTIVE.value

    desk = desk_of(bot, CHAT, prepass=report)
    tools = Tools(engine, desk)
    context = await tools("cycle_context")
    assert "待判断的近似重复 1 组，另有可能相同、措辞不同的 1 组（规则存疑）" in context
    clusters = await tools("cycle_clusters")
    assert re.search(r"^组1：$", clusters, re.M) and re.search(r"^组2（可能相同，措辞不同[^）]*）：$", clusters, re.M)
    assert clusters.index(f"#{gym} ") < clusters.index(f"#{job} ") and "共 2 组" in clusters
    answer = await tools("cycle_memory_merge", ids=[job, job_again], text=JOB, importance="medium")
    merged_id = int(re.findall(r"#(\d+)", answer)[-1])
    assert (await row(engine, merged_id)).text == JOB and desk.changes["merged"] == 1
    for member in (job, job_again):
        assert (await row(engine, member)).status == MemoryStatus.SUPERSEDED.value
    after = await tools("cycle_clusters")
    assert "组2（可能相同，措辞不同" in after and "已处理（有效成员不足两条）" in after


async def test_a_cycle_run_records_how_many_wording_clusters_it_was_given(engine) -> None:  # type: ignore[no-untyped-def]
    bot = new_bot()
    await write(engine, bot, CHAT, JOB)
    await write(engine, bot, CHAT, JOB_DOUBTED)
    await engine.index.drain()
    report = await engine.consolidation.run_now(Operator(), bot, CHAT, now=NOW)
    assert len(report.wording) == 1 and report.model_step is not None
    usage = await engine.consolidation.usage(now=NOW)
    (run,) = [run for run in usage["recent"] if run["bot"] == bot]
    assert (run["near"], run["wording"]) == (0, 1)
    shown = "\n".join(judgement_usage_lines(usage))
    assert "相近 0 组，措辞不同待判 1 组" in shown
