"""Two projects with one of everything each, for the permission matrix.

Project P has one user per role (one Membership row each); project Q mirrors P's data and has one
admin, the "stranger": a member of Q only, so every answer it gets for P must be "no such thing".
Every name and text of P carries the marker `pmark` and of Q `qmark`, so a page or an API answer
that shows a row of the other project is caught by a substring test.

No ffmpeg: videos are 1000 bytes of zeros (the media route streams bytes, it does not decode them).
"""

from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from annotator.models import ItemStatus, ReferredMoment, SeedQuestion
from projects.models import Invitation, Role
from tests import factories
from tests.releases.conftest import stored_release

P_MARK = "pmark"
Q_MARK = "qmark"
# People are named apart from the data, so "the page shows its own project's rows" is not met by the
# signed-in user's own name in the header.
P_PEOPLE = "pperson"
Q_PEOPLE = "qperson"
# Likewise the projects' names, which every page of a project shows in its header.
P_NAME = "Project Papaya"
Q_NAME = "Project Quince"
MEMBER_ROLES = ("annotator", "examiner", "reviser", "admin")
JOIN_TOKEN = "join-proj-p"  # P's open invitation link (no marker: the page names the project only)


@dataclass
class ProjectData:
    """One project's objects by the name the matrix uses for them (see KWARG_OBJECTS in the test)."""

    mark: str
    project: object = None
    objects: dict = field(default_factory=dict)

    def id(self, key: str):
        if key == "slug":
            return self.project.slug
        return self.objects[key].pk


@dataclass
class World:
    p: ProjectData
    q: ProjectData
    users: dict  # role name → user ("stranger" is Q's admin; "anonymous" is absent)


def _mcq(project, video, author, status, mark, n):
    # The question keeps the factory's referring-query span (characters 0–27) valid; the marker goes last.
    mcq = factories.MCQFactory(
        project=project,
        video=video,
        author=author,
        status=status,
        question=f"When the chef lifts the pan, what colour is the sauce? ({mark} mcq {n})",
        submitted_at=timezone.now() if status != ItemStatus.ANNOTATING else None,
    )
    ReferredMoment.objects.create(mcq=mcq, video=video, time_s=5.0, frame_index=125)
    return mcq


