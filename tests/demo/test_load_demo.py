"""load_demo against the test database with real ffmpeg/ffprobe: what it builds, and that it is idempotent."""

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from annotator.models import (
    MCQ,
    ChainPair,
    ItemStatus,
    MCQVideo,
    Origin,
    QAChain,
    QAPair,
    Relation,
    RelationDecision,
    ReviewEvent,
)
from demo import services
from demo import storyboard as sb
from projects.models import Membership, Project, ProjectKind, Role
from projects.taxonomies import LVB_QUESTION_CATEGORIES, RELATION_TYPES, SVBENCH_SKILLS
from videos.models import Comment, CueSource, CurationDecision, CurationStatus, SubtitleCue, Video, VideoStatus
from videos.probe import mp4_faststart, read_mp4_boxes

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The demo hashes four passwords per build; the real hasher is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


SKILLS = {s["code"] for s in SVBENCH_SKILLS}
RELATION_CODES = {r["code"] for r in RELATION_TYPES}
LEVELS = {c["code"]: c["level"] for c in LVB_QUESTION_CATEGORIES}


def _srt_cues(text: str) -> list[tuple[str, str, str]]:
    blocks = [b for b in text.strip().split("\n\n") if b.strip()]
    out = []
    for n, block in enumerate(blocks, 1):
        number, times, line = block.split("\n")
        assert number == str(n)
        start, end = times.split(" --> ")
        out.append((start, end, line))
    return out


def _seconds(ts: str) -> float:
    h, m, rest = ts.split(":")
    s, ms = rest.split(",")
    return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000


