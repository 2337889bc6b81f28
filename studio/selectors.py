"""Reads for the project home page: what is there and what each person should do next."""

from dataclasses import dataclass, field

from django.db.models import Count, Q
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import MCQ, ChainPair, ItemStatus, QAChain
from annotator.selectors import clips_without_chain_count
from jobs.selectors import jobs_active, jobs_failed
from llm.endpoints import endpoint_usable
from projects.models import Project, ProjectKind, Role
from projects.permissions import roles_of
from reviewer.models import Assignment, AssignmentStatus
from reviewer.stuck_work import stuck_work_total
from videos.models import CurationStatus, Video, VideoStatus


@dataclass
class NextStep:
    text: str
    count: int
    url: str = ""


# Columns of the stage table: label and the statuses it sums.
STAGE_COLUMNS = [
    (gettext_lazy("Draft"), [ItemStatus.DRAFT]),
    (gettext_lazy("Annotating"), [ItemStatus.ANNOTATING]),
    (gettext_lazy("Submitted"), [ItemStatus.SUBMITTED, ItemStatus.SCORED]),
    (gettext_lazy("Examining"), [ItemStatus.EXAMINING]),
    (gettext_lazy("Flagged"), [ItemStatus.FLAGGED]),
    (gettext_lazy("Revising"), [ItemStatus.REVISING]),
    (gettext_lazy("Accepted"), [ItemStatus.ACCEPTED]),
]


@dataclass
class ProjectOverview:
    videos_by_status: dict
    videos_by_curation: dict
    items: list  # rows: (label, [count per STAGE_COLUMNS], total)
    active_jobs: list
    failed_jobs: list
    my_assignments: int
    next_steps: list = field(default_factory=list)


def _status_counts(model, project) -> dict:
    rows = model.objects.filter(project=project).values("status").annotate(n=Count("id"))
    return {r["status"]: r["n"] for r in rows}


def project_overview(*, project: Project, user) -> ProjectOverview:
    video_counts = Video.objects.filter(project=project).aggregate(
        total=Count("id"),
        **{s.value: Count("id", filter=Q(status=s)) for s in VideoStatus},
        **{f"cur_{s.value}": Count("id", filter=Q(curation_status=s)) for s in CurationStatus},
    )
    chains = _status_counts(QAChain, project)
    pairs = _status_counts(ChainPair, project)
    mcqs = _status_counts(MCQ, project)
    items = [
        (label, [_sum(None, counts, statuses=cols) for _, cols in STAGE_COLUMNS], sum(counts.values()))
        for label, counts in ((_("QA chains"), chains), (_("Relations (chain pairs)"), pairs), (_("MCQs"), mcqs))
    ]
    overview = ProjectOverview(
        videos_by_status={s.label: video_counts[s.value] for s in VideoStatus} | {"Total": video_counts["total"]},
        videos_by_curation={s.label: video_counts[f"cur_{s.value}"] for s in CurationStatus},
        items=items,
        active_jobs=list(jobs_active(project=project)[:10]),
        failed_jobs=list(jobs_failed(project=project)[:5]),
        my_assignments=Assignment.objects.filter(
            project=project, assignee=user, status=AssignmentStatus.ACTIVE
        ).count(),
    )
    overview.next_steps = _next_steps(project=project, user=user, overview=overview, counts=(chains, pairs, mcqs))
    return overview


def _sum(status: str | None, *counts: dict, statuses: list | None = None) -> int:
    wanted = statuses if statuses is not None else [status]
    return sum(c.get(s, 0) for c in counts for s in wanted)


