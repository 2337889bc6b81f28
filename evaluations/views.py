"""Evaluation pages: the leaderboard (members read it; admins start runs there), a run's page, one
prediction with its model calls, and two runs compared.

Authorised first (projects.permissions); the figures come from evaluations.selectors, the same code
the API and `manage.py evaluate` use.
"""

import csv

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST, require_safe

from charts.svg import stacked_bar_chart
from projects.permissions import Action, can, get_project_or_404
from projects.refusals import Refused
from releases.models import DatasetRelease, ReleaseStatus

from .items import question_files
from .models import EvaluationRun, Prediction, Protocol
from .runs import evaluation_cancel, evaluation_resume, evaluation_start
from .selectors import ACTIVE, DETECT_POINTS, GROUPS, compare_runs, leaderboard, run_summary, wrong_predictions

GROUP_TITLES = {
    "category": gettext_lazy("Per category"),
    "level": gettext_lazy("Per level"),
    "duration_group": gettext_lazy("Per duration group"),
}


class RunForm(forms.Form):
    release = forms.ModelChoiceField(queryset=DatasetRelease.objects.none(), label=gettext_lazy("Release"))
    file = forms.CharField(
        label=gettext_lazy("Questions file"),
        required=False,
        help_text=gettext_lazy("e.g. longvideobench/lvb_test.json; empty: the release's first file of questions"),
    )
    model = forms.CharField(
        label=gettext_lazy("Model"),
        max_length=120,
        widget=forms.TextInput(attrs={"data-key": "n", "data-key-label": gettext_lazy("Type the model of a new run")}),
    )
    name = forms.CharField(label=gettext_lazy("Label"), max_length=120, required=False)
    protocol = forms.ChoiceField(
        label=gettext_lazy("Protocol"),
        choices=[("", gettext_lazy("The format's own"))] + list(Protocol.choices),
        required=False,
    )
    frames = forms.IntegerField(label=gettext_lazy("Frames per video"), min_value=1, max_value=256, initial=8)
    base_url = forms.URLField(
        assume_scheme="https",
        label=gettext_lazy("Endpoint base URL"),
        required=False,
        help_text=gettext_lazy("Empty: the project's model endpoint"),
    )
    api_key = forms.CharField(
        label=gettext_lazy("API key"),
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text=gettext_lazy("Kept on the server for this run and never shown again"),
    )
    use_extractor = forms.BooleanField(
        label=gettext_lazy("Ask the extractor model when a reply cannot be read"), required=False, initial=True
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["release"].queryset = DatasetRelease.objects.filter(project=project, status=ReleaseStatus.READY)


def _latest_release(project):
    return DatasetRelease.objects.filter(project=project, status=ReleaseStatus.READY).order_by("-created_at").first()


def _chart(runs):
    rows = [r for r in runs if r.summary.get("accuracy") is not None][:20]
    if not rows:
        return None
    return stacked_bar_chart(
        [f"{r.label} · {r.release.version}" for r in rows],
        [(_("accuracy"), [round(100 * r.summary["accuracy"], 1) for r in rows])],
        title=_("Accuracy per run"),
        description=_("Share of scored questions answered right; 95 % intervals (clustered by video) in the table."),
        horizontal=True,
        unit="%",
        kind="bar",
        label_width=220,
    )


@login_required
@require_safe
def leaderboard_page(request, slug):
    project = get_project_or_404(request.user, slug)
    releases = (
        DatasetRelease.objects.filter(project=project, evaluation_runs__isnull=False).distinct().order_by("-created_at")
    )
    chosen = next((r for r in releases if str(r.pk) == request.GET.get("release", "")), None)
    ranked = leaderboard(project=project, release=chosen)
    others = EvaluationRun.objects.filter(project=project).exclude(pk__in=[r.pk for r in ranked])
    if chosen is not None:
        others = others.filter(release=chosen)
    is_admin = can(request.user, Action.ADMINISTER, project)
    return render(
        request,
        "evaluations/leaderboard.html",
        {
            "project": project,
            "ranked": ranked,
            "others": others.select_related("release", "job"),
            "chart": _chart(ranked),
            "form": RunForm(project=project, initial={"release": _latest_release(project)}) if is_admin else None,
            "is_admin": is_admin,
            "runs": EvaluationRun.objects.filter(project=project).select_related("release"),
            "has_release": DatasetRelease.objects.filter(project=project, status=ReleaseStatus.READY).exists(),
            "releases": releases,
            "chosen": chosen,
        },
    )


@login_required
@require_POST
def run_start(request, slug):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    form = RunForm(request.POST, project=project)
    if not form.is_valid():
        for field, errors in form.errors.items():
            for error in errors:
                messages.error(request, f"{form.fields[field].label if field in form.fields else ''}: {error}")
        return redirect(reverse("evaluations:leaderboard", args=[slug]) + "#new-run")
    data = form.cleaned_data
    try:
        run = evaluation_start(
            project=project,
            release=data["release"],
            user=request.user,
            model=data["model"],
            file=data["file"].strip(),
            protocol=data["protocol"],
            frames=data["frames"],
            name=data["name"],
            base_url=data["base_url"],
            api_key=data["api_key"],
            use_extractor=data["use_extractor"],
        )
    except Refused as exc:
        messages.error(request, exc.message)
        return redirect(reverse("evaluations:leaderboard", args=[slug]) + "#new-run")
    messages.success(request, _("Run queued: this page shows its progress."))
    return redirect("evaluations:run", slug, run.pk)


def _run_or_404(project, run_id) -> EvaluationRun:
    return get_object_or_404(
        EvaluationRun.objects.select_related("release", "job", "project"), pk=run_id, project=project
    )


@login_required
@require_safe
def run_page(request, slug, run_id):
    project = get_project_or_404(request.user, slug)
    run = _run_or_404(project, run_id)
    # A run under way is summed up afresh; an ended one shows what it stored when it ended.
    summary = run_summary(run) if run.status in ACTIVE or not run.summary.get("scored") else run.summary
    tables = [(GROUP_TITLES[g], summary.get("groups", {}).get(g, [])) for g in GROUPS]
    return render(
        request,
        "evaluations/run.html",
        {
            "project": project,
            "run": run,
            "summary": summary,
            "tables": [(title, rows) for title, rows in tables if rows],
            "wrong": wrong_predictions(run),
            "job": run.job,
            "is_admin": can(request.user, Action.ADMINISTER, project),
            "files": question_files(run.release),
        },
    )


@login_required
@require_POST
def run_action(request, slug, run_id):
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    run = _run_or_404(project, run_id)
    action = request.POST.get("action")
    try:
        if action == "cancel":
            evaluation_cancel(run=run)
            messages.success(request, _("Cancelling: the questions already answered are kept; resume to go on."))
        elif action == "resume":
            evaluation_resume(run=run, user=request.user)
            messages.success(request, _("Resumed: only the questions without an answer are asked."))
        else:
            messages.error(request, _("Unknown action."))
    except Refused as exc:
        messages.error(request, exc.message)
    return redirect("evaluations:run", slug, run.pk)


@login_required
@require_safe
def prediction_page(request, slug, run_id, index):
    project = get_project_or_404(request.user, slug)
    run = _run_or_404(project, run_id)
    prediction = get_object_or_404(
        Prediction.objects.select_related("mcq", "call", "extract_call", "judge_call"), run=run, index=index
    )
    return render(request, "evaluations/prediction.html", {"project": project, "run": run, "p": prediction})


@login_required
@require_safe
def compare_page(request, slug):
    project = get_project_or_404(request.user, slug)
    try:
        a_id, b_id = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        messages.error(request, _("Choose two runs to compare."))
        return redirect(reverse("evaluations:leaderboard", args=[slug]) + "#compare")
    a, b = _run_or_404(project, a_id), _run_or_404(project, b_id)
    try:
        result = compare_runs(a, b)
    except ValueError:
        messages.error(request, _("Only runs on the same release file can be compared question by question."))
        return redirect(reverse("evaluations:leaderboard", args=[slug]) + "#compare")
    return render(
        request,
        "evaluations/compare.html",
        {"project": project, "c": result, "points": DETECT_POINTS},
    )


@login_required
@require_safe
def leaderboard_csv(request, slug):
    project = get_project_or_404(request.user, slug)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-leaderboard.csv"'
    writer = csv.writer(response)
    writer.writerow(
        [
            "rank",
            "run",
            "label",
            "model",
            "release",
            "file",
            "protocol",
            "frames",
            "accuracy",
            "se_clustered",
            "ci_low",
            "ci_high",
            "scored",
            "failed",
            "unreadable",
            "clusters",
            "cost_usd",
        ]
    )
    for rank, run in enumerate(leaderboard(project=project), start=1):
        s = run.summary
        low, high = s.get("interval_95") or ("", "")
        writer.writerow(
            [
                rank,
                run.pk,
                run.label,
                run.model,
                run.release.version,
                run.file,
                run.protocol,
                run.frames,
                s.get("accuracy"),
                s.get("se"),
                low,
                high,
                s.get("scored"),
                s.get("failed"),
                s.get("unreadable"),
                s.get("clusters"),
                s.get("cost_usd"),
            ]
        )
    return response
