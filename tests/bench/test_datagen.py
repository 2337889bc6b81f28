"""bench.datagen at a small scale, into the test database: proportional, consistent, reproducible."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Max, Min, Q

from annotator.models import MCQ, ChainPair, ItemKind, MCQVideo, QAChain, QAPair, ReferredMoment, Relation, ReviewEvent
from bench.datagen import DatagenError, Targets, copy_rows, generate
from projects.models import Project
from projects.taxonomies import CHAIN_JUDGE_DIMENSIONS
from reviewer.models import Assignment, QualityScore
from videos.models import Clip, Comment, SubtitleCue, Video

pytestmark = pytest.mark.django_db

SCALE = 0.01


@pytest.fixture
def dataset():
    data = generate(scale=SCALE, seed=7, slug="bench-test")
    # Foreign keys and the QA-order constraint are deferred: make PostgreSQL check them now.
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    return data


def test_targets_scale_in_proportion_and_refuse_nonsense():
    full, small = Targets(), Targets().scaled(SCALE)
    assert (small.videos, small.chains, small.qa_pairs, small.relations, small.mcqs, small.comments) == (
        14,
        116,
        500,
        75,
        67,
        14_500,
    )
    assert full.scaled(1) == full
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="scale"):
            full.scaled(bad)


def test_counts_follow_the_scale(dataset):
    t = Targets().scaled(SCALE)
    project = dataset.project_id
    videos = Video.objects.filter(project=project)
    assert videos.count() == t.videos == dataset.counts["videos"]
    assert QAChain.objects.filter(project=project).count() == t.chains == Clip.objects.filter(video__in=videos).count()
    assert QAPair.objects.filter(chain__project=project).count() == t.qa_pairs
    # One chain pair per adjacent pair of clips in every video.
    assert ChainPair.objects.filter(project=project).count() == t.chains - t.videos
    assert Relation.objects.filter(chain_pair__project=project).count() == t.relations
    assert MCQ.objects.filter(project=project).count() == t.mcqs
    assert Comment.objects.filter(video__in=videos).count() == t.comments == dataset.counts["comments"]
    cues = SubtitleCue.objects.filter(video__in=videos).count()
    assert cues == dataset.counts["subtitle_cues"]
    assert 0.9 * t.cues_per_video * t.videos <= cues <= 1.1 * t.cues_per_video * t.videos
    assert ReviewEvent.objects.filter(project=project).count() == dataset.counts["review_events"] > t.chains
    assert Assignment.objects.filter(project=project, status="active").exists()
    assert QualityScore.objects.filter(project=project).count() == dataset.counts["quality_scores"] > 0
    assert dataset.seconds > 0 and set(dataset.stage_seconds) >= {"comments", "commit", "analyze"}


def test_every_invariant_holds(dataset):
    project = dataset.project_id
    clips = Clip.objects.filter(video__project=project)
    assert not clips.filter(Q(start_s__lt=0) | Q(start_s__gte=F("end_s")) | Q(end_s__gt=F("video__duration_s")))
    # Chain pairs join the chains of clips i and i+1 of their own video.
    pairs = ChainPair.objects.filter(project=project)
    assert not pairs.exclude(chain_before__clip__index=F("before_index"), chain_before__clip__video=F("video"))
    assert not pairs.exclude(chain_after__clip__index=F("before_index") + 1, chain_after__clip__video=F("video"))
    relations = Relation.objects.filter(chain_pair__project=project)
    assert not relations.exclude(
        from_pair__chain=F("chain_pair__chain_before"), to_pair__chain=F("chain_pair__chain_after")
    )
    # QA turns are numbered 0..n-1 in every chain.
    turns = QAChain.objects.filter(project=project).annotate(
        n=Count("pairs"), lo=Min("pairs__index"), hi=Max("pairs__index")
    )
    assert all(c.n >= 1 and c.lo == 0 and c.hi == c.n - 1 for c in turns)

    for mcq in MCQ.objects.filter(project=project).prefetch_related("mcq_videos", "moments__video"):
        assert 0 <= mcq.correct_index < len(mcq.options)
        assert [link.order for link in mcq.mcq_videos.all()] == list(range(mcq.mcq_videos.count()))
        if mcq.referring_query:
            assert mcq.question[mcq.referring_start : mcq.referring_end] == mcq.referring_query
            assert 4 <= len(mcq.options) <= 5 and mcq.moments.exists()
        for moment in mcq.moments.all():
            assert 0 <= moment.time_s <= moment.video.duration_s
            assert moment.frame_index < moment.video.frame_count
            assert abs(moment.frame_index - moment.time_s * moment.video.fps) <= 1
    assert not MCQVideo.objects.filter(mcq__project=project).exclude(video__project=project)
    assert not ReferredMoment.objects.filter(mcq__project=project, time_s__gt=F("video__duration_s"))

    videos = Video.objects.filter(project=project)
    assert not SubtitleCue.objects.filter(video__in=videos).filter(
        Q(start_s__gt=F("end_s")) | Q(end_s__gt=F("video__duration_s"))
    )
    assert not Comment.objects.filter(video__in=videos).filter(Q(time_s__lt=0) | Q(time_s__gt=F("video__duration_s")))


def test_the_review_log_tells_each_items_story(dataset):
    project = dataset.project_id
    for chain in QAChain.objects.filter(project=project)[:40]:
        events = list(
            ReviewEvent.objects.filter(item_kind=ItemKind.QA_CHAIN, qa_chain=chain).order_by("created_at", "id")
        )
        assert events[0].from_status == "" and events[-1].to_status == chain.status
        # Each transition starts where the previous one ended, and time only moves forward.
        for before, after in zip(events, events[1:], strict=False):
            assert after.from_status == before.to_status and after.created_at >= before.created_at
    # Examiners and revisers never hold an item they wrote.
    for kind, field in ((ItemKind.QA_CHAIN, "qa_chain"), (ItemKind.CHAIN_PAIR, "chain_pair"), (ItemKind.MCQ, "mcq")):
        held = Assignment.objects.filter(project=project, item_kind=kind, stage__in=["examining", "revising"])
        assert not held.filter(assignee=F(f"{field}__author"))
    for score in QualityScore.objects.filter(project=project):
        assert score.passed == (score.overall >= score.threshold)
        assert set(score.dimensions) == set(CHAIN_JUDGE_DIMENSIONS)
    active = Assignment.objects.filter(project=project, status="active")
    assert not active.filter(lease_expires_at__lte=F("leased_at"))


def _signature(slug: str) -> dict:
    """The generated content, free of database ids, for comparing two runs."""
    videos = Video.objects.filter(project__slug=slug).order_by("name")
    return {
        "videos": list(videos.values_list("name", "duration_s", "fps", "sha256")),
        "clips": list(
            Clip.objects.filter(video__in=videos)
            .order_by("video__name", "index")
            .values_list("video__name", "index", "start_s", "end_s")
        ),
        "pairs": list(
            QAPair.objects.filter(chain__project__slug=slug)
            .order_by("chain__clip__video__name", "chain__clip__index", "index")
            .values_list("question", "answer", "skill")
        ),
        "relations": sorted(
            Relation.objects.filter(chain_pair__project__slug=slug).values_list(
                "chain_pair__video__name",
                "chain_pair__before_index",
                "from_pair__index",
                "to_pair__index",
                "relation_type",
            )
        ),
        "mcqs": list(
            MCQ.objects.filter(project__slug=slug)
            .order_by("id")
            .values_list("question", "options", "correct_index", "category", "status")
        ),
        "comments": list(
            Comment.objects.filter(video__in=videos)
            .values("video__name")
            .annotate(n=Count("id"))
            .order_by("video__name")
            .values_list("video__name", "n")
        ),
        "first_comments": list(
            Comment.objects.filter(video__in=videos)
            .order_by("video__name", "time_s", "id")
            .values_list("time_s", "text", "user")[:50]
        ),
        "statuses": list(
            QAChain.objects.filter(project__slug=slug)
            .order_by("clip__video__name", "clip__index")
            .values_list("status", "version", "author__username")
        ),
    }


def test_the_same_seed_gives_the_same_content():
    generate(scale=0.005, seed=11, slug="one")
    generate(scale=0.005, seed=11, slug="two")
    generate(scale=0.005, seed=12, slug="three")
    one, two, three = _signature("one"), _signature("two"), _signature("three")
    # Usernames carry the slug; the rest must match exactly.
    two["statuses"] = [(s, v, u and u.replace("two-", "one-")) for s, v, u in two["statuses"]]
    assert one == two
    assert one["pairs"] != three["pairs"] and one["videos"] != three["videos"]


def test_a_second_project_with_the_same_slug_is_refused(dataset):
    with pytest.raises(DatagenError, match="exists in this database already"):
        generate(scale=SCALE, slug="bench-test")


def test_rows_streamed_with_copy_are_still_checked(dataset):
    """COPY runs with the table's foreign keys set aside; putting them back must catch a dangling row,
    and the row triggers must still refuse a clip that ends after its video."""
    from django.utils import timezone

    now = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        copy_rows(Comment, ["video", "time_s", "text", "user", "metadata"], ["999999999\t1.5\thi\t\t\\N\n"], now=now)
    video = Video.objects.filter(project=dataset.project_id).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        copy_rows(
            Clip, ["video", "index", "start_s", "end_s"], [f"{video.id}\t999\t0\t{video.duration_s + 5}\n"], now=now
        )
    # A good row goes in, and the keys and indexes are back with their names.
    copy_rows(Comment, ["video", "time_s", "text", "user", "metadata"], [f"{video.id}\t1.5\tfine\tme\t\\N\n"], now=now)
    assert Comment.objects.filter(video=video, text="fine").exists()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_constraint WHERE conrelid = 'videos_comment'::regclass AND contype = 'f'"
        )
        assert cursor.fetchone()[0] == 1
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE tablename = 'videos_comment'")
        assert cursor.fetchone()[0] == 3  # primary key, video_id, (video_id, time_s)


def test_verdicts_leases_and_queues_tell_the_same_story(dataset):
    """Exam verdicts agree with the review log, the MCQ queue has two examiners per round, leases lapse."""
    from reviewer.models import ExamVerdict, ReviewQueue

    project = dataset.project_id
    queues = dict(ReviewQueue.objects.filter(project=project).values_list("name", "overlap"))
    assert queues["MCQs: examine"] == 2 and sum(1 for o in queues.values() if o == 1) == len(queues) - 1
    verdicts = ExamVerdict.objects.filter(project=project)
    assert verdicts.count() == dataset.counts["exam_verdicts"] > 0
    assert not verdicts.filter(examiner=F("mcq__author")) and not verdicts.filter(examiner=F("qa_chain__author"))
    assert not verdicts.filter(seconds_spent__lt=1) and not verdicts.filter(created_at__lt=F("round_started_at"))
    # Every decided round has its verdicts: one for chains and pairs, two for MCQs; a flag where it was flagged.
    for kind, field, per_round in (("qa_chain", "qa_chain", 1), ("chain_pair", "chain_pair", 1), ("mcq", "mcq", 2)):
        decided = ReviewEvent.objects.filter(
            project=project, item_kind=kind, from_status="examining", to_status__in=["accepted", "flagged"]
        )[:30]
        for event in decided:
            item_id = getattr(event, f"{field}_id")
            round_verdicts = list(
                verdicts.filter(**{field: item_id}, created_at__lte=event.created_at)
                .order_by("-round_started_at", "created_at")
                .values_list("round_started_at", "passed", "examiner_id", "created_at")
            )
            latest = round_verdicts[0][0]
            mine = [v for v in round_verdicts if v[0] == latest]
            assert len(mine) == per_round
            assert any(not passed for _r, passed, _e, _c in mine) == (event.to_status == "flagged")
            # The examiner the log names gave the verdict that moved the item, at that moment.
            assert mine[-1][2] == event.actor_id and mine[-1][3] == event.created_at
    # Some MCQ rounds split (one pass, one flag), so agreement is neither perfect nor undefined.
    from reviewer.dashboards import Period, agreement

    [mcq_row] = agreement(project=Project.objects.get(pk=project), period=Period.last(61))
    assert mcq_row.units > 0 and mcq_row.split > 0 and mcq_row.alpha is not None
    assert Assignment.objects.filter(project=project, status="expired").exists()
    completed = Assignment.objects.filter(project=project, status="completed")
    assert not completed.filter(completed_at__lt=F("leased_at"))
