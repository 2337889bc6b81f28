"""Review queue screens: the list (depth, leases, claim next), a queue's settings, items and bulk assignment.

Admins define queues and assign; members pull the next item with `n` and land on its editor.
Every view authorises before it reads (projects.permissions); the services check the rules again.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from annotator.models import ItemKind, ItemStatus
from projects.permissions import Action, can, get_project_or_404
from projects.refusals import refusal_redirect

from .models import Assignment, ReviewQueue
from .queues import (
    DEFAULT_HEARTBEAT_SECONDS,
    AssignRefused,
    ClaimRefused,
    LeaseError,
    assignment_release,
    item_path,
    item_url,
    leases_of,
    people_for_stage,
    project_claim_next,
    queue_active_leases,
    queue_assign_items,
    queue_claim_next,
    queue_create,
    queue_item_rows,
    queue_reassign,
    queue_stats,
    queue_update,
    queues_for,
)
from .review_views import start_revising_and_open
from .stuck_work import not_scored_notes

ITEMS_SHOWN = 100
STAGES = [(S.value, S.label) for S in (ItemStatus.ANNOTATING, ItemStatus.EXAMINING, ItemStatus.REVISING)]
FILTER_FIELDS = ("categories", "duration_groups", "score_min", "score_max", "video_ids")
_MODEL_FIELDS = ("name", "stage", "item_kind", "priority", "overlap", "heartbeat_seconds", "auto_advance", "is_active")


class QueueForm(forms.Form):
    """A queue's settings as people type them; the services decide what is valid."""

    name = forms.CharField(label=gettext_lazy("Name"), max_length=120)
    stage = forms.ChoiceField(label=gettext_lazy("Stage"), choices=STAGES, initial=ItemStatus.EXAMINING)
    item_kind = forms.ChoiceField(label=gettext_lazy("Items"), choices=ItemKind.choices, initial=ItemKind.MCQ)
    categories = forms.CharField(
        label=gettext_lazy("Categories"),
        required=False,
        help_text=gettext_lazy("MCQs only: category codes or task names, comma-separated (e.g. E2O, S2A). Empty: all."),
    )
    duration_groups = forms.MultipleChoiceField(
        label=gettext_lazy("Duration groups"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=gettext_lazy("By the (first) video's duration. None: all."),
    )
    score_min = forms.IntegerField(label=gettext_lazy("Judge score from"), required=False, min_value=0, max_value=100)
    score_max = forms.IntegerField(label=gettext_lazy("Judge score up to"), required=False, min_value=0, max_value=100)
    video_ids = forms.CharField(
        label=gettext_lazy("Videos"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=gettext_lazy("Video names or ids, separated by commas or new lines. Empty: every video."),
    )
    members = forms.MultipleChoiceField(
        label=gettext_lazy("Members"), required=False, widget=forms.CheckboxSelectMultiple
    )
    priority = forms.IntegerField(
        label=gettext_lazy("Priority"),
        initial=0,
        help_text=gettext_lazy("Higher first when someone claims across queues."),
    )
    overlap = forms.IntegerField(
        label=gettext_lazy("Overlap"),
        initial=1,
        min_value=1,
        max_value=20,
        help_text=gettext_lazy("How many people see each item."),
    )
    lease_minutes = forms.IntegerField(
        label=gettext_lazy("Lease (minutes)"),
        initial=4 * 60,
        min_value=1,
        max_value=24 * 60,
        help_text=gettext_lazy("A lease lapses unless renewed by a heartbeat; its item then returns to the queue."),
    )
    heartbeat_seconds = forms.IntegerField(
        label=gettext_lazy("Heartbeat (seconds)"),
        required=False,
        initial=DEFAULT_HEARTBEAT_SECONDS,
        min_value=10,
        max_value=600,
        help_text=gettext_lazy("How often an open page renews its lease and tells others it is open."),
    )
    auto_advance = forms.BooleanField(
        label=gettext_lazy("Open the next item after a verdict"),
        required=False,
        initial=False,
        help_text=gettext_lazy("Off: the page stays on the decided item and the next one is a key (n) away."),
    )
    is_active = forms.BooleanField(label=gettext_lazy("Active (members can claim)"), required=False, initial=True)

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["duration_groups"].choices = [
            (str(g["name"]), f"{g['name']}: ({g['low']}, {g['high']}] s") for g in project.taxonomy("duration_groups")
        ]
        people = {}
        for membership in project.memberships.select_related("user").order_by("user__username", "role"):
            people.setdefault(membership.user, []).append(membership.get_role_display().lower())
        self.people = {str(user.pk): user for user in people}
        self.fields["members"].choices = [
            (str(user.pk), f"{user.get_username()} ({', '.join(roles)})") for user, roles in people.items()
        ]

    @classmethod
    def for_queue(cls, queue: ReviewQueue, data=None):
        f = queue.filters or {}
        initial = {name: getattr(queue, name) for name in _MODEL_FIELDS}
        initial.update(
            lease_minutes=max(queue.lease_seconds // 60, 1),
            categories=", ".join(f.get("categories", [])),
            duration_groups=[str(g) for g in f.get("duration_groups", [])],
            score_min=f.get("score_min"),
            score_max=f.get("score_max"),
            video_ids=", ".join(str(v) for v in f.get("video_ids", [])),
            members=[str(pk) for pk in queue.members.values_list("pk", flat=True)],
        )
        return cls(data, project=queue.project, initial=initial)

    def clean_video_ids(self):
        tokens = [t for t in self.cleaned_data["video_ids"].replace(",", "\n").split() if t]
        ids = [int(t) for t in tokens if t.isdecimal()]
        names = [t for t in tokens if not t.isdecimal()]
        if names:
            found = dict(self.project.videos.filter(name__in=names).values_list("name", "pk"))
            missing = [n for n in names if n not in found]
            if missing:
                raise ValidationError(_("No video named %(names)s in this project.") % {"names": ", ".join(missing)})
            ids += found.values()
        return ids

    def service_fields(self) -> dict:
        data = self.cleaned_data
        categories = [c.strip() for c in data["categories"].split(",") if c.strip()]
        filters = {
            "categories": categories,
            "duration_groups": data["duration_groups"],
            "score_min": data["score_min"],
            "score_max": data["score_max"],
            "video_ids": data["video_ids"],
        }
        fields = {name: data[name] for name in _MODEL_FIELDS}
        fields.update(
            filters={k: v for k, v in filters.items() if v not in (None, [], "")},
            lease_seconds=data["lease_minutes"] * 60,
            heartbeat_seconds=data["heartbeat_seconds"] or DEFAULT_HEARTBEAT_SECONDS,
            members=[self.people[pk] for pk in data["members"]],
        )
        return fields

    def add_service_errors(self, exc: ValidationError) -> None:
        for key, errors in exc.message_dict.items():
            field = "lease_minutes" if key == "lease_seconds" else key
            self.add_error(field if field in self.fields else None, errors)


def _queue_or_404(project, queue_id) -> ReviewQueue:
    queue = get_object_or_404(ReviewQueue, pk=queue_id, project=project)
    queue.project = project
    return queue


def _save_queue(request, form: QueueForm, queue: ReviewQueue | None):
    """Create or update through the services; their refusals become form errors, the input is kept."""
    if not form.is_valid():
        return None
    try:
        if queue is None:
            return queue_create(project=form.project, by=request.user, **form.service_fields())
        return queue_update(queue=queue, by=request.user, **form.service_fields())
    except ValidationError as exc:
        form.add_service_errors(exc)
        return None


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def queue_list(request, slug):
    """GET: the queues you see, with depth and leases, and your own leases. POST (admins): a new queue."""
    project = get_project_or_404(request.user, slug)
    is_admin = can(request.user, Action.ADMINISTER, project)
    form = None
    if is_admin:
        form = QueueForm(request.POST if request.method == "POST" else None, project=project)
        if request.method == "POST":
            queue = _save_queue(request, form, None)
            if queue is not None:
                messages.success(request, _("Queue %(name)s created.") % {"name": queue.name})
                return redirect("reviewer:queue_detail", slug=slug, queue_id=queue.pk)
    elif request.method == "POST":
        raise PermissionDenied(_("Only project admins define queues."))
    queues = list(queues_for(project=project, user=request.user))
    for queue in queues:
        queue.project = project
    stats = queue_stats(queues=queues)
    mine = set(ReviewQueue.members.through.objects.filter(user=request.user).values_list("reviewqueue_id", flat=True))
    rows = [(queue, stats[queue.pk], queue.pk in mine) for queue in queues]
    leases = [
        (lease, item_path(kind=lease.item_kind, item_id=_item_id(lease), slug=slug), _item_id(lease))
        for lease in leases_of(project=project, user=request.user)
    ]
    return render(
        request,
        "reviewer/queues.html",
        {
            "project": project,
            "rows": rows,
            "leases": leases,
            "is_admin": is_admin,
            "form": form,
            "may_claim": bool(mine & {q.pk for q in queues if q.is_active}),
        },
    )


def _item_id(assignment: Assignment) -> int:
    return assignment.qa_chain_id or assignment.chain_pair_id or assignment.mcq_id


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def queue_detail(request, slug, queue_id):
    """A queue for its admins: settings (POST saves them), depth, items with holders, active leases."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    queue = _queue_or_404(project, queue_id)
    form = QueueForm.for_queue(queue, request.POST if request.method == "POST" else None)
    if request.method == "POST":
        if _save_queue(request, form, queue) is not None:
            messages.success(request, _("Queue %(name)s saved.") % {"name": queue.name})
            return redirect("reviewer:queue_detail", slug=slug, queue_id=queue.pk)
        queue.refresh_from_db()  # show the stored settings beside the refused input
        queue.project = project
    rows, total = queue_item_rows(queue=queue, limit=ITEMS_SHOWN)
    notes = not_scored_notes([row.item for row in rows])
    for row in rows:
        row.item.not_scored = notes.get((queue.item_kind, row.item.pk))
    return render(
        request,
        "reviewer/queue_detail.html",
        {
            "project": project,
            "queue": queue,
            "form": form,
            "stats": queue_stats(queues=[queue])[queue.pk],
            "rows": rows,
            "total": total,
            "leases": [
                (lease, item_path(kind=lease.item_kind, item_id=_item_id(lease), slug=slug), _item_id(lease))
                for lease in queue_active_leases(queue=queue)
            ],
            "people": list(people_for_stage(project=project, stage=queue.stage)),
            "stage_label": ItemStatus(queue.stage).label.lower(),
        },
    )


def _assignee(request, project, queue):
    raw = request.POST.get("assignee", "")
    people = people_for_stage(project=project, stage=queue.stage)
    return people.filter(pk=raw).first() if raw.isdecimal() else None


def _report(request, outcome, assignee, verb: str) -> None:
    if outcome.assigned:
        n = len(outcome.assigned)
        done = (
            ngettext("Assigned %(n)s item to %(person)s.", "Assigned %(n)s items to %(person)s.", n)
            if verb == "Assigned"
            else ngettext("Reassigned %(n)s item to %(person)s.", "Reassigned %(n)s items to %(person)s.", n)
        )
        messages.success(request, done % {"n": n, "person": assignee.get_username()})
    if outcome.refused:
        reasons = "; ".join(f"#{item_id}: {why}" if item_id else why for item_id, why in outcome.refused)
        refused = _("Not assigned: %(reasons)s") if verb == "Assigned" else _("Not reassigned: %(reasons)s")
        messages.error(request, refused % {"reasons": reasons})


@login_required
@require_POST
def queue_assign(request, slug, queue_id):
    """Assign the ticked items to one person (admins)."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    queue = _queue_or_404(project, queue_id)
    ids = [int(v) for v in request.POST.getlist("item") if v.isdecimal()]
    assignee = _assignee(request, project, queue)
    if not ids or assignee is None:
        messages.error(request, _("Tick at least one item and choose who gets them."))
    else:
        try:
            outcome = queue_assign_items(queue=queue, items=ids, assignee=assignee, by=request.user)
        except AssignRefused as exc:
            return refusal_redirect(request, exc, redirect("reviewer:queue_detail", slug=slug, queue_id=queue.pk))
        _report(request, outcome, assignee, "Assigned")
    return redirect("reviewer:queue_detail", slug=slug, queue_id=queue.pk)


@login_required
@require_POST
def queue_leases(request, slug, queue_id):
    """Reassign the ticked active leases to another person, or release them (admins)."""
    project = get_project_or_404(request.user, slug, Action.ADMINISTER)
    queue = _queue_or_404(project, queue_id)
    ids = [int(v) for v in request.POST.getlist("lease") if v.isdecimal()]
    leases = list(Assignment.objects.filter(pk__in=ids, queue=queue).select_related("project"))
    if not leases:
        messages.error(request, _("Tick at least one lease."))
    elif request.POST.get("action") == "release":
        released = 0
        for lease in leases:
            try:
                assignment_release(assignment=lease, user=request.user)
                released += 1
            except LeaseError as exc:
                messages.error(request, _("Lease %(lease)s: %(reason)s") % {"lease": lease.pk, "reason": exc})
        if released:
            messages.success(
                request,
                ngettext(
                    "Released %(n)s lease; the items are free.", "Released %(n)s leases; the items are free.", released
                )
                % {"n": released},
            )
    else:
        assignee = _assignee(request, project, queue)
        if assignee is None:
            messages.error(request, _("Choose who gets the ticked leases."))
        else:
            try:
                outcome = queue_reassign(queue=queue, assignments=leases, assignee=assignee, by=request.user)
            except AssignRefused as exc:
                messages.error(request, str(exc))
            else:
                _report(request, outcome, assignee, "Reassigned")
    return redirect("reviewer:queue_detail", slug=slug, queue_id=queue.pk)


def _claimed(request, project, assignment, where: str):
    """Open what was claimed where its stage's work is done.

    Examining: the examine page, with its verdict keys (the editor is read-only then). Revising: a
    flagged item is taken into revision first, as "Start revising" does, so its editor opens
    editable. Annotating: the editor.
    """
    if assignment is None:
        messages.info(request, _("Nothing is waiting for you in %(where)s.") % {"where": where})
        return redirect("reviewer:queues", slug=project.slug)
    item = assignment.item_object
    item.project = project
    if assignment.stage == ItemStatus.EXAMINING:
        return redirect("reviewer:examine_item", slug=project.slug, kind=assignment.item_kind, item_id=item.pk)
    if assignment.stage == ItemStatus.REVISING and item.status == ItemStatus.FLAGGED:
        return start_revising_and_open(request, project, assignment.item_kind, item)
    return redirect(item_url(item))


@login_required
@require_POST
def queue_claim(request, slug, queue_id):
    """Lease the next item of one queue and open it."""
    project = get_project_or_404(request.user, slug)
    queue = _queue_or_404(project, queue_id)
    try:
        assignment = queue_claim_next(queue=queue, user=request.user)
    except ClaimRefused as exc:  # the queues page says why: not a member, paused …
        return refusal_redirect(request, exc, redirect("reviewer:queues", slug=slug), forbidden_page=False)
    return _claimed(request, project, assignment, queue.name)


@login_required
@require_POST
def claim_next(request, slug):
    """Lease the next item from your queues, highest priority first, and open it (key `n`)."""
    project = get_project_or_404(request.user, slug)
    try:
        assignment = project_claim_next(project=project, user=request.user)
    except ClaimRefused as exc:  # an archived project takes no new work
        return refusal_redirect(request, exc, redirect("reviewer:queues", slug=slug), forbidden_page=False)
    return _claimed(request, project, assignment, "your queues")


@login_required
@require_POST
def lease_release(request, slug, assignment_id):
    """Give your lease back (admins: anyone's)."""
    project = get_project_or_404(request.user, slug)
    lease = get_object_or_404(Assignment, pk=assignment_id, project=project)
    lease.project = project
    try:
        assignment_release(assignment=lease, user=request.user)
    except LeaseError as exc:  # not the holder's: 403
        return refusal_redirect(request, exc, redirect("reviewer:queues", slug=slug))
    messages.success(request, _("Lease released; the item is back in its queue."))
    return redirect("reviewer:queues", slug=slug)
