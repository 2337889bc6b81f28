"""Screens of the quality gate: the project's judge scores (filterable), one item's scores, a score's LLM call.

Other pages show an item's scores with `{% include "reviewer/scores.html#item_scores" %}` after
adding `item_scores_context(item, user=request.user)` to their context. Every view authorises
first (projects.permissions): members see scores; admins also re-run the judge.
"""

from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from annotator.models import ItemKind, ItemStatus
from jobs.models import JobStatus
from llm.endpoints import NoModelEndpoint
from projects.permissions import Action, can, get_project_or_404

from .history import item_kind_of, item_label
from .models import QualityScore
from .quality_gate import (
    MODELS,
    SCORE_ORDERS,
    ScoreFilters,
    gate_applies,
    gate_on_submit,
    gate_process_waiting,
    gate_waiting_counts,
    item_scores,
    judge_dimensions,
    judge_job_latest,
    judge_jobs_failed,
    judge_kinds,
    score_summary,
    scores_for,
)

SCORES_PER_PAGE = 50


def dimension_label(name: str) -> str:
    return name.replace("_", " ").capitalize()


def item_or_404(project, kind: str, item_id: int):
    """The project's item of `kind`; a wrong kind, a missing item and another project's item all 404."""
    try:
        model = MODELS[ItemKind(kind)]
    except ValueError:
        raise Http404("No such kind of item.") from None
    related = {
        ItemKind.QA_CHAIN: ("project", "clip__video"),
        ItemKind.CHAIN_PAIR: ("project", "video"),
        ItemKind.MCQ: ("project",),
    }[ItemKind(kind)]
    return get_object_or_404(model.objects.select_related(*related), pk=item_id, project=project)


def editor_url(project, kind: str, item_id: int) -> str:
    name = {ItemKind.QA_CHAIN: "chain_editor", ItemKind.CHAIN_PAIR: "pair_editor", ItemKind.MCQ: "mcq_editor"}
    return reverse(f"annotator:{name[ItemKind(kind)]}", args=[project.slug, item_id])


# --- one item's scores (the partial other pages include) -------------------------------------------------


@dataclass(frozen=True)
class ScoreView:
    score: QualityScore
    dimensions: list[tuple[str, int | None]]  # (label, value) in the project's order
    current: bool  # about the item's current version


def _ordered_dimensions(project, kinds: list[str], scores) -> list[str]:
    """The dimensions to show as columns: the kinds' own, in order, then any others the judge gave."""
    names = [d for kind in kinds for d in judge_dimensions(project, kind)]
    for score in scores:
        names += [d for d in score.dimensions if d not in names]
    present = {d for s in scores for d in s.dimensions}
    return [d for d in dict.fromkeys(names) if d in present]


def _score_views(scores, dimensions: list[str], versions: dict) -> list[ScoreView]:
    return [
        ScoreView(
            score=s,
            dimensions=[(dimension_label(d), s.dimensions.get(d)) for d in dimensions],
            current=versions.get((s.item_kind, s.item.pk if s.item else None)) == s.item_version,
        )
        for s in scores
    ]


def item_scores_context(item, user=None) -> dict:
    """Context for `reviewer/scores.html#item_scores`: the judge's scores of one item, newest first."""
    project = item.project
    kind = item_kind_of(item)
    scores = item_scores(item=item)
    for score in scores:
        # Filled in from what we have, so the partial needs no query per score.
        setattr(score, f"{kind.value}_id", item.pk)
        score._state.fields_cache[kind.value] = item
    dimensions = _ordered_dimensions(project, [kind.value], scores)
    job = judge_job_latest(item=item)
    return {
        "judge_project": project,
        "judge_item": item,
        "judge_kind": kind.value,
        "judge_scores": _score_views(scores, dimensions, {(kind.value, item.pk): item.version}),
        "judge_dimensions": [dimension_label(d) for d in dimensions],
        "judge_applies": gate_applies(project=project, kind=kind.value),
        "judge_job": job,
        "judge_failed": job is not None and job.status == JobStatus.FAILED and item.status == ItemStatus.SUBMITTED,
        "judge_pending": job is not None and job.status in (JobStatus.QUEUED, JobStatus.RUNNING),
        "judge_is_admin": user is not None and can(user, Action.ADMINISTER, project),
    }


