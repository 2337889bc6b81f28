"""The audit page of project admins: the static checks' findings and the shortcut probes' figures
for the project's MCQs, the probe run, "send to review", and CSVs of both.

Authorised first (projects.permissions: ADMINISTER); the figures come from audits.static_checks,
audits.selectors and audits.gate, the same code the API, the command line and the releases use.
"""

import csv

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST, require_safe

from annotator.models import MCQ, ItemStatus
from charts.svg import stacked_bar_chart
from llm.endpoints import NO_ENDPOINT_MESSAGE, endpoint_usable
from projects.permissions import Action, get_project_or_404
from projects.refusals import Refused

from .gate import release_gate
from .models import Probe, ProbeRun
from .selectors import probe_summary
from .services import audit_send_to_review, probe_run_start
from .static_checks import BLOCKER, project_static_audit

SORTS = ("findings", "score")


def _rows(project, audit, probes=None, *, sort: str = "findings") -> list[dict]:
    """Items with a finding or a probe answer right without the video; blockers first, or by shortcut score."""
    scores = {pk: s for pk, s in (probes.items.items() if probes else []) if s.correct}
    ids = set(audit.items) | set(scores)
    items = MCQ.objects.filter(pk__in=list(ids)).only("id", "question", "category", "status", "project_id")
    by_id = {mcq.pk: mcq for mcq in items}
    rows = []
    for pk in ids:
        mcq = by_id.get(pk)
        if mcq is None:
            continue
        findings = audit.items.get(pk, [])
        score = scores.get(pk)
        rows.append(
            {
                "mcq": mcq,
                "url": reverse("annotator:mcq_editor", args=[project.slug, pk]),
                "findings": findings,
                "blockers": sum(1 for f in findings if f.severity == BLOCKER),
                "score": score,
                "probes": sorted(score.probes) if score else [],
            }
        )
    if sort == "score":
        rows.sort(key=lambda r: (-(r["score"].score if r["score"] else 0), -r["blockers"], r["mcq"].pk))
    else:
        rows.sort(key=lambda r: (-r["blockers"], -len(r["findings"]), r["mcq"].pk))
    return rows


def _reasons(row) -> list[str]:
    """What an item is sent back for: its findings' codes, and the probes that answered it blind."""
    reasons = [f.code for f in row["findings"]]
    if row["score"]:
        reasons += [f"shortcut:{probe}" for probe in row["probes"]]
    return reasons


def _probe_chart(summary):
    rows = [a for a in summary.by_probe if a.answered]
    if not rows:
        return None
    labels = [Probe(a.key).label for a in rows]
    return stacked_bar_chart(
        [str(label) for label in labels],
        [
            (_("accuracy"), [round(100 * a.accuracy, 1) for a in rows]),
            (_("chance"), [round(100 * a.chance, 1) for a in rows]),
        ],
        title=_("Probe accuracy against chance"),
        description=_("Share of answered probe calls that chose the correct option; intervals in the table."),
        grouped=True,
        horizontal=True,
        unit="%",
        kind="bar",
    )


@login_required
@require_safe
def audit_page(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    sort = request.GET.get("sort") if request.GET.get("sort") in SORTS else "findings"
    audit = project_static_audit(project=project)
    summary = probe_summary(project=project)
    rows = _rows(project, audit, summary, sort=sort)
    accepted = MCQ.objects.filter(project=project, status=ItemStatus.ACCEPTED).values_list("pk", flat=True)
    last_run = ProbeRun.objects.filter(project=project).select_related("job").first()
    return render(
        request,
        "audits/audit.html",
        {
            "project": project,
            "audit": audit,
            "rows": rows,
            "sort": sort,
            "counts": sorted(audit.counts.items(), key=lambda kv: (-kv[1], kv[0])),
            "positions": [p for p in audit.positions if p.judged],
            "blocked": len(audit.blocked),
            "summary": summary,
            "chart": _probe_chart(summary),
            "gate": release_gate(project=project, mcq_ids=accepted),
            "last_run": last_run,
            "job": last_run.job if last_run else None,
            "is_admin": True,
            "probes": Probe.choices,
            "no_endpoint": None if endpoint_usable(project=project) else _(NO_ENDPOINT_MESSAGE),
        },
    )


@login_required
@require_POST
def audit_run(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    probes = request.POST.getlist("probe") or None
    try:
        run = probe_run_start(project=project, user=request.user, probes=probes)
    except Refused as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request,
            _("Probe run %(id)s queued: its progress shows below, the figures fill in as it goes.") % {"id": run.pk},
        )
    return redirect(reverse("audits:page", args=[project.slug]) + "#probes")


@login_required
@require_POST
def audit_send(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    try:
        chosen = {int(v) for v in request.POST.getlist("mcq")}
    except ValueError:
        chosen = set()
    if not chosen:
        messages.error(request, _("Tick the items to send to review first."))
        return redirect(reverse("audits:page", args=[project.slug]) + "#items")
    rows = {
        r["mcq"].pk: r
        for r in _rows(
            project,
            project_static_audit(project=project, mcq_ids=chosen),
            probe_summary(project=project, mcq_ids=chosen),
        )
    }
    reasons = {pk: _reasons(rows[pk]) if pk in rows else ["audit"] for pk in chosen}
    outcome = audit_send_to_review(project=project, user=request.user, reasons=reasons)
    if outcome.sent:
        messages.success(
            request,
            ngettext(
                "%(n)s item sent to review with its findings as the flag reasons.",
                "%(n)s items sent to review with their findings as the flag reasons.",
                len(outcome.sent),
            )
            % {"n": len(outcome.sent)},
        )
    for pk, why in sorted(outcome.refused.items()):
        messages.warning(request, _("MCQ %(id)s stayed: %(why)s") % {"id": pk, "why": why})
    return redirect(reverse("audits:page", args=[project.slug]) + "#items")


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


@login_required
@require_safe
def probes_csv(request, slug):
    """One row per probed item: its shortcut score, answers, failures and the probes that got it right."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    summary = probe_summary(project=project)
    items = {
        m.pk: m
        for m in MCQ.objects.filter(project=project, pk__in=list(summary.items)).only(
            "id", "category", "status", "question"
        )
    }
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-probes.csv"'
    writer = csv.writer(response)
    writer.writerow(
        [
            "mcq_id",
            "category",
            "status",
            "shortcut_score",
            "answered",
            "correct",
            "failed",
            "probes_correct",
            "question",
        ]
    )
    for pk, score in sorted(summary.items.items()):
        mcq = items.get(pk)
        if mcq is None:
            continue
        value = "" if score.score is None else f"{score.score:.4f}"
        writer.writerow(
            [
                pk,
                mcq.category,
                mcq.status,
                value,
                score.answered,
                score.correct,
                score.failed,
                " ".join(sorted(score.probes)),
                mcq.question,
            ]
        )
    return response
