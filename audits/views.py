"""The audit page of project admins: what the static checks find in the project's MCQs, and a CSV of it.

Authorised first (projects.permissions: ADMINISTER); the findings come from audits.static_checks,
the same code the API, the command line and the release validation use.
"""

import csv

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from annotator.models import MCQ
from projects.permissions import Action, get_project_or_404

from .static_checks import BLOCKER, project_static_audit


def _rows(project, audit) -> list[dict]:
    """Flagged items, those with blockers first, then by the number of findings."""
    items = MCQ.objects.filter(pk__in=list(audit.items)).only("id", "question", "category", "status", "project_id")
    by_id = {mcq.pk: mcq for mcq in items}
    rows = []
    for pk, findings in audit.items.items():
        mcq = by_id.get(pk)
        if mcq is None:
            continue
        rows.append(
            {
                "mcq": mcq,
                "url": reverse("annotator:mcq_editor", args=[project.slug, pk]),
                "findings": findings,
                "blockers": sum(1 for f in findings if f.severity == BLOCKER),
            }
        )
    rows.sort(key=lambda row: (-row["blockers"], -len(row["findings"]), row["mcq"].pk))
    return rows


@login_required
@require_safe
def audit_page(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    audit = project_static_audit(project=project)
    rows = _rows(project, audit)
    return render(
        request,
        "audits/audit.html",
        {
            "project": project,
            "audit": audit,
            "rows": rows,
            "counts": sorted(audit.counts.items(), key=lambda kv: (-kv[1], kv[0])),
            "positions": [p for p in audit.positions if p.judged],
            "blocked": len(audit.blocked),
        },
    )


@login_required
@require_safe
def audit_csv(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    audit = project_static_audit(project=project)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-static-audit.csv"'
    writer = csv.writer(response)
    writer.writerow(["mcq_id", "category", "status", "code", "severity", "field", "message", "question"])
    for row in _rows(project, audit):
        for finding in row["findings"]:
            mcq = row["mcq"]
            where = [finding.code, finding.severity, finding.field, finding.message]
            writer.writerow([mcq.pk, mcq.category, mcq.status, *where, mcq.question])
    return response