@login_required
def item_scores_view(request, slug, kind, item_id):
    """The partial alone (htmx); a plain visit goes to the item's history page, which shows it too."""
    project = get_project_or_404(request.user, slug)
    item = item_or_404(project, kind, item_id)
    if not request.htmx:
        return redirect(reverse("reviewer:item_history", args=[slug, kind, item_id]) + "#scores")
    return render(request, "reviewer/scores.html#item_scores", item_scores_context(item, user=request.user))


@login_required
@require_POST
def item_judge_again(request, slug, kind, item_id):
    """Admins: queue the judge again for a submitted item whose judge failed (or never ran)."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    item = item_or_404(project, kind, item_id)
    if item.status != ItemStatus.SUBMITTED:
        messages.error(
            request,
            _("This item is %(status)s, not waiting for the judge.") % {"status": item.get_status_display().lower()},
        )
    else:
        outcome = gate_on_submit(item=item, user=request.user)
        if outcome.job is not None:
            messages.success(request, _("The judge will score this item again."))
        elif outcome.waiting:
            messages.error(request, outcome.waiting)
        elif outcome.not_scored:
            messages.warning(
                request,
                _("The judge cannot score it, so it went on by the project's fallback (%(status)s). %(reason)s")
                % {"status": outcome.transition.item.get_status_display().lower(), "reason": outcome.not_scored},
            )
        else:
            messages.info(request, _("The quality gate is off for this item: it went on to examining."))
    if request.htmx:
        item.refresh_from_db()
        return render(request, "reviewer/scores.html#item_scores", item_scores_context(item, user=request.user))
    return redirect(reverse("reviewer:item_history", args=[slug, kind, item_id]) + "#scores")


# --- the project's score list ---------------------------------------------------------------------------


class ScoreFilterForm(forms.Form):
    kind = forms.ChoiceField(
        label=gettext_lazy("Items"), required=False, choices=[("", gettext_lazy("All kinds")), *ItemKind.choices]
    )
    passed = forms.ChoiceField(
        label=gettext_lazy("Verdict"),
        required=False,
        choices=[
            ("", gettext_lazy("Passed or not")),
            ("yes", gettext_lazy("Passed")),
            ("no", gettext_lazy("Below threshold")),
        ],
    )
    min = forms.IntegerField(label=gettext_lazy("Overall from"), required=False, min_value=0, max_value=100)
    max = forms.IntegerField(label=gettext_lazy("Overall up to"), required=False, min_value=0, max_value=100)
    dimension = forms.ChoiceField(label=gettext_lazy("Dimension"), required=False)
    dim_max = forms.IntegerField(label=gettext_lazy("… at most"), required=False, min_value=0, max_value=100)
    all = forms.BooleanField(label=gettext_lazy("Every version (not only the latest)"), required=False)
    order = forms.ChoiceField(
        label=gettext_lazy("Order"),
        required=False,
        choices=[
            ("newest", gettext_lazy("Newest first")),
            ("lowest", gettext_lazy("Lowest overall first")),
            ("highest", gettext_lazy("Highest first")),
        ],
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        names = [d for kind in ItemKind.values for d in judge_dimensions(project, kind)]
        self.fields["dimension"].choices = [("", _("Any dimension"))] + [
            (d, dimension_label(d)) for d in dict.fromkeys(names)
        ]

    def clean(self):
        data = super().clean()
        low, high = data.get("min"), data.get("max")
        if low is not None and high is not None and low > high:
            self.add_error("max", _("The range is empty: %(low)s is above %(high)s.") % {"low": low, "high": high})
        if data.get("dim_max") is not None and not data.get("dimension"):
            self.add_error("dimension", _("Choose the dimension the upper limit is for."))
        return data

    def filters(self) -> ScoreFilters:
        if not self.is_valid():
            return ScoreFilters()
        d = self.cleaned_data
        return ScoreFilters(
            kind=d.get("kind") or "",
            passed={"yes": True, "no": False}.get(d.get("passed") or ""),
            overall_min=d.get("min"),
            overall_max=d.get("max"),
            dimension=d.get("dimension") or "",
            dimension_max=d.get("dim_max"),
            latest_only=not d.get("all"),
            order=d.get("order") if d.get("order") in SCORE_ORDERS else "newest",
        )


@login_required
def score_list(request, slug):
    """Judge scores of the project with filters; htmx swaps only the rows."""
    project = get_project_or_404(request.user, slug)
    form = ScoreFilterForm(request.GET or None, project=project)
    filters = form.filters() if request.GET else ScoreFilters()
    scores = scores_for(project=project, filters=filters)
    page = Paginator(scores, SCORES_PER_PAGE).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    kinds = [filters.kind] if filters.kind else [k.value for k in ItemKind]
    dimensions = _ordered_dimensions(project, kinds, rows)
    versions = {(s.item_kind, s.item.pk): s.item.version for s in rows if s.item is not None}
    query = request.GET.copy()
    query.pop("page", None)
    is_admin = can(request.user, Action.ADMINISTER, project)
    context = {
        "project": project,
        "form": form,
        "page": page,
        "rows": [
            (view, item_label(view.score.item), view.score.item.get_status_display())
            for view in _score_views(rows, dimensions, versions)
        ],
        "dimensions": [(d, dimension_label(d)) for d in dimensions],
        "summary": score_summary(scores),
        "query": query.urlencode(),
        "is_admin": is_admin,
        "gate": {
            "enabled": project.judge_enabled,
            "threshold": project.judge_threshold,
            "kinds": [ItemKind(k).label for k in judge_kinds(project)],
        },
    }
    if request.htmx and request.htmx.target == "score-rows":
        return render(request, "reviewer/scores.html#score_rows", context)
    if is_admin:
        waiting = gate_waiting_counts(project=project)
        context["waiting"] = [(ItemKind(k).label, n) for k, n in waiting.items() if n]
        context["waiting_total"] = sum(waiting.values())
        context["failed_jobs"] = judge_jobs_failed(project=project)
    return render(request, "reviewer/scores.html", context)


@login_required
@require_POST
def gate_waiting_view(request, slug):
    """Admins: judge (or, with the gate off, pass on) every item left waiting in "submitted"."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    counts = gate_process_waiting(project=project, user=request.user)
    parts = []
    if counts["queued"]:
        parts.append(_("%(n)s sent to the judge") % {"n": counts["queued"]})
    if counts["to_examining"]:
        parts.append(_("%(n)s passed on to examining (no gate for their kind)") % {"n": counts["to_examining"]})
    if counts["already_queued"]:
        parts.append(_("%(n)s already with the judge") % {"n": counts["already_queued"]})
    if counts.get("not_scored"):
        parts.append(
            _("%(count)d moved on by the project's fallback, not scored (no model endpoint)")
            % {"count": counts["not_scored"]}
        )
    if counts.get("no_endpoint"):
        messages.error(
            request,
            _("%(count)d items still wait for the judge. %(reason)s")
            % {"count": counts["no_endpoint"], "reason": NoModelEndpoint().message},
        )
    messages.success(request, "; ".join(parts).capitalize() + "." if parts else _("No item was waiting."))
    return redirect("reviewer:score_list", slug=slug)


@login_required
def score_call(request, slug, score_id):
    """The model call behind one score: model, prompt version, answer, tokens, cost, time."""
    project = get_project_or_404(request.user, slug)
    score = get_object_or_404(
        QualityScore.objects.select_related(
            "llm_call", "llm_call__template", "qa_chain__clip__video", "chain_pair__video", "mcq"
        ),
        pk=score_id,
        project=project,
    )
    return render(
        request,
        "reviewer/score_call.html",
        {"project": project, "score": score, "call": score.llm_call, "label": item_label(score.item)},
    )
