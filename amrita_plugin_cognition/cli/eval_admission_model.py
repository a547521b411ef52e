"""``cognition eval admission FILE --model PRESET``: the historian model's flags measured on an
admission file, beside the rules.

Every line is asked of the model the way the historian asks it: the same gateway, the same
prompt and function (``engine/historian_call.py``), one observation in an ``end`` job of its own.
The model's flags alone are scored like the rules (any flag on an ``admit: false`` line catches
it, any flag on an ``admit: true`` line is a false rejection), and so is the two together, as
the bot runs them: the rules first (a refusal or a redaction stands), then any flag. A line
whose call failed (every attempt) is reported by its line number and left out of both model
figures; the rules' figures cover every line. The model sees each line as said: what the rules
refuse or redact never reaches it in the bot, but then the rules have decided the line anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from ..api import AdmissionVerdict, SecondOpinion, admit
from .evaluation import EvalInputError, _require, no_cases, read_jsonl

#: Each call's limits (a bot owner's model may be slow; a failed line is reported, not fatal).
TIMEOUT_SECONDS = 60.0
MAX_RETRIES = 2
#: The zone the lines are said in (the configuration's default; the flags do not depend on it).
ZONE = "Asia/Shanghai"


class PresetError(ValueError):
    """The preset cannot be used (not found, not a preset); ``str()`` is Chinese, for the user."""


@dataclass(slots=True)
class AdmissionCase:
    line: int
    text: str
    admit: bool
    reason: str


def parse_admission_file(path: Path) -> list[AdmissionCase]:
    """Every case of an admission file; a malformed line or no case raises ``EvalInputError``."""
    cases = []
    for number, obj in read_jsonl(path):
        expected = _require(obj, "admit", bool, number)
        cases.append(
            AdmissionCase(number, _require(obj, "text", str, number), expected, str(obj.get("reason") or "unspecified"))
        )
    if not cases:
        raise no_cases()
    return cases


def load_preset(value: str) -> Any:
    """The amrita_core ``ModelPreset`` of a preset JSON file, or of a name: in the bot's Amrita
    model folder (under ambot the bot project is loaded to find it, as the commands that need the
    engine do), else registered with amrita_core in this process."""
    from amrita_core import ModelPreset, PresetManager

    from . import boot
    from .model_presets import find_preset_file, preset_search_dirs

    folders: list[Path] = []
    if not Path(value).expanduser().is_file() and not boot.standalone():
        boot.load_bot_project()
        folders = preset_search_dirs()
    found = find_preset_file(value, folders)
    if found is not None:
        try:
            return ModelPreset.model_validate(json.loads(found.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise PresetError(f"预设文件 {found} 无法使用：{str(error).splitlines()[0]}") from error
    try:
        return PresetManager().get_preset(value)
    except (ValueError, RuntimeError) as error:
        raise PresetError(
            f"找不到模型预设 {value}：请传入预设 JSON 文件的路径，或在机器人项目中用 Amrita 的预设名"
        ) from error


@dataclass(slots=True)
class _Score:
    """Recall by expected reason and the false rejection rate of one judge."""

    caught: dict[str, list[float]] = field(default_factory=dict)
    rejected: list[float] = field(default_factory=list)

    def add(self, case: AdmissionCase, refused: bool) -> None:
        if case.admit:
            self.rejected.append(1.0 if refused else 0.0)
        else:
            self.caught.setdefault(case.reason, []).append(1.0 if refused else 0.0)

    def report(self) -> dict[str, Any]:
        """Rates, 95 % intervals and counts, as the rules' own admission report has them."""
        from .evaluation import admission_report

        report = admission_report(
            {
                "cases": sum(len(values) for values in self.caught.values()) + len(self.rejected),
                "caught_by_reason": {reason: [int(sum(values)), len(values)] for reason, values in self.caught.items()},
                "false_rejections": [int(sum(self.rejected)), len(self.rejected)],
            }
        )
        del report["kind"]
        return report


def _rules_refused(case: AdmissionCase, verdict: AdmissionVerdict) -> bool:
    """What the rules' own eval counts: a refusal, or a redaction (caught for a credential line,
    a false rejection for a line to store as said)."""
    if case.admit:
        return not verdict.stored_as_is
    return not verdict.admit or (case.reason == "credential" and verdict.redacted)


Ask = Callable[[str], Awaitable[SecondOpinion]]


async def score(cases: list[AdmissionCase], ask: Ask, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The report: the rules (every line), the model alone and the rules with the model (the
    lines it answered). ``ask(text)`` awaits the model's ``SecondOpinion``; an ``LLMUnavailable``
    (or any other error) is the line's error."""
    rules, model, combined = _Score(), _Score(), _Score()
    flags = {"secret": 0, "do_not_remember": 0, "about_someone_else": 0}
    errors: list[int] = []
    last_error = ""
    for case in cases:
        verdict = admit(case.text)
        by_rules = _rules_refused(case, verdict)
        rules.add(case, by_rules)
        try:
            opinion = await ask(case.text)
        except Exception as error:  # a line's failure is reported, never the run's end
            errors.append(case.line)
            last_error = str(getattr(error, "en", "") or error)[:300]
        else:
            model.add(case, bool(opinion))
            combined.add(case, by_rules or bool(opinion))
            for name in opinion.names():
                flags[name] += 1
        if progress:
            progress(1)
    return {
        "kind": "admission",
        **rules.report(),
        "model": {
            **model.report(),
            "errors": len(errors),
            "error_lines": errors,
            "last_error": last_error,
            "flags": flags,
        },
        "combined": combined.report(),
    }


async def run(cases: list[AdmissionCase], preset: Any, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Ask every case of ``cases`` on ``preset`` (an amrita_core ``ModelPreset``) and score."""
    from ..api import opinion_asker

    ask = opinion_asker(preset, ZoneInfo(ZONE), TIMEOUT_SECONDS, MAX_RETRIES)
    report = await score(cases, ask, progress)
    report["model"] = {"preset": str(preset.name), **report["model"]}
    return report


def run_admission_model_eval(path: Path, preset_name: str) -> dict[str, Any]:
    """The whole harness: the file checked first (``EvalInputError``), then the preset
    (``PresetError``), then one call per line."""
    from . import boot
    from .evaluation import stderr_progress

    cases = parse_admission_file(path)
    # stdout is the report alone: what amrita_core logs as it loads goes to stderr, as under ambot
    with contextlib.redirect_stdout(sys.stderr):
        preset = load_preset(preset_name)
        boot.route_logs_to_stderr(boot.cli_log_level())
        advance = stderr_progress(len(cases), "询问模型")
        return asyncio.run(run(cases, preset, advance))


__all__ = ["EvalInputError", "PresetError", "parse_admission_file", "run_admission_model_eval", "score"]
