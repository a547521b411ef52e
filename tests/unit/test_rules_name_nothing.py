"""No rule names one product, app, bank, site, title, person or sentence (issue 21). The names below
are the ones the rules once listed, kept here as the test's data: none may come back into a pattern or
a word table of admission, the gate, the time resolver or the facts' lexicon. Comments and docstrings
may still mention one as an example of a class or as a known cost; string constants may not."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parents[2] / "amrita_plugin_cognition" / "domain"
MODULES = sorted(
    [
        *DOMAIN.glob("admission/*.py"),
        *DOMAIN.glob("gate*.py"),
        *DOMAIN.glob("timeresolve/*.py"),
        DOMAIN / "fact_lexicon.py",
    ]
)

REMOVED_NAMES = (
    # password managers, chat apps and sites before a handle, mail services, platforms
    *("bitwarden", "lastpass", "keepass", "dashlane", "1password", "outlook", "gmail", "skype", "telegram"),
    *("whatsapp", "wechat", "weixin", "instagram", "twitter", "icloud", "steam", "github", "gitlab"),
    *("微信", "微博", "抖音", "快手", "小红书", "b站", "推特"),
    # one site's cookies, one vendor's tools, hosts and key prefixes
    *("sessdata", "bili_jct", "bduss", "z_c0", "_m_h5_tk", "_tb_token_", "odin_tt", "redis-cli", "sshpass"),
    *("mysqldump", "mariadb", "feishu", "larksuite", "dingtalk", "slack", "discord", "alchemy", "infura"),
    *("quiknode", "chainstack", "akia", "aiza", "ltai", "akid", "glpat", "x-amz", "corpsecret", "asin", "usdt"),
    # banks by their short names
    *("工行", "农行", "中行", "建行", "招行", "交行", "工农中建招交"),
    # titles, brands, people and lines of poems the time resolver and the gate once listed
    *("明日方舟", "明日之后", "今日头条", "明日香", "周一围", "周六福", "五月花", "十月稻田", "三月街"),
    *("明日复明日", "明日何其多", "昨日之日不可留", "明天和意外", "五月天", "周大福", "昨夜西风", "天猫"),
)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings (of the module, a class or a function)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _string_constants(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


def test_the_modules_are_found() -> None:
    names = {path.name for path in MODULES}
    assert {"credentials.py", "keys.py", "gate_lexicon.py", "lexicon.py", "fact_lexicon.py"} <= names


def _named(name: str) -> re.Pattern[str]:
    """A Latin name as a word of its own (steam, not upstream; github in github_pat_), a Chinese one anywhere."""
    if name.isascii():
        return re.compile(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])")
    return re.compile(re.escape(name))


@pytest.mark.parametrize("path", MODULES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_no_pattern_or_word_table_names_a_removed_name(path: Path) -> None:
    strings = [text.lower() for text in _string_constants(path)]
    named = sorted({name for name in REMOVED_NAMES for text in strings if _named(name.lower()).search(text)})
    assert not named, f"{path.name} names {named}"


def test_a_latin_name_is_a_word_of_its_own() -> None:
    assert _named("steam").search("steam|epic") and not _named("steam").search("upstream")
    assert _named("github").search("github_pat_") and _named("微信").search("微信号")


def test_the_guard_sees_a_name_in_a_pattern(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text('"""Mentions 今日头条 as a known cost."""\nSAFE = r"今日头条|明日黄花"\n', encoding="utf-8")
    strings = _string_constants(module)
    assert strings == ["今日头条|明日黄花"]
