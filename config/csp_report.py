"""Where browsers send Content-Security-Policy violation reports (the policy's report-uri).

Anyone may post here: a report comes from whatever page broke the policy, signed in or not, and the
browser sends it without a CSRF token. So the view trusts nothing in it: it reads at most
MAX_REPORT_BYTES, logs a few known fields cut short, and answers 204 whatever it got.
"""

import json
import logging

from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

logger = logging.getLogger("csp.violations")

# A real report is well under a kilobyte or two; anything far larger is not one.
MAX_REPORT_BYTES = 16 * 1024
# The fields worth a log line, in both shapes browsers send (report-uri's "csp-report" object with
# hyphenated names, the Reporting API's list of {"type": "csp-violation", "body": {...}}).
_FIELDS = {
    "document-uri": "documentURL",
    "violated-directive": "effectiveDirective",
    "blocked-uri": "blockedURL",
    "source-file": "sourceFile",
    "line-number": "lineNumber",
    "script-sample": "sample",
}
_FIELD_CHARS = 200


def _violations(payload) -> list[dict]:
    if isinstance(payload, dict) and isinstance(payload.get("csp-report"), dict):
        report = payload["csp-report"]
        return [{name: report.get(name) for name in _FIELDS}]
    if isinstance(payload, list):
        found = []
        for entry in payload[:20]:
            body = entry.get("body") if isinstance(entry, dict) else None
            if isinstance(body, dict):
                found.append({name: body.get(camel) for name, camel in _FIELDS.items()})
        return found
    return []


@csrf_exempt
@require_POST
def csp_report(request):
    try:
        declared = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_REPORT_BYTES:
        return HttpResponse(status=413)
    raw = request.read(MAX_REPORT_BYTES + 1)
    if len(raw) > MAX_REPORT_BYTES:
        return HttpResponse(status=413)
    try:
        payload = json.loads(raw)
    except ValueError:
        return HttpResponse(status=400)
    for violation in _violations(payload):
        fields = {name: str(value)[:_FIELD_CHARS] for name, value in violation.items() if value not in (None, "")}
        logger.warning("Content-Security-Policy violation: %s", json.dumps(fields, sort_keys=True))
    return HttpResponse(status=204)
