"""The Simplified Chinese catalogues are complete: every marked string is in them, translated, not fuzzy.

"Every marked string is in them" is what running makemessages would show (scripts/i18n_update.sh):
the strings the code marks are gathered the way makemessages does (tests/i18n/catalogue.py), so
no gettext binary is needed here.
"""

from gettext import GNUTranslations

import pytest

from tests.i18n.catalogue import LANGUAGE_DIRS, catalogue, marked_msgids, read_po

DOMAINS = ("django", "djangojs")
CASES = [(language, domain) for language in LANGUAGE_DIRS for domain in DOMAINS]


@pytest.mark.parametrize(("language", "domain"), CASES)
def test_every_entry_is_translated_and_not_fuzzy(language, domain):
    entries = read_po(catalogue(language, domain))
    header, entries = entries[0], entries[1:]
    assert header.msgid == "" and "fuzzy" not in header.flags
    assert entries
    fuzzy = [e.msgid for e in entries if "fuzzy" in e.flags]
    untranslated = [e.msgid for e in entries if not e.translated]
    assert not fuzzy, f"fuzzy entries in {domain}.po: {fuzzy}"
    assert not untranslated, f"untranslated entries in {domain}.po: {untranslated}"


@pytest.mark.parametrize(("language", "domain"), CASES)
def test_every_marked_string_is_in_the_catalogue(language, domain):
    in_catalogue = {e.msgid for e in read_po(catalogue(language, domain))[1:]}
    marked = marked_msgids(domain)
    missing = sorted(marked - in_catalogue)
    stale = sorted(in_catalogue - marked)
    assert not missing, f"run scripts/i18n_update.sh and translate: {missing}"
    assert not stale, f"no longer in the code (run scripts/i18n_update.sh): {stale}"


@pytest.mark.parametrize(("language", "domain"), CASES)
def test_compiled_catalogue_matches_the_po(language, domain):
    po = catalogue(language, domain)
    with open(po.with_suffix(".mo"), "rb") as mo:
        compiled = GNUTranslations(mo)
    for entry in read_po(po)[1:]:
        if entry.msgid_plural is None:
            assert compiled.gettext(entry.msgid) == entry.msgstr[0], f"recompile: {entry.msgid!r}"
        else:
            assert compiled.ngettext(entry.msgid, entry.msgid_plural, 1) == entry.msgstr[0]


def test_planted_fuzzy_and_untranslated_entries_are_caught(tmp_path, monkeypatch):
    planted = tmp_path / "zh_Hans" / "LC_MESSAGES" / "django.po"
    planted.parent.mkdir(parents=True)
    planted.write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        '#, fuzzy\nmsgid "Projects"\nmsgstr "项目"\n\n'
        'msgid "Settings"\nmsgstr ""\n\n'
        'msgid "%(n)s item"\nmsgid_plural "%(n)s items"\nmsgstr[0] ""\n',
        encoding="utf-8",
    )
    monkeypatch.setattr("tests.i18n.test_catalogue.catalogue", lambda language, domain: planted)
    with pytest.raises(AssertionError, match=r"fuzzy entries in django.po: \['Projects'\]"):
        test_every_entry_is_translated_and_not_fuzzy("zh_Hans", "django")
    planted.write_text(planted.read_text(encoding="utf-8").replace("#, fuzzy\n", ""), encoding="utf-8")
    with pytest.raises(AssertionError, match=r"untranslated entries in django.po: \['Settings', '%\(n\)s item'\]"):
        test_every_entry_is_translated_and_not_fuzzy("zh_Hans", "django")


def test_planted_unlisted_string_is_caught(monkeypatch):
    real = marked_msgids
    planted = {"A string nobody translated"}
    monkeypatch.setattr("tests.i18n.test_catalogue.marked_msgids", lambda domain: real(domain) | planted)
    with pytest.raises(AssertionError, match="A string nobody translated"):
        test_every_marked_string_is_in_the_catalogue("zh_Hans", "django")
