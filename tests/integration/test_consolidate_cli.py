"""``ambot cognition consolidate`` and the cycles in ``status``: the command in another process on
a fresh home seeded with duplicates, and what a person reads."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.cli import render, render_consolidation

SEED = """
from amrita_plugin_cognition.api import MemoryDraft, Scope

chat = Scope("group", "20001")
texts = ["小红于2026-11-20领养了一只橘猫。", "小红于2026-11-20领养了一只橘猫！", "老王每天早上六点起床跑步。",
         "阿杰每周三晚上去健身房。", "阿杰每个星期三晚上去健身房。"]
drafts = [MemoryDraft(text, chat, speaker_id="10001", speaker_name="小明") for text in texts]
result = await engine.memories.remember("90001", drafts, now=datetime.now(timezone.utc) - timedelta(days=1))
await engine.index.drain()
print("seeded", *result.record_ids.values())
"""


@pytest.mark.slow  # starts other processes: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # its processes use their own SQLite home: the backend does not reach them
def test_the_cli_plans_then_merges_a_chats_exact_duplicates(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from processes import one_line_error, only_json, run_cli, seed_home

    home = tmp_path / "home"
    ids = [int(item) for item in seed_home(home, SEED).split("seeded")[1].split()]

    dry = run_cli("consolidate", "--home", str(home), "--chat", "group:20001", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr[-2000:]
    plan = only_json(dry.stdout)
    assert plan["bot_id"] == "90001" and plan["dry_run"] and plan["memories"] == 5
    assert [item["sources"] for item in plan["exact"]] == [ids[:2]] and plan["merged"] == 0
    assert plan["near_proposed"] == [ids[3:5]] and plan["wording_proposed"] == []
    # the dry run calls no model but says it would (a model gateway, new memories, budget left)
    assert plan["model_step"]["ended"] == "dry_run" and plan["model_step"]["reason"] is None
    assert (
        plan["model_step"]["work"] == ["near_clusters", "new_memories"] and plan["model_step"]["budget_tokens"] == 45000
    )
    assert plan["next_window"]["start"] < plan["next_window"]["end"]
    table = run_cli(
        "consolidate", "--home", str(home), "--chat", "group:20001", "--dry-run", "--table", env={"COLUMNS": "200"}
    )
    assert f"#{ids[0]}、#{ids[1]}" in table.stdout and "将合并 1 组（2 条）" in table.stdout
    assert "模型判断：会调用模型（相近的记忆、新记忆），本次最多 45000 tokens" in table.stdout
    assert "没有做任何修改" in table.stdout

    done = run_cli("consolidate", "--home", str(home), "--chat", "group:20001", "--bot", "90001", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = only_json(done.stdout)
    assert report["merged"] == 1 and report["sources_merged"] == 2 and report["exact"][0]["merged_id"] > ids[-1]
    # this home has no model preset: the step is recorded as unavailable, the merge stands
    assert report["model_step"]["ended"] == "unavailable" and report["model_step"]["rounds"] == 0
    again = only_json(run_cli("consolidate", "--home", str(home), "--chat", "group:20001", "--json").stdout)
    assert again["exact"] == [] and again["merged"] == 0 and again["memories"] == 4
    status = only_json(run_cli("status", "--home", str(home), "--json").stdout)["cycles"]
    assert (status["merged"], status["merged_sources"], status["chats_cycled"]) == (1, 2, 1)
    runs = status["judgement"]["recent"]
    # the near pair is still unjudged (no model answered), so the second cycle asks for the model again
    assert [(run["chat"], run["ended"]) for run in runs] == [("group:20001", "unavailable")] * 2
    assert status["judgement"]["daily_token_budget"] == 200000
    nobody = run_cli("consolidate", "--home", str(home), "--chat", "group:29999")
    assert nobody.returncode == 2 and "--bot" in one_line_error(nobody)


def test_consolidate_and_status_read_as_sentences_and_tables(capsys: pytest.CaptureFixture[str]) -> None:
    from amrita_plugin_cognition.engine.judgement import ModelStep

    judged = ModelStep(
        "stopped", work=("near_clusters", "new_memories"), budget_tokens=30000, rounds=4, prompt_tokens=5200,
        completion_tokens=800, tool_calls=6, changes={"cards": 2, "merged": 1}, summary="合并了一组相近的记忆",
    )  # fmt: skip
    report = {
        "bot_id": "90001",
        "chat": "group:20001",
        "dry_run": False,
        "switched_off": False,
        "memories": 12,
        "exact": [{"sources": [3, 9], "text": "小红领养了一只橘猫。", "importance": "high", "merged_id": 14}],
        "merged": 1,
        "sources_merged": 2,
        "skipped": [{"sources": [4, 5], "reason": "opted_out"}],
        "near_proposed": [[6, 7]],
        "wording_proposed": [[8, 10]],
        "model_step": judged.as_dict(),
        "next_window": {"start": "2026-12-08T19:00:00+00:00", "end": "2026-12-08T20:00:00+00:00", "reason": "x"},
        "elapsed_ms": 3.0,
    }
    render_consolidation.consolidated(report)
    render_consolidation.consolidated({**report, "switched_off": True})
    render_consolidation.consolidated({**report, "model_step": ModelStep("skipped", "daily_budget_spent").as_dict()})
    dry = ModelStep("dry_run", "budget_off").as_dict()
    render_consolidation.consolidated({**report, "dry_run": True, "model_step": dry})
    usage = {
        "day": "2026-12-08", "daily_token_budget": 200000, "cycle_token_budget": 30000,
        "bots": [{"bot": "90001", "tokens_today": 36000, "runs_today": 3, "judged_today": 2, "left_today": 164000}],
        "recent": [
            {"bot": "90001", "chat": "group:20001", "started_at": "2026-12-08T19:00:00+00:00", "ended": "stopped",
             "merged": 1, "near": 2, "wording": 1, "rounds": 4, "tokens": 6000, "reason": None, "reason_zh": None},
            {"bot": "90001", "chat": "group:20002", "started_at": "2026-12-08T19:20:00+00:00", "ended": "skipped",
             "merged": 0, "near": 0, "wording": 0, "rounds": 0, "tokens": 0, "reason": "nothing_to_judge",
             "reason_zh": "没有需要模型判断的内容"},
        ],
    }  # fmt: skip
    print("\n".join(render_consolidation.judgement_usage_lines(usage)))
    print(
        render._cycles_sentence(
            {
                "enabled": True,
                "pending": 3,
                "processing": 1,
                "dead": 0,
                "chats_cycled": 5,
                "last_cycle_at": "2026-12-08T19:10:00+00:00",
                "merged": 7,
                "merged_sources": 15,
            }
        )
    )
    out = capsys.readouterr().out
    assert "#3、#9" in out and "#14" in out and "已合并 1 组（2 条）" in out
    assert "未合并 #4、#5：涉及已关闭记忆的用户" in out and "相近的记忆 1 组（候选，由模型判断）：#6、#7" in out
    assert "可能相同、措辞不同的记忆 1 组（规则存疑，由模型判断）：#8、#10" in out
    assert (
        "模型判断（相近的记忆、新记忆）：模型完成并停止，4 轮，输入 5200 / 输出 800 tokens（预算 30000），工具调用 6 次"
        in out
    )
    assert "改动：合并 1，画像 2" in out and "总结：合并了一组相近的记忆" in out
    assert "模型判断：没有调用模型（本机器人账号今天的整理 token 预算已用完）" in out
    assert "模型判断：不会调用模型（每日 token 预算为 0（consolidation.daily_token_budget））" in out
    assert "下次整理窗口" in out and "记忆已关闭" in out
    assert "机器人 90001：今天 36000 / 200000 tokens，整理 3 次（其中调用模型 2 次）" in out
    assert (
        "group:20001（机器人 90001）合并重复 1 条，相近 2 组，措辞不同待判 1 组；模型完成并停止，4 轮，6000 tokens"
        in out
    )
    assert (
        "group:20002（机器人 90001）合并重复 0 条，相近 0 组，措辞不同待判 0 组；未调用模型：没有需要模型判断的内容"
        in out
    )
    assert (
        "等待 3 个会话，进行中 1" in out and "已整理过 5 个会话" in out and "已合并 7 条（取代 15 条重复记忆）" in out
    )