def build_project(*, mark: str, name: str, slug: str, annotator, examiner, reviser, admin) -> ProjectData:
    """One project with a video, clips, chains, a chain pair with a link, MCQs, a queue, a lease, …"""
    data = ProjectData(mark=mark)
    project = data.project = factories.ProjectFactory(name=name, slug=slug)
    o = data.objects
    video = o["video"] = factories.VideoFactory(project=project, name=f"{mark}_video")
    factories.SubtitleCueFactory(video=video, start_s=1.0, end_s=2.0, text=f"{mark} cue")
    factories.CommentFactory(video=video, time_s=1.0, text=f"{mark} comment")
    factories.CurationDecisionFactory(video=video)

    # A chain being annotated, followed by another chain; the pair of them has one link between turns.
    chain = o["chain"] = factories.QAChainFactory(
        clip=factories.ClipFactory(video=video, index=0), status=ItemStatus.ANNOTATING, author=annotator
    )
    chain_pair = o["chain_pair"] = factories.ChainPairFactory(chain_before=chain, status=ItemStatus.ANNOTATING)
    o["relation"] = factories.RelationFactory(chain_pair=chain_pair)  # turns 0 of both chains
    factories.QAPairFactory(chain=chain, index=1, question=f"What does the {mark} cook do next?")

    o["mcq"] = _mcq(project, video, annotator, ItemStatus.ANNOTATING, mark, 1)
    # Waiting for an examiner: written by the annotator, so the examiner may judge it.
    o["mcq_examining"] = _mcq(project, video, annotator, ItemStatus.EXAMINING, mark, 2)
    # Flagged by an examiner: a reviser who did not write it fixes it.
    o["mcq_flagged"] = _mcq(project, video, annotator, ItemStatus.FLAGGED, mark, 3)

    queue = o["queue"] = factories.ReviewQueueFactory(
        project=project,
        name=f"{mark} queue",
        stage=ItemStatus.EXAMINING,
        item_kind="mcq",
        # Everyone, so every member's queue list has a row (members see only their queues).
        members=[u for u in (annotator, examiner, reviser, admin) if u is not None],
    )
    o["assignment"] = factories.AssignmentFactory(
        item=o["mcq_examining"], queue=queue, assignee=examiner or admin, stage=ItemStatus.EXAMINING
    )
    o["score"] = factories.QualityScoreFactory(item=chain, overall=95, comments=f"{mark} judge comment")
    # A finished draft run: its kind is a draft step's, so both the drafts page and the jobs page show it.
    o["job"] = factories.BackgroundJobFactory(
        project=project,
        kind="annotator.draft_chains",
        status="succeeded",
        message=f"{mark} job done",
        created_by=admin,
        finished_at=timezone.now() - timedelta(minutes=1),
    )
    # A finished benchmark import: its report is on its own page (releases:import_job).
    o["import_job"] = factories.BackgroundJobFactory(
        project=project,
        kind="releases.import_benchmark",
        status="succeeded",
        message=f"{mark} import done",
        created_by=admin,
        result={"format": "generic", "ok": True, "counts": {"mcqs": 0}, "problems": [], "total_problems": 0},
        finished_at=timezone.now() - timedelta(minutes=1),
    )
    o["seed"] = SeedQuestion.objects.create(project=project, task="video topic", text=f"What is the {mark} topic?")
    o["release"] = stored_release(project, version=f"{mark}-1", by=admin)
    # Deleted by the matrix's DELETE and POST …/delete/ cases, so the release the reads use stays.
    o["release_doomed"] = stored_release(project, version=f"{mark}-doomed", by=admin)
    # A finished evaluation run on the release, with one prediction (the leaderboard shows its name).
    from evaluations.models import EvaluationRun, Outcome, Prediction

    o["evaluation"] = EvaluationRun.objects.create(
        project=project,
        release=o["release"],
        file="generic/test.jsonl",
        name=f"{mark} model run",
        model=f"{mark}-model",
        protocol="frames",
        status="finished",
        summary={"items": 1, "scored": 1, "failed": 0, "accuracy": 1.0, "se": None, "clusters": 1, "groups": {}},
        finished_at=timezone.now(),
    )
    Prediction.objects.create(
        run=o["evaluation"],
        index=0,
        record_id=f"{mark}-record",
        mcq=o["mcq"],
        video=f"{mark}-video",
        option_count=4,
        correct_index=0,
        outcome=Outcome.ANSWERED,
        chosen_index=0,
        score=1.0,
    )
    # People: a member (the annotator) whose roles the admin changes, and an open invitation.
    o["member"] = annotator
    o["invitation"] = Invitation.objects.create(
        project=project, roles=[Role.ANNOTATOR], token=f"join-{slug}", expires_at=timezone.now() + timedelta(days=7)
    )
    return data


def build_world() -> World:
    users = {role: factories.UserFactory(username=f"{role}-{P_PEOPLE}") for role in MEMBER_ROLES}
    stranger = users["stranger"] = factories.UserFactory(username=f"stranger-{Q_PEOPLE}")
    p = build_project(mark=P_MARK, name=P_NAME, slug="proj-p", **{r: users[r] for r in MEMBER_ROLES})
    for role in MEMBER_ROLES:
        factories.MembershipFactory(project=p.project, user=users[role], role=getattr(Role, role.upper()))
    # Q: its admin wrote everything of Q, and is the only person in it.
    q = build_project(
        mark=Q_MARK, name=Q_NAME, slug="proj-q", annotator=stranger, examiner=None, reviser=None, admin=stranger
    )
    factories.MembershipFactory(project=q.project, user=stranger, role=Role.ADMIN)
    return World(p=p, q=q, users=users)