def _next_steps(*, project, user, overview: ProjectOverview, counts) -> list[NextStep]:
    """The few things worth doing now, for the roles this person holds, most urgent first."""
    roles = roles_of(user, project) if not user.is_superuser else frozenset(Role.values)
    videos = reverse("videos:list", args=[project.slug])
    steps = []
    if overview.my_assignments:
        steps.append(NextStep(_("Continue the items assigned to you"), overview.my_assignments))
    if Role.ADMIN in roles:
        if overview.videos_by_status["Total"] == 0:
            steps.append(NextStep(_("Import the first videos"), 0, videos))
        failed = overview.videos_by_status.get(VideoStatus.FAILED.label, 0)
        if failed:
            steps.append(
                NextStep(_("Videos failed to process: read the reason and retry"), failed, f"{videos}?status=failed")
            )
        if not endpoint_usable(project=project):
            steps.append(
                NextStep(
                    _("Set a model endpoint: drafts, transcription and the judge need one"),
                    0,
                    reverse("studio:model_endpoint", args=[project.slug]),
                )
            )
        stuck = stuck_work_total(project=project, submitted=_sum(ItemStatus.SUBMITTED, *counts))
        if stuck:
            steps.append(
                NextStep(
                    _("Stuck work: items waiting on a model, failed jobs, lapsed leases"),
                    stuck,
                    reverse("reviewer:stuck_work", args=[project.slug]),
                )
            )
        pending = overview.videos_by_curation.get(CurationStatus.PENDING.label, 0)
        if pending:
            steps.append(NextStep(_("Curate videos that have no decision yet"), pending, f"{videos}?curation=pending"))
        accepted = _sum(ItemStatus.ACCEPTED, *counts)
        if accepted:
            steps.append(NextStep(_("Accepted items are ready for a release"), accepted))
    if Role.ANNOTATOR in roles:
        todo = _sum(ItemStatus.DRAFT, *counts) + _sum(ItemStatus.ANNOTATING, *counts)
        if todo:
            steps.append(NextStep(_("Annotate drafted items"), todo, reverse("annotator:work", args=[project.slug])))
        if project.kind == ProjectKind.SVBENCH:
            # Chains need no model: a clip without one is work an annotator starts by hand.
            bare = clips_without_chain_count(project=project)
            if bare:
                work = reverse("annotator:work", args=[project.slug])
                steps.append(NextStep(_("Write QA chains on clips that have none"), bare, work))
    if Role.EXAMINER in roles:
        todo = _sum(ItemStatus.SCORED, *counts) + _sum(ItemStatus.EXAMINING, *counts)
        if todo:
            examine = reverse("reviewer:examine_home", args=[project.slug])
            steps.append(NextStep(_("Examine submitted items"), todo, examine))
    if Role.REVISER in roles:
        todo = _sum(ItemStatus.FLAGGED, *counts) + _sum(ItemStatus.REVISING, *counts)
        if todo:
            revise = reverse("reviewer:revise_list", args=[project.slug])
            steps.append(NextStep(_("Revise flagged items"), todo, revise))
    return steps


@dataclass
class ProjectStatistics:
    project: Project
    submitted: int = 0  # submits (and resubmits) the person made
    accepted: int = 0  # items they wrote that are accepted
    flagged: int = 0  # items they wrote that wait for revision
    passed_given: int = 0  # verdicts they gave
    flagged_given: int = 0


def person_statistics(*, user) -> list[ProjectStatistics]:
    """One row per project where the person has done anything or is a member; a fixed number of queries."""
    from annotator.models import ReviewEvent
    from reviewer.models import ExamVerdict

    rows: dict[int, ProjectStatistics] = {}
    projects = {p.pk: p for p in Project.objects.filter(memberships__user=user).distinct()}

    def row(project_id):
        if project_id not in projects:
            projects[project_id] = Project.objects.get(pk=project_id)
        return rows.setdefault(project_id, ProjectStatistics(project=projects[project_id]))

    for pk in projects:
        row(pk)
    submits = ReviewEvent.objects.filter(actor=user, to_status=ItemStatus.SUBMITTED).values("project_id")
    for r in submits.annotate(n=Count("id")):
        row(r["project_id"]).submitted = r["n"]
    for model in (QAChain, ChainPair, MCQ):
        written = model.objects.filter(author=user, status__in=[ItemStatus.ACCEPTED, ItemStatus.FLAGGED])
        for r in written.values("project_id", "status").annotate(n=Count("id")):
            stats = row(r["project_id"])
            if r["status"] == ItemStatus.ACCEPTED:
                stats.accepted += r["n"]
            else:
                stats.flagged += r["n"]
    verdicts = ExamVerdict.objects.filter(examiner=user).values("project_id", "passed").annotate(n=Count("id"))
    for r in verdicts:
        stats = row(r["project_id"])
        if r["passed"]:
            stats.passed_given = r["n"]
        else:
            stats.flagged_given = r["n"]
    return sorted(rows.values(), key=lambda s: s.project.name)
