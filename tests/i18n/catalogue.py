"""What the translation tests read: the catalogues (.po), and the strings the code marks.

No gettext binary is needed: .po files are parsed here, templates are turned into gettext calls by
Django's own `templatize` (what makemessages feeds xgettext), Python is read with `ast` and the
page modules with a regular expression over gettext/ngettext calls.
"""

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.utils.translation.template import templatize

ROOT = Path(settings.BASE_DIR)
LOCALE = ROOT / "locale"
LANGUAGE_DIRS = ["zh_Hans"]
# What makemessages leaves out (scripts/i18n_update.sh): the API stays English; tests, data and
# deployment files hold no interface strings.
NOT_TRANSLATED = {"api", "tests", "var", "bench", "docs", "deploy", "node_modules"}
PYTHON_MARKERS = {"_", "gettext", "gettext_lazy", "gettext_noop", "ngettext", "ngettext_lazy"}


@dataclass
class Entry:
    msgid: str
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and all(self.msgstr.values())


def _unquote(text: str) -> str:
    return ast.literal_eval(text)


def read_po(path: Path) -> list[Entry]:
    """Every entry of a .po file, the header (msgid "") included."""
    entries: list[Entry] = []
    entry: Entry | None = None
    target = None
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        line = line.strip()
        if not line:
            if entry is not None:
                entries.append(entry)
            entry, target = None, None
            continue
        if line.startswith("#~"):
            raise AssertionError(f"{path}: obsolete entry left in the catalogue: {line}")
        if entry is None:
            entry = Entry(msgid="")
        if line.startswith("#,"):
            entry.flags |= {flag.strip() for flag in line[2:].split(",")}
        elif line.startswith("#"):
            continue
        elif line.startswith("msgid_plural "):
            entry.msgid_plural, target = _unquote(line[13:]), "msgid_plural"
        elif line.startswith("msgid "):
            entry.msgid, target = _unquote(line[6:]), "msgid"
        elif line.startswith("msgstr["):
            index = int(line[7 : line.index("]")])
            entry.msgstr[index], target = _unquote(line[line.index("]") + 2 :]), index
        elif line.startswith("msgstr "):
            entry.msgstr[0], target = _unquote(line[7:]), 0
        elif line.startswith('"'):
            if isinstance(target, int):
                entry.msgstr[target] += _unquote(line)
            else:
                setattr(entry, target, getattr(entry, target) + _unquote(line))
    return entries


def catalogue(language: str, domain: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{domain}.po"


def _sources(suffix: str, under: Path = ROOT):
    for path in sorted(under.rglob(f"*{suffix}")):
        parts = path.relative_to(ROOT).parts
        if parts[0] in NOT_TRANSLATED or any(part.startswith(".") for part in parts):
            continue
        yield path


def template_files() -> list[Path]:
    return [p for p in _sources(".html") if "templates" in p.relative_to(ROOT).parts]


def script_files() -> list[Path]:
    return list(_sources(".js", ROOT / "static" / "js"))


_QUOTED = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_TEMPLATIZED_CALL = re.compile(r"\b(n?)gettext\(u?" + _QUOTED + r"(?:,\s*u?" + _QUOTED + ")?")


def template_msgids(source: str) -> set[str]:
    return {ast.literal_eval(m.group(2)) for m in _TEMPLATIZED_CALL.finditer(templatize(source))}


def python_msgids(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        first = node.args[0]
        if name in PYTHON_MARKERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.add(first.value)
    return found


_JS_CALL = re.compile(r'\b(?:gettext|ngettext)\(\s*("(?:[^"\\\n]|\\.)*")')


def script_msgids(source: str) -> set[str]:
    return {json.loads(m.group(1)) for m in _JS_CALL.finditer(source)}


def marked_msgids(domain: str) -> set[str]:
    """Every msgid the code marks for `domain`: what makemessages would put in the catalogue."""
    if domain == "djangojs":
        return set().union(*(script_msgids(p.read_text(encoding="utf-8")) for p in script_files()))
    found = set()
    for path in template_files():
        found |= template_msgids(path.read_text(encoding="utf-8"))
    for path in _sources(".py"):
        if "migrations" not in path.parts:
            found |= python_msgids(path.read_text(encoding="utf-8"))
    return found
