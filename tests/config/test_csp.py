"""The Content-Security-Policy every answer carries, and the endpoint its violation reports go to."""

import json
import logging
import re
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db


def _directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


def test_pages_are_served_under_an_enforced_policy_with_no_inline_script(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert "Content-Security-Policy-Report-Only" not in response
    policy = _directives(response)
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["report-uri"] == [settings.CSP_REPORT_PATH]


@pytest.mark.parametrize("url", ["/api/docs/", "/api/redoc/"])
def test_api_docs_pages_relax_only_styles_and_workers(client, url):
    policy = _directives(client.get(url))
    assert policy["script-src"] == ["'self'"], "the docs run no inline script either"
    assert "'unsafe-inline'" in policy["style-src"]


def test_a_violation_report_is_logged_and_answered_204(client, caplog):
    report = {
        "csp-report": {
            "document-uri": "http://testserver/p/x/",
            "violated-directive": "script-src-elem",
            "blocked-uri": "inline",
            "line-number": 12,
        }
    }
    with caplog.at_level(logging.WARNING, logger="csp.violations"):
        response = client.post(settings.CSP_REPORT_PATH, json.dumps(report), content_type="application/csp-report")
    assert response.status_code == 204
    assert "script-src-elem" in caplog.text and "http://testserver/p/x/" in caplog.text


def test_reporting_api_shape_is_logged_too(client, caplog):
    reports = [
        {"type": "csp-violation", "body": {"documentURL": "http://testserver/", "effectiveDirective": "style-src-attr"}}
    ]
    with caplog.at_level(logging.WARNING, logger="csp.violations"):
        response = client.post(settings.CSP_REPORT_PATH, json.dumps(reports), content_type="application/reports+json")
    assert response.status_code == 204
    assert "style-src-attr" in caplog.text


def test_the_report_endpoint_needs_no_csrf_token_and_refuses_large_or_bad_bodies(caplog):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    assert client.post(settings.CSP_REPORT_PATH, "{}", content_type="application/csp-report").status_code == 204
    big = json.dumps({"csp-report": {"blocked-uri": "x" * 20_000}})
    with caplog.at_level(logging.WARNING, logger="csp.violations"):
        assert client.post(settings.CSP_REPORT_PATH, big, content_type="application/csp-report").status_code == 413
    assert "Content-Security-Policy violation" not in caplog.text
    assert client.post(settings.CSP_REPORT_PATH, "not json", content_type="application/csp-report").status_code == 400
    assert client.get(settings.CSP_REPORT_PATH).status_code == 405


# What the policy refuses to run, as it would be written in a template. A handler attribute breaks the
# policy only when its event fires, which a page visit may never do, so the templates are read too.
INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>"  # a script with its code in the page
    r"|\son[a-z]+\s*="  # onclick=, onsubmit=, …
    r"|\bhx-on"  # htmx's handler attributes (htmx may not evaluate code: base.html)
    r"|javascript:"
    r"|\sstyle\s*=|<style\b",  # styles come from static/css
    re.IGNORECASE,
)
COMMENT = re.compile(r"\{#.*?#\}")


def test_templates_hold_no_inline_script_handler_or_style():
    base = Path(settings.BASE_DIR)
    folders = [base / "templates", *base.glob("*/templates")]
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*.html")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if INLINE.search(COMMENT.sub("", line)):
                    found.append(f"{path.relative_to(base)}:{n}: {line.strip()[:120]}")
    assert not found, "move these into static/js or static/css (data- attributes, json_script):\n" + "\n".join(found)
