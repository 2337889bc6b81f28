"""factory_boy factories for the domain; tests build data with these, never with fixtures files."""

import factory
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile

from annotator.models import MCQ, ChainPair, ItemStatus, MCQVideo, QAChain, QAPair, Relation
from projects.models import Membership, Project, Role
from videos.models import Clip, Video, VideoStatus

PASSWORD = "pw"
_HASH: list[str] = []


def _hashed_password() -> str:
    """Hash once per run: password hashing is deliberately slow."""
    if not _HASH:
        from django.contrib.auth.hashers import make_password

        _HASH.append(make_password(PASSWORD))
    return _HASH[0]


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.LazyFunction(lambda: _hashed_password())


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.ANNOTATOR


class VideoFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Video

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"video_{n:04d}")
    original = factory.LazyAttribute(lambda v: ContentFile(b"\x00" * 1000, name=f"{v.name}.mp4"))
    sha256 = factory.Sequence(lambda n: f"{n:064x}")
    size_bytes = 1000
    duration_s = 120.0
    fps = 25.0
    width = 1280
    height = 720
    status = VideoStatus.READY


class ClipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Clip

    video = factory.SubFactory(VideoFactory)
    # Numbered per video (a global sequence would run past the video's end in a long test run).
    index = factory.LazyAttribute(lambda c: Clip.objects.filter(video=c.video).count())
    start_s = factory.LazyAttribute(lambda c: c.index * 10.0)
    end_s = factory.LazyAttribute(lambda c: c.index * 10.0 + 10.0)


class QAChainFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = QAChain

    clip = factory.SubFactory(ClipFactory)
    project = factory.LazyAttribute(lambda c: c.clip.video.project)
    status = ItemStatus.ANNOTATING


class QAPairFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = QAPair

    chain = factory.SubFactory(QAChainFactory)
    index = factory.Sequence(int)
    question = factory.Sequence(lambda n: f"What happens in moment {n}?")
    answer = factory.Sequence(lambda n: f"Something happens ({n}).")
    skill = "ECA"


class ChainPairFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ChainPair

    chain_before = factory.SubFactory(QAChainFactory)
    project = factory.LazyAttribute(lambda p: p.chain_before.project)
    video = factory.LazyAttribute(lambda p: p.chain_before.clip.video)
    before_index = factory.LazyAttribute(lambda p: p.chain_before.clip.index)
    chain_after = factory.LazyAttribute(
        lambda p: QAChainFactory(clip=ClipFactory(video=p.video, index=p.before_index + 1))
    )


class RelationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Relation

    chain_pair = factory.SubFactory(ChainPairFactory)
    from_pair = factory.LazyAttribute(lambda r: QAPairFactory(chain=r.chain_pair.chain_before, index=0))
    to_pair = factory.LazyAttribute(lambda r: QAPairFactory(chain=r.chain_pair.chain_after, index=0))
    relation_type = "action"


class MCQFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MCQ
        skip_postgeneration_save = True

    project = factory.SubFactory(ProjectFactory)
    question = "When the chef lifts the pan, what colour is the sauce?"
    referring_query = "When the chef lifts the pan"
    referring_start = 0
    referring_end = 27
    question_wo_referring_query = "What colour is the sauce?"
    options = factory.LazyFunction(lambda: ["red", "green", "brown", "white"])
    correct_index = 0
    category = "E2O"
    level = "L1-Perception"
    status = ItemStatus.ANNOTATING

    @factory.post_generation
    def video(self, create, extracted, **kwargs):
        if create and extracted is not None:
            MCQVideo.objects.create(mcq=self, video=extracted, order=0)


def people_for(project: Project) -> dict:
    """One user per role, a multi-role admin, and an outsider who belongs to another project."""
    people = {}
    for role in (Role.ANNOTATOR, Role.EXAMINER, Role.REVISER, Role.ADMIN):
        user = UserFactory(username=f"{role}-{project.slug}")
        MembershipFactory(project=project, user=user, role=role)
        people[str(role)] = user
    outsider = UserFactory(username=f"outsider-{project.slug}")
    MembershipFactory(project=ProjectFactory(), user=outsider, role=Role.ADMIN)
    people["outsider"] = outsider
    return people