def test_load_demo_builds_the_whole_demo_project(settings, client):
    settings.DEBUG = True  # the local run: no --force needed
    call_command("load_demo", stdout=(out := _Sink()))
    assert "Loaded the demo project" in out.text

    project = Project.objects.get(slug="demo")
    assert project.name == "Demo: kitchen streaming"
    assert project.kind == ProjectKind.SVBENCH
    assert services.demo_counts(project=project) == {
        "videos": 3,
        "clips": 8 + 2 + 2,
        "subtitle_cues": sum(len(s.narration) for s in sb.SCENES),
        "comments": 300,
        "qa_chains": 8,
        "qa_pairs": 40,
        "chain_pairs": 7,
        "relations": len(sb.RELATIONS),
        "mcqs": 6,
        "seed_questions": 3,
        "video_descriptions": 4,
        "members": 4,
    }

    # The main video: generated, stored, probed.
    main = Video.objects.get(project=project, name="kitchen_stream")
    assert main.status == VideoStatus.READY
    assert 60 <= main.duration_s <= 75
    assert (main.width, main.height, main.fps) == (640, 360, 25)
    assert main.video_codec == "h264" and main.audio_codec == "aac" and main.has_audio
    path = Path(main.original.path)
    assert path.is_file() and path.stat().st_size == main.size_bytes
    assert str(path).startswith(str(settings.MEDIA_ROOT))
    assert mp4_faststart(read_mp4_boxes(path)) is True
    assert len(main.sha256) == 64
    # Curation by the project's (SVBench) rules: the stream passes; the two short videos fail on duration
    # and are kept by the admin's override, for the multi-video question.
    assert main.curation_status == CurationStatus.KEPT and main.curation_overridden_by is None
    assert CurationDecision.objects.filter(video=main, passed=True).count() == 3
    for short in Video.objects.filter(project=project).exclude(pk=main.pk):
        assert short.status == VideoStatus.READY and 5 <= short.duration_s <= 20 and short.has_audio
        assert short.clips.count() == 2
        assert short.curation_status == CurationStatus.KEPT and short.curation_overridden_by.username == "admin"
        assert not CurationDecision.objects.get(video=short, rule="duration").passed

    # Clips: one per scene, padded by the project's 0.5 s and clamped to the video.
    # Scenes at the generated cut times, contiguous over the whole video.
    assert len(main.scenes) == len(sb.SCENES)
    assert [e - s for s, e in main.scenes] == pytest.approx([s.duration_s for s in sb.SCENES], abs=0.001)
    edges = [main.scenes[0][0]] + [e for _, e in main.scenes]
    assert edges[0] == 0 and edges[-1] == pytest.approx(main.duration_s)
    clips = list(main.clips.order_by("index"))
    assert [c.index for c in clips] == list(range(len(sb.SCENES)))
    for clip, start, end in zip(clips, edges[:-1], edges[1:], strict=True):
        assert (clip.scene_start_s, clip.scene_end_s) == pytest.approx((start, end))
        assert clip.start_s == pytest.approx(max(0.0, start - project.clip_pad_s))
        assert clip.end_s == pytest.approx(min(main.duration_s, end + project.clip_pad_s))
        assert 0 <= clip.start_s < clip.end_s <= main.duration_s
    assert clips[0].start_s == 0 and clips[-1].end_s == pytest.approx(main.duration_s)
    # Adjacent clips overlap by twice the padding.
    assert clips[1].start_s == pytest.approx(clips[0].end_s - 2 * project.clip_pad_s)

    # Subtitles: an SRT file under MEDIA_ROOT and the same cues as rows, inside their scenes.
    srt_path = Path(settings.MEDIA_ROOT) / main.metadata["subtitle_file"]
    srt = _srt_cues(srt_path.read_text())
    cues = list(SubtitleCue.objects.filter(video=main).order_by("start_s"))
    assert [c.text for c in cues] == [line for _, _, line in srt] == [line for s in sb.SCENES for line in s.narration]
    assert all(c.source == CueSource.SRT for c in cues)
    for cue, (start, end, _) in zip(cues, srt, strict=True):
        assert (cue.start_s, cue.end_s) == pytest.approx((_seconds(start), _seconds(end)), abs=0.001)
        assert 0 <= cue.start_s < cue.end_s <= main.duration_s
    assert all(a.end_s <= b.start_s for a, b in zip(cues, cues[1:], strict=False)), "cues overlap"
    assert re.fullmatch(r"\d\d:\d\d:\d\d,\d\d\d", srt[0][0])

    # Comments spread over the whole video.
    times = list(Comment.objects.filter(video=main).values_list("time_s", flat=True))
    assert all(0 <= t <= main.duration_s for t in times)
    assert {min(int(t // 10), 6) for t in times} == set(range(7)), "every 10 s stretch of the video has comments"
    assert Comment.objects.filter(video=main).values("user").distinct().count() > 10

    # Chains: one per clip, five pairs with skills, in a mix of statuses.
    chains = list(QAChain.objects.filter(project=project).select_related("clip").order_by("clip__index"))
    assert [c.clip_id for c in chains] == [c.pk for c in clips]
    assert [c.status for c in chains] == list(sb.CHAIN_STATUSES)
    for chain in chains:
        pairs = list(chain.pairs.order_by("index"))
        assert [p.index for p in pairs] == [0, 1, 2, 3, 4]
        assert {p.skill for p in pairs} <= SKILLS
        assert chain.machine_draft and len(chain.machine_draft["pairs"]) == 5
        assert chain.draft_call is not None
        if chain.status == ItemStatus.DRAFT:
            assert chain.origin == Origin.MACHINE and not chain.human_edited and chain.author is None
            assert [p.question for p in pairs] == [d["question"] for d in chain.machine_draft["pairs"]]
        else:
            assert chain.human_edited and chain.author.username == "annotator"
        # Pronouns after the first mention: the host's name appears in at most one question.
        assert sum("Mara" in p.question for p in pairs) <= 1, [p.question for p in pairs]
    edited = [c for c in chains if c.status != ItemStatus.DRAFT and sb.SCENES[c.clip.index].machine_edits]
    assert edited and all(
        [p.question for p in c.pairs.order_by("index")] != [d["question"] for d in c.machine_draft["pairs"]]
        for c in edited
    ), "an annotated chain differs from its machine draft"
    accepted = chains[sb.CHAIN_STATUSES.index("accepted")]
    assert accepted.accepted_at and accepted.submitted_at
    assert [e.to_status for e in ReviewEvent.objects.filter(qa_chain=accepted)] == [
        "annotating",
        "submitted",
        "scored",
        "examining",
        "accepted",
    ]

    # Review: the scored chain waits in the examiner's queue, the flagged one (with a real checklist
    # reason and its verdict) in the reviser's; each demo login has a queue to pull from.
    from reviewer.examination import CHECKLISTS
    from reviewer.models import ExamVerdict, ReviewQueue
    from reviewer.queues import queue_open_items

    assert set(sb.DEMO_CHAIN_CHECKS) == {code for code, _ in CHECKLISTS["qa_chain"]}
    flagged = chains[sb.CHAIN_STATUSES.index("flagged")]
    verdict = ExamVerdict.objects.get(qa_chain=flagged)
    assert not verdict.passed and verdict.reasons == list(sb.DEMO_FLAG_REASONS)
    assert verdict.round_started_at == flagged.submitted_at
    queues = {q.name: q for q in ReviewQueue.objects.filter(project=project)}
    assert [q.pk for q in queue_open_items(queues["Examine chains"])] == [
        chains[sb.CHAIN_STATUSES.index("scored")].pk
    ]
    assert [q.pk for q in queue_open_items(queues["Revise flagged chains"])] == [flagged.pk]
    assert {u.username for q in queues.values() for u in q.members.all()} == {"annotator", "examiner", "reviser"}

    # Chain pairs and relations: adjacent chains, 1–2 relations each, some accepted with a rewrite.
    for cp in ChainPair.objects.filter(project=project).select_related("chain_before__clip", "chain_after__clip"):
        assert cp.chain_before.clip.index == cp.before_index and cp.chain_after.clip.index == cp.before_index + 1
        relations = list(cp.relations.select_related("from_pair", "to_pair"))
        assert 1 <= len(relations) <= 2
        for r in relations:
            assert r.relation_type in RELATION_CODES
            assert r.from_pair.chain_id == cp.chain_before_id and r.to_pair.chain_id == cp.chain_after_id
            if r.decision == RelationDecision.ACCEPTED:
                assert r.rewritten_question and r.original_question and r.rewritten_question != r.original_question
                assert r.to_pair.question == r.rewritten_question
    assert Relation.objects.filter(chain_pair__project=project, decision=RelationDecision.ACCEPTED).count() >= 2
    assert Relation.objects.filter(chain_pair__project=project, decision=RelationDecision.CANDIDATE).exists()

    # LongVideoBench-style MCQs on the main video.
    lvb = list(MCQ.objects.filter(project=project, mcq_videos__role="main", level__startswith="L").distinct())
    assert len(lvb) == 4
    assert {m.status for m in lvb} == {"accepted", "submitted", "annotating", "draft"}
    assert len({m.correct_index for m in lvb}) > 1, "the correct option is not always in the same place"
    for m in lvb:
        assert m.question[m.referring_start : m.referring_end] == m.referring_query
        assert m.question_wo_referring_query and m.referring_query not in m.question_wo_referring_query
        assert 4 <= len(m.options) <= 5 and 0 <= m.correct_index < len(m.options)
        assert m.level == LEVELS[m.category]
        moments = list(m.moments.all())
        assert 1 <= len(moments) <= 2
        for moment in moments:
            assert moment.video_id == main.pk and 0 <= moment.time_s <= main.duration_s
            assert moment.frame_index == round(moment.time_s * main.fps)

    # The LiViBench-style question: a task of the project's list with its group, its moment stamped.
    livi = MCQ.objects.get(project=project, category=sb.LIVI_MCQ.category)
    assert livi.task_group == "fine perception" and livi.level == "" and livi.status == "accepted"
    assert [m.frame_index for m in livi.moments.all()] == [round(t * main.fps) for t in sb.LIVI_MCQ.moments]

    # The MVPBench-style question: a reference video and two candidates, in order.
    mvp = MCQ.objects.get(project=project, mcq_videos__role="reference")
    links = list(MCQVideo.objects.filter(mcq=mvp).order_by("order"))
    assert [(link.role, link.order) for link in links] == [("reference", 0), ("candidate", 1), ("candidate", 2)]
    assert len({link.video_id for link in links}) == 3
    assert mvp.question.count("<video>") == 3
    assert mvp.options[mvp.correct_index] == "2" and links[2].video_id == main.pk

    # One login per role, each a member; the admin can use /admin/.
    for username, password, role in sb.DEMO_LOGINS:
        user = get_user_model().objects.get(username=username)
        assert Membership.objects.filter(project=project, user=user, role=role).exists()
        assert user.check_password(password)
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_staff and admin.is_superuser
    assert not get_user_model().objects.get(username="annotator").is_staff
    assert client.login(username="admin", password="demo-admin")
    assert client.get("/admin/").status_code == 200

    # The stored video plays for a member, with seeking (HTTP Range), and not for anyone else.
    media_url = reverse("videos:media", args=[main.pk, "original"])
    client.logout()
    assert client.get(media_url, HTTP_RANGE="bytes=0-99").status_code != 206
    assert client.login(username="annotator", password="demo-annotator")
    response = client.get(media_url, HTTP_RANGE="bytes=0-99")
    assert response.status_code == 206
    assert b"".join(response.streaming_content) == path.read_bytes()[:100]
    assert Membership.objects.filter(project=project).values("role").distinct().count() == len(Role)


def test_load_demo_twice_leaves_one_project_and_reset_rebuilds_it(settings):
    first = services.demo_project_load(force=True)
    assert first.created
    video_names = list(Video.objects.filter(project=first.project).values_list("original", flat=True))
    counts = first.counts

    again = services.demo_project_load(force=True)
    assert not again.created and again.project.pk == first.project.pk
    assert Project.objects.filter(slug="demo").count() == 1
    assert again.counts == counts
    assert get_user_model().objects.filter(username__in=[u for u, _, _ in sb.DEMO_LOGINS]).count() == 4

    # A changed demo password survives a plain re-run (nothing to do) and is restored by --reset.
    user = get_user_model().objects.get(username="examiner")
    user.set_password("something-else")
    user.save()
    services.demo_project_load(force=True)
    user.refresh_from_db()
    assert user.check_password("something-else")

    rebuilt = services.demo_project_load(reset=True, force=True)
    assert rebuilt.created and rebuilt.project.pk != first.project.pk
    assert Project.objects.filter(slug="demo").count() == 1
    assert rebuilt.counts == counts
    assert Video.objects.count() == 3 and QAChain.objects.count() == 8 and MCQ.objects.count() == 6
    # The old project's files went with it.
    for name in video_names:
        assert not (Path(settings.MEDIA_ROOT) / name).exists()
    assert not (Path(settings.MEDIA_ROOT) / f"projects/{first.project.pk}").exists()
    assert get_user_model().objects.filter(username__in=[u for u, _, _ in sb.DEMO_LOGINS]).count() == 4
    user.refresh_from_db()
    assert user.check_password("demo-examiner")


def test_a_failed_load_leaves_no_rows_and_no_files(settings, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(services, "_library_create", broken)
    with pytest.raises(RuntimeError, match="boom"):
        services.demo_project_load(force=True)
    assert not Project.objects.filter(slug="demo").exists()
    assert Video.objects.count() == 0 and QAPair.objects.count() == 0
    stored = [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()]
    assert stored == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the guard is about PostgreSQL databases")
def test_refuses_known_passwords_in_a_production_like_database_unless_forced(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="--force"):
        call_command("load_demo", stdout=_Sink())
    assert not Project.objects.filter(slug="demo").exists()
    assert not get_user_model().objects.filter(username__in=[u for u, _, _ in sb.DEMO_LOGINS]).exists()


class _Sink:
    """A stdout for call_command that keeps what was written."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass
