"""``eval admission FILE --model PRESET`` against the fake model: every line asked with the
historian's own prompt and function, the model's flags scored alone and with the rules, a line
whose call fails reported by its number (not a crash), a bad preset or option a usage error."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, chat_preset, tool_call
from processes import one_line_error, run_cli

from amrita_plugin_cognition.cli.eval_admission_model import AdmissionCase, score
from amrita_plugin_cognition.domain.admission import SecondOpinion
from amrita_plugin_cognition.engine.historian_call import TOOL_NAME

LINES = [
    # the rules catch these two whatever the model says
    {"text": "我的密码是 hunter2，别告诉别人", "admit": False, "reason": "credential"},
    {"text": "这个别记下来：我下周要去医院复查", "admit": False, "reason": "do_not_remember"},
    # the long tail: only the model's flags catch these
    {"text": "我家门禁是井号后面加上我妈妈的生日", "admit": False, "reason": "credential"},
    {"text": "同事老王最近确诊了抑郁症，正在吃药", "admit": False, "reason": "about_someone_else"},
    # to keep; the model wrongly flags the second
    {"text": "我最近在学 Python 的 asyncio", "admit": True},
    {"text": "小明下周三要去成都出差", "admit": True},
    # the model's call fails on this one
    {"text": "周末我去爬山", "admit": True},
]
FLAGS = {
    "门禁": {"secret": True},
    "抑郁症": {"about_someone_else": "true"},
    "成都": {"do_not_remember": 1},
    "hunter2": {},  # the model misses it: the rules have it
}
_OBSERVATION = re.compile(r"\[观察#1\] [^：\n]*：(.+)")


def user_prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content")) for message in body["messages"] if message["role"] == "user")


def answer(body: dict[str, Any]) -> dict[str, Any] | None:
    found = _OBSERVATION.search(user_prompt(body))
    assert found, user_prompt(body)
    text = found.group(1)
    flags = next((value for word, value in FLAGS.items() if word in text), {})
    return tool_call(TOOL_NAME, {"facts": [{"text": f"QQ号10001（昵称用户）说：{text}", "sources": [1], **flags}]})


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", "utf-8")
    return path


async def test_the_score_counts_the_model_alone_and_with_the_rules_and_reports_failed_lines() -> None:
    cases = [AdmissionCase(number, line["text"], line["admit"], line.get("reason", "unspecified"))
             for number, line in enumerate(LINES, start=1)]  # fmt: skip

    async def ask(text: str) -> SecondOpinion:
        if "爬山" in text:
            raise RuntimeError("the model is down")
        flags = next((value for word, value in FLAGS.items() if word in text), {})
        return SecondOpinion(**{name: bool(value) for name, value in flags.items()})

    report = await score(cases, ask)
    assert report["kind"] == "admission" and report["cases"] == 7
    assert report["recall_by_reason"] == {"about_someone_else": 0.0, "credential": 0.5, "do_not_remember": 1.0}
    assert report["false_rejection_rate"] == 0.0
    model = report["model"]
    assert model["cases"] == 6 and model["errors"] == 1 and model["error_lines"] == [7]
    assert "down" in model["last_error"]
    assert model["recall_by_reason"] == {"about_someone_else": 1.0, "credential": 0.5, "do_not_remember": 0.0}
    assert model["false_rejection_rate"] == 0.5
    assert model["flags"] == {"secret": 1, "do_not_remember": 1, "about_someone_else": 1}
    combined = report["combined"]
    assert combined["recall_by_reason"] == {"about_someone_else": 1.0, "credential": 1.0, "do_not_remember": 1.0}
    assert combined["false_rejection_rate"] == 0.5


@pytest.mark.slow  # starts another process: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # the eval reads files and asks the fake model: no storage backend
def test_the_command_asks_the_model_with_the_historians_prompt(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    preset = tmp_path / "flags-model.json"
    preset.write_text(json.dumps(chat_preset("flags-model", "flags-model", fake_openai.base_url, "sk", False)), "utf-8")
    cases = write_lines(tmp_path / "cases.jsonl", LINES)
    # one answer per line, in order; the failing line answers HTTP 400 (not retried)
    for line in LINES:
        if "爬山" in line["text"]:
            fake_openai.script.append({"__status__": 400, "message": "bad request"})
        else:
            body = {"messages": [{"role": "user", "content": f"[观察#1] 时间 说话人：{line['text']}"}]}
            fake_openai.script.append(answer(body))  # type: ignore[arg-type]
    result = run_cli("eval", "admission", str(cases), "--model", str(preset), "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["recall_by_reason"] == {"about_someone_else": 0.0, "credential": 0.5, "do_not_remember": 1.0}
    assert report["model"]["preset"] == "flags-model" and report["model"]["error_lines"] == [7]
    assert report["model"]["recall_by_reason"] == {"about_someone_else": 1.0, "credential": 0.5, "do_not_remember": 0.0}
    assert report["combined"]["recall_by_reason"] == {
        "about_someone_else": 1.0,
        "credential": 1.0,
        "do_not_remember": 1.0,
    }
    assert report["combined"]["false_rejection_rate"] == 0.5
    # every line was one historian call, with the function the historian offers
    assert len(fake_openai.chat_requests) == len(LINES)
    for body, line in zip(fake_openai.chat_requests, LINES, strict=True):
        assert [tool["function"]["name"] for tool in body["tools"]] == [TOOL_NAME]
        prompt = user_prompt(body)
        assert "【待改写的观察】" in prompt and line["text"] in prompt
        parameters = body["tools"][0]["function"]["parameters"]["properties"]["facts"]["items"]["properties"]
        assert {"secret", "do_not_remember", "about_someone_else"} <= set(parameters)

    # the human-readable report shows the three columns
    for line in LINES:
        fake_openai.script.append(answer({"messages": [{"role": "user", "content": f"[观察#1] t s：{line['text']}"}]}))
    shown = run_cli("eval", "admission", str(cases), "--model", str(preset), "--table")
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "规则+模型" in shown.stdout and "flags-model" in shown.stdout


@pytest.mark.slow  # starts another process: runs with tests/e2e (-m slow)
@pytest.mark.embedded_only  # the eval reads files and asks the fake model: no storage backend
def test_a_bad_preset_or_model_for_another_kind_is_a_usage_error(tmp_path: Path) -> None:
    cases = write_lines(tmp_path / "cases.jsonl", LINES[:1])
    missing = run_cli("eval", "admission", str(cases), "--model", "no-such-preset", "--json")
    assert missing.returncode == 2 and "no-such-preset" in one_line_error(missing)
    other = run_cli("eval", "time", str(cases), "--model", "x")
    assert other.returncode == 2 and "--model" in other.stderr
