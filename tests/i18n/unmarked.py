"""Finds interface text that is not marked for translation, in templates and in page modules.

Templates: Django's own Lexer splits a template into text, variables and tags; the text outside
HTML tags (and the values of the attributes a person reads: title, aria-label, placeholder, alt,
label, data-key-label) must sit inside {% translate %} or {% blocktranslate %}, unless it holds no
word (symbols, numbers, single keys) or is on ALLOWED. <script>, <style>, <kbd>, <code> and
{% comment %} hold code, keys or notes for developers, not interface text.

Page modules: a heuristic over string literals. A literal that reads like a sentence or a label
(a space between words, or a capital followed by letters) and is not the argument of gettext,
ngettext or interpolate is reported, except on lines that only use strings as code (selectors,
events, class names, headers) and literals on ALLOWED_SCRIPT_STRINGS.
"""

import re

from django.template.base import Lexer, TokenType

WORD = re.compile(r"[A-Za-z]{2,}")
# Not words to translate: the product's name, format and protocol names, units.
ALLOWED = {"VidQA Studio", "API", "fps", "JSON", "CSV", "SRT", "WebVTT", "JSONL", "ffmpeg", "sha256", "zip", "tar"}
READ_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt", "label", "data-key-label")
_ATTRIBUTE = re.compile(r"\s(" + "|".join(map(re.escape, READ_ATTRIBUTES)) + r')="([^"{}]*)"')
_CODE_ELEMENTS = ("script", "style", "kbd", "code")


KEY = re.compile(r"((Ctrl|Alt|Shift|⌘)\+)*(Esc|Enter|Space|Tab|\S)")


def _needs_translation(text: str) -> bool:
    text = re.sub(r"\s+", " ", text).strip(" ·/|←→")
    if not WORD.search(text) or text in ALLOWED:
        return False
    # A keyboard key or combination: Ctrl+Enter, Alt+↑, Esc, Space …
    return not KEY.fullmatch(text)


def unmarked_template_text(source: str) -> list[tuple[int, str]]:
    """(line, text) of every piece of interface text in `source` outside translate tags."""
    found: list[tuple[int, str]] = []
    in_tag = False
    tag_line = 0
    quote = ""  # the quote an attribute value inside the open tag started with
    tag = ""
    inside: list[str] = []  # open code elements
    skip = False  # inside {% comment %}, {% verbatim %} or {% blocktranslate %}
    run: list[tuple[int, str]] = []

    def flush():
        text = "".join(t for _, t in run)
        if run and not inside and _needs_translation(text):
            found.append((run[0][0], re.sub(r"\s+", " ", text).strip()))
        run.clear()

    def close_tag(lineno):
        nonlocal tag
        name = re.match(r"</?\s*([a-zA-Z0-9-]*)", tag).group(1).lower()
        if name in _CODE_ELEMENTS:
            if tag.startswith("</"):
                if name in inside:
                    inside.remove(name)
            elif not tag.endswith("/>"):
                inside.append(name)
        if not inside or inside == ["kbd"] or inside == ["code"]:
            for attr, value in _ATTRIBUTE.findall(tag):
                if _needs_translation(value):
                    found.append((tag_line, f'{attr}="{value}"'))
        tag = ""

    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            command = token.contents.split()[0] if token.contents else ""
            if command in ("comment", "verbatim", "blocktranslate", "blocktrans"):
                flush()
                skip = True
            elif command in ("endcomment", "endverbatim", "endblocktranslate", "endblocktrans"):
                skip = False
            elif not in_tag:
                flush()
            continue
        if skip or token.token_type == TokenType.COMMENT:
            continue
        if token.token_type == TokenType.VAR:
            if in_tag:
                tag += "{{}}"
            else:
                run.append((token.lineno, "{{}}"))
            continue
        text, i = token.contents, 0
        while i < len(text):
            if in_tag:
                end = -1
                for j in range(i, len(text)):
                    char = text[j]
                    if quote:
                        quote = "" if char == quote else quote
                    elif char in "\"'" and tag[-1:] == "=" or char in "\"'" and text[j - 1 : j] == "=":
                        quote = char
                    elif char == ">":
                        end = j
                        break
                    tag += char if j >= i else ""
                if end < 0:
                    break
                tag += ">"
                in_tag = False
                close_tag(token.lineno)
                i = end + 1
            else:
                start = text.find("<", i)
                chunk = text[i:] if start < 0 else text[i:start]
                if chunk:
                    first = i + len(chunk) - len(chunk.lstrip())
                    run.append((token.lineno + text.count("\n", 0, first), chunk))
                if start < 0:
                    break
                flush()
                in_tag, tag, i = True, "", start
                tag_line = token.lineno + text.count("\n", 0, start)
    flush()
    return found


_LITERAL = re.compile(r'(?<![\w$.])"((?:[^"\\\n]|\\.)*)"')
_MARKED_BEFORE = re.compile(r"\b(?:gettext|ngettext|interpolate)\(\s*$|,\s*$")
# Lines whose strings are code: selectors, events, keys, class names, request details, storage keys.
_CODE_LINE = re.compile(
    r"querySelector|closest\(|matches\(|addEventListener|dispatchEvent|CustomEvent|classList|className|"
    r"createElement|getAttribute|setAttribute\(\"(?!title|aria-label|placeholder)|dataset|fetch\(|"
    r"localStorage|sessionStorage|\bkey\b|\.code\b|headers|method:|JSON\.|\"use strict\"|toLocale|"
    r"\.(status|role|origin|decision|type|tagName|name) *[!=]=="
)
# Literals that read like words but are data: key names, event names, codes.
ALLOWED_SCRIPT_STRINGS = {
    "DOMContentLoaded",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Enter",
    "Escape",
    "HTTP ",
}


def _reads_like_text(literal: str) -> bool:
    if literal in ALLOWED_SCRIPT_STRINGS or not WORD.search(literal) or KEY.fullmatch(literal):
        return False
    if re.search(r"[\[\]#=<>{}/]|^\.|^[a-z]+[-_:][a-z]|^[a-z-]+$|^[a-z]+[A-Z]\w*$|^\w+\.\w+$", literal):
        return False
    return " " in literal.strip() or bool(re.match(r"[A-Z][a-z]", literal)) or literal.endswith("…")


def unmarked_script_strings(source: str) -> list[tuple[int, str]]:
    """(line, literal) of every string in a page module that reads like interface text, unmarked."""
    found = []
    in_comment = False
    plural_depth = 0  # open parentheses of an ngettext call that goes on over several lines
    for number, line in enumerate(source.splitlines(), 1):
        if plural_depth > 0:
            plural_depth += line.count("(") - line.count(")")
            continue
        stripped = line.strip()
        if stripped.startswith("/*"):
            in_comment = True
        if in_comment:
            in_comment = "*/" not in stripped
            continue
        if stripped.startswith("//") or _CODE_LINE.search(line):
            continue
        code = line.split(" //")[0]
        call = code.rfind("ngettext(")
        if call >= 0:
            rest = _LITERAL.sub('""', code[call:])
            plural_depth = max(rest.count("(") - rest.count(")"), 0)
        for match in _LITERAL.finditer(code):
            if not _reads_like_text(match.group(1)):
                continue
            before = code[: match.start()]
            if re.search(r"\b(?:gettext|ngettext)\(\s*$", before):
                continue
            if re.search(r"\bngettext\([^()]*$", _LITERAL.sub('""', before)):  # the plural of an ngettext call
                continue
            found.append((number, match.group(1)))
    return found