# --- Video data and jobs (API tests) ------------------------------------------------


class SubtitleCueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "videos.SubtitleCue"

    video = factory.SubFactory(VideoFactory)
    start_s = factory.Sequence(lambda n: n * 2.0)
    end_s = factory.LazyAttribute(lambda c: c.start_s + 1.5)
    text = factory.Sequence(lambda n: f"Line {n}.")
    source = "srt"


class CommentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "videos.Comment"

    video = factory.SubFactory(VideoFactory)
    time_s = factory.Sequence(lambda n: float(n))
    text = factory.Sequence(lambda n: f"comment {n}")


class CurationDecisionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "videos.CurationDecision"

    video = factory.SubFactory(VideoFactory)
    rule = "duration"
    passed = True
    value = 120.0
    reason = "duration 120.0 s ≥ 60 s"


class BackgroundJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "jobs.BackgroundJob"

    project = factory.SubFactory(ProjectFactory)
    kind = "videos.process"
    status = "queued"


# --- Review queues and leases ------------------------------------------------------------------


def _now():
    from django.utils import timezone

    return timezone.now()


def _minutes(n: int):
    from datetime import timedelta

    return timedelta(minutes=n)


def _item_kind(item) -> str:
    return {QAChain: "qa_chain", ChainPair: "chain_pair", MCQ: "mcq"}[type(item)]


class ReviewQueueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "reviewer.ReviewQueue"
        skip_postgeneration_save = True

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"Queue {n}")
    stage = ItemStatus.EXAMINING
    item_kind = "mcq"

    @factory.post_generation
    def members(self, create, extracted, **kwargs):
        if create and extracted:
            self.members.set(extracted)


class AssignmentFactory(factory.django.DjangoModelFactory):
    """A lease on `item` (a new MCQ unless given), leased now for 30 minutes unless told otherwise."""

    class Meta:
        model = "reviewer.Assignment"
        exclude = ["item"]

    item = factory.SubFactory(MCQFactory)
    item_kind = factory.LazyAttribute(lambda a: _item_kind(a.item))
    qa_chain = factory.LazyAttribute(lambda a: a.item if isinstance(a.item, QAChain) else None)
    chain_pair = factory.LazyAttribute(lambda a: a.item if isinstance(a.item, ChainPair) else None)
    mcq = factory.LazyAttribute(lambda a: a.item if isinstance(a.item, MCQ) else None)
    project = factory.LazyAttribute(lambda a: a.item.project)
    stage = ItemStatus.EXAMINING
    assignee = factory.SubFactory(UserFactory)
    status = "active"
    leased_at = factory.LazyFunction(_now)
    lease_expires_at = factory.LazyAttribute(lambda a: a.leased_at + _minutes(30))


class QualityScoreFactory(factory.django.DjangoModelFactory):
    """A judge's score of `item` (a new QA chain unless given)."""

    class Meta:
        model = "reviewer.QualityScore"
        exclude = ["item"]

    item = factory.SubFactory(QAChainFactory)
    item_kind = factory.LazyAttribute(lambda s: _item_kind(s.item))
    qa_chain = factory.LazyAttribute(lambda s: s.item if isinstance(s.item, QAChain) else None)
    chain_pair = factory.LazyAttribute(lambda s: s.item if isinstance(s.item, ChainPair) else None)
    mcq = factory.LazyAttribute(lambda s: s.item if isinstance(s.item, MCQ) else None)
    project = factory.LazyAttribute(lambda s: s.item.project)
    item_version = 1
    dimensions = factory.LazyFunction(dict)
    overall = 90
    threshold = 90
    passed = factory.LazyAttribute(lambda s: s.overall >= s.threshold)


def video_from_file(project: Project, path, *, name: str = "scenes", **fields) -> Video:
    """A ready Video whose original is a real file (for tests that play it); facts given as fields."""
    from pathlib import Path

    from django.core.files import File

    from videos.probe import sha256_file

    path = Path(path)
    with path.open("rb") as fh:
        video = Video(
            project=project,
            name=name,
            original_filename=path.name,
            sha256=sha256_file(path),
            size_bytes=path.stat().st_size,
            status=VideoStatus.READY,
            **fields,
        )
        video.original.save(path.name, File(fh), save=False)
        video.save()
    return video
