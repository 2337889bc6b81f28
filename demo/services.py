"""Create (and rebuild) the demo project: generated videos, subtitles, comments, annotations, logins.

Everything is generated on the spot: videos with ffmpeg (videos.synthetic) at exactly known cut
times, so clips follow from the cuts without running scene detection; the text comes from
demo.storyboard. Files are made in a temporary folder first and rows are written in one
transaction; if anything fails, the rows roll back and the files already stored are removed, so a
failed load leaves nothing behind and the next run starts clean.
"""

from __future__ import annotations

import logging
import random
import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.utils import timezone

from annotator.models import (
    MCQ,
    ChainPair,
    ItemStatus,
    MCQVideo,
    Origin,
    QAChain,
    QAPair,
    ReferredMoment,
    Relation,
    RelationDecision,
    ReviewEvent,
    SeedQuestion,
    VideoDescription,
    VideoRole,
)
from llm.models import CallOutcome, LLMCall
from projects.models import Membership, Project, ProjectKind
from projects.refusals import Refused
from reviewer.models import ExamVerdict, QualityScore, ReviewQueue
from videos.clips import clips_rebuild
from videos.curation import video_curate, video_curation_override
from videos.ingest import video_import
from videos.models import (
    Clip,
    Comment,
    CurationStatus,
    SubtitleCue,
    Video,
    VideoStatus,
)
from videos.probe import sha256_file
from videos.subtitle_formats import Cue, to_srt
from videos.subtitles import subtitles_import
from videos.synthetic import SceneSpec, make_scene_video

from . import storyboard as sb

logger = logging.getLogger(__name__)

MAIN_VIDEO_NAME = "kitchen_stream"
SEED = 20250101  # one seed: the same demo every time


class DemoRefused(Refused):
    """The demo would seed known passwords into what looks like a production database."""

    status, code = 400, "demo_refused"


@dataclass
class DemoResult:
    project: Project
    created: bool
    counts: dict[str, int] = field(default_factory=dict)
    logins: tuple[tuple[str, str, str], ...] = sb.DEMO_LOGINS


# --- Public services -------------------------------------------------------------------------


def demo_guard_check(*, force: bool = False) -> None:
    """Refuse known demo passwords in a production-like database (DEBUG off on PostgreSQL)."""
    if force or settings.DEBUG or connection.vendor != "postgresql":
        return
    raise DemoRefused(
        "Refusing to load the demo: DEBUG is off and the database is PostgreSQL, so this looks like a "
        "production database, and the demo creates users with published passwords (admin/demo-admin …). "
        "Run with DJANGO_DEBUG=1 for a local database, or pass --force if you really mean it."
    )


def demo_project_load(*, reset: bool = False, force: bool = False) -> DemoResult:
    """Make sure the demo project and its logins exist; with `reset`, rebuild it from scratch.

    Idempotent: when the project is there, only missing logins and memberships are added.
    """
    demo_guard_check(force=force)
    existing = Project.objects.filter(slug=sb.PROJECT_SLUG).first()
    if existing is not None and reset:
        demo_project_delete(project=existing)
        existing = None
    if existing is not None:
        demo_users_ensure(project=existing)
        return DemoResult(project=existing, created=False, counts=demo_counts(project=existing))

    with tempfile.TemporaryDirectory(prefix="vidqa-demo-") as tmp:
        media = _generate_media(Path(tmp))
        stored: list[str] = []
        try:
            with transaction.atomic():
                project = _build(media=media, stored=stored)
        except BaseException:
            for name in stored:
                default_storage.delete(name)
            raise
    logger.info("demo project loaded: %s", demo_counts(project=project))
    return DemoResult(project=project, created=True, counts=demo_counts(project=project))


def demo_project_delete(*, project: Project) -> None:
    """Delete the demo project, its rows and its files."""
    # MCQs point at videos with PROTECT (a question must not lose its video silently), so they go first.
    prefix = f"projects/{project.pk}"
    with transaction.atomic():
        MCQ.objects.filter(project=project).delete()
        project.delete()
    _storage_delete_tree(prefix)


def demo_users_ensure(*, project: Project, reset_passwords: bool = False) -> list:
    """One login per role, each a member of the project; missing ones are created.

    With `reset_passwords` (whenever the project is built, so also on --reset) every demo login gets
    its documented password back, so the logins printed at start work. Otherwise existing passwords
    are left alone: checking four of them would cost seconds of hashing at every start.
    """
    User = get_user_model()
    users = []
    for username, password, role in sb.DEMO_LOGINS:
        user, created = User.objects.get_or_create(username=username, defaults={"email": f"{username}@demo.invalid"})
        is_admin = role == "admin"
        wanted = {"is_active": True, "is_staff": is_admin, "is_superuser": is_admin}
        changed = [attr for attr, value in wanted.items() if getattr(user, attr) != value]
        for attr in changed:
            setattr(user, attr, wanted[attr])
        if created or reset_passwords:
            user.set_password(password)
            changed.append("password")
        if changed:
            user.save(update_fields=changed)
        Membership.objects.get_or_create(project=project, user=user, role=role)
        users.append(user)
    return users


def demo_counts(*, project: Project) -> dict[str, int]:
    videos = Video.objects.filter(project=project)
    chains = QAChain.objects.filter(project=project)
    return {
        "videos": videos.count(),
        "clips": Clip.objects.filter(video__project=project).count(),
        "subtitle_cues": SubtitleCue.objects.filter(video__project=project).count(),
        "comments": Comment.objects.filter(video__project=project).count(),
        "qa_chains": chains.count(),
        "qa_pairs": QAPair.objects.filter(chain__project=project).count(),
        "chain_pairs": ChainPair.objects.filter(project=project).count(),
        "relations": Relation.objects.filter(chain_pair__project=project).count(),
        "mcqs": MCQ.objects.filter(project=project).count(),
        "seed_questions": SeedQuestion.objects.filter(project=project).count(),
        "video_descriptions": VideoDescription.objects.filter(video__project=project).count(),
        "members": Membership.objects.filter(project=project).count(),
    }


# --- Generation (outside the transaction: ffmpeg takes seconds) -----------------------------------


@dataclass
class _Generated:
    path: Path
    cuts: list[float]
    sha256: str


def _generate_media(tmp: Path) -> dict[str, _Generated]:
    plan = {
        MAIN_VIDEO_NAME: [SceneSpec(s.duration_s, s.pattern) for s in sb.SCENES],
        sb.MVP_REFERENCE.name: [SceneSpec(seconds, pattern) for pattern, seconds in sb.MVP_REFERENCE.scenes],
        sb.MVP_OTHER.name: [SceneSpec(seconds, pattern) for pattern, seconds in sb.MVP_OTHER.scenes],
    }
    out = {}
    for name, scenes in plan.items():
        path = tmp / f"{name}.mp4"
        cuts = make_scene_video(path, scenes, width=sb.WIDTH, height=sb.HEIGHT, fps=sb.FPS, faststart=True)
        out[name] = _Generated(path=path, cuts=cuts, sha256=sha256_file(path))
    return out


# --- Rows -------------------------------------------------------------------------------------


def _build(*, media: dict[str, _Generated], stored: list[str]) -> Project:
    project = Project.objects.create(
        name=sb.PROJECT_NAME,
        slug=sb.PROJECT_SLUG,
        kind=ProjectKind.SVBENCH,
        description=sb.PROJECT_DESCRIPTION,
    )
    logins = demo_users_ensure(project=project, reset_passwords=True)
    users = {role: user for (_, _, role), user in zip(sb.DEMO_LOGINS, logins, strict=True)}

    admin = users["admin"]
    main = _video_add(
        project=project,
        generated=media[MAIN_VIDEO_NAME],
        stored=stored,
        user=admin,
        metadata={
            "title": "Sunday Kitchen Live: romanesco pasta",
            "topic_category": "LC",
            "view_count": 1834,
            "language": "en",
        },
    )
    reference = _video_add(
        project=project,
        generated=media[sb.MVP_REFERENCE.name],
        stored=stored,
        user=admin,
        metadata={"title": sb.MVP_REFERENCE.title, "language": "en"},
    )
    other = _video_add(
        project=project,
        generated=media[sb.MVP_OTHER.name],
        stored=stored,
        user=admin,
        metadata={"title": sb.MVP_OTHER.title, "language": "en"},
    )
    for short in (reference, other):
        # Too short for SVBench chains, so the rules reject them; the admin keeps them for the multi-video MCQ.
        video_curation_override(
            video=short,
            user=admin,
            status=CurationStatus.KEPT,
            note="Kept for the multi-video (MVPBench-style) question.",
        )

    scene_bounds = [tuple(scene) for scene in main.scenes]
    _subtitles_create(video=main, scene_bounds=scene_bounds, stored=stored)
    _comments_create(video=main, scene_bounds=scene_bounds)
    clips = list(main.clips.order_by("index"))
    chains = _chains_create(project=project, clips=clips, users=users)
    _chain_pairs_create(project=project, video=main, chains=chains, users=users)
    _mcqs_create(project=project, video=main, users=users)
    _mvp_mcq_create(project=project, reference=reference, candidates=[other, main], users=users)
    _library_create(project=project, video=main, users=users)
    _queues_create(project=project, users=users)
    return project


def _queues_create(*, project: Project, users: dict) -> None:
    """One queue per stage people pull from, so "Next item" and the dashboards have something to show."""
    for name, stage, kind, role in sb.DEMO_QUEUES:
        queue = ReviewQueue.objects.create(project=project, name=name, stage=stage, item_kind=kind)
        queue.members.set([users[role]])


def _video_add(*, project: Project, generated: _Generated, stored: list[str], user, metadata: dict) -> Video:
    """Import a generated video the way every video comes in, then do what processing would do.

    The scene cuts are known exactly (the video was generated with them), so scene detection is
    skipped; clips and curation come from the project's own rules.
    """
    video = video_import(
        project=project,
        source=generated.path,
        filename=generated.path.name,
        user=user,
        sha256=generated.sha256,
        name=generated.path.stem,
        metadata={**metadata, "generated_by": "demo.load_demo"},
        process=False,
    )
    stored.append(video.original.name)
    edges = [0.0, *generated.cuts, video.duration_s]
    video.scenes = [[start, end] for start, end in zip(edges[:-1], edges[1:], strict=True)]
    video.status = VideoStatus.READY
    video.save(update_fields=["scenes", "status", "updated_at"])
    clips_rebuild(video=video)
    video_curate(video=video)
    video.refresh_from_db()
    return video


def _cue_times(start: float, end: float, lines: int) -> list[tuple[float, float]]:
    """Spread the lines of a scene evenly, leaving a short gap at the cut and between lines."""
    margin = 0.3
    slot = (end - start - 2 * margin) / lines
    return [
        (round(start + margin + k * slot, 3), round(start + margin + (k + 1) * slot - 0.2, 3)) for k in range(lines)
    ]


def _subtitles_create(*, video: Video, scene_bounds: list[tuple[float, float]], stored: list[str]) -> None:
    """Write the narration as an SRT file next to the video and import it like any uploaded subtitle file."""
    cues = [
        Cue(start=a, end=b, text=line)
        for scene, (start, end) in zip(sb.SCENES, scene_bounds, strict=True)
        for (a, b), line in zip(_cue_times(start, end, len(scene.narration)), scene.narration, strict=True)
    ]
    data = to_srt(cues).encode()
    name = default_storage.save(f"projects/{video.project_id}/subtitles/{video.name}.srt", ContentFile(data))
    stored.append(name)
    video.metadata["subtitle_file"] = name
    video.save(update_fields=["metadata"])
    report = subtitles_import(video=video, data=data, filename=f"{video.name}.srt", language="en")
    if report.problems or report.count != len(cues):
        raise RuntimeError(f"the demo's own subtitles did not import cleanly: {report.problems}")


def _comments_create(*, video: Video, scene_bounds: list[tuple[float, float]]) -> None:
    rng = random.Random(SEED)  # noqa: S311 - reproducible demo chat, not a secret
    weights = [
        (end - start) * (sb.BURST_FACTOR if i == sb.BURST_SCENE else 1.0) for i, (start, end) in enumerate(scene_bounds)
    ]
    handles = list(sb.VIEWER_HANDLES)
    # A few regulars write most of the chat.
    handle_weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(handles))]
    rows = []
    for _ in range(sb.COMMENT_COUNT):
        i = rng.choices(range(len(scene_bounds)), weights=weights)[0]
        start, end = scene_bounds[i]
        pool = sb.SCENES[i].comments if rng.random() < 0.6 else sb.GENERIC_COMMENTS
        rows.append(
            Comment(
                video=video,
                # Chat reacts a moment after what it sees.
                time_s=round(min(video.duration_s, rng.uniform(start + 0.5, end + 1.0)), 2),
                text=rng.choice(pool),
                user=rng.choices(handles, weights=handle_weights)[0],
            )
        )
    Comment.objects.bulk_create(rows, batch_size=500)


def _draft_call(*, project: Project, step: str, parsed: dict) -> LLMCall:
    # Provenance for demo drafts, marked as such: no model was called to write them.
    return LLMCall.objects.create(
        project=project,
        step=step,
        model=sb.DESCRIPTION_MODEL,
        parameters={"note": "demo data written by load_demo; no model was called"},
        parsed=parsed,
        outcome=CallOutcome.OK,
    )


def _events(*, item, project: Project, path: list[tuple[str, str, object]]) -> None:
    """Record the workflow transitions that brought a demo item to where it is."""
    for from_status, to_status, actor in path:
        flag = to_status == ItemStatus.FLAGGED
        ReviewEvent.objects.create(
            project=project,
            actor=actor,
            from_status=from_status,
            to_status=to_status,
            reasons=list(sb.DEMO_FLAG_REASONS) if flag else [],
            comment=sb.DEMO_FLAG_COMMENT if flag else "",
            item_version=item.version,
            **ReviewEvent.ref_for(item),
        )


def _status_fields(*, status: str, users: dict, now) -> dict:
    human = status != ItemStatus.DRAFT
    fields = {
        "status": status,
        "origin": Origin.MACHINE,
        "human_edited": human,
        "author": users["annotator"] if human else None,
    }
    if status in (ItemStatus.SUBMITTED, ItemStatus.SCORED, ItemStatus.FLAGGED, ItemStatus.ACCEPTED):
        fields["submitted_at"] = now - timedelta(hours=2)
    if status == ItemStatus.ACCEPTED:
        fields["accepted_at"] = now - timedelta(hours=1)
    if human:
        fields["version"] = 3 if status == ItemStatus.ACCEPTED else 2
    return fields


def _status_path(*, status: str, users: dict) -> list[tuple[str, str, object]]:
    a, e = users["annotator"], users["examiner"]
    steps = {
        ItemStatus.DRAFT: [],
        ItemStatus.ANNOTATING: [(ItemStatus.DRAFT, ItemStatus.ANNOTATING, a)],
        ItemStatus.SUBMITTED: [
            (ItemStatus.DRAFT, ItemStatus.ANNOTATING, a),
            (ItemStatus.ANNOTATING, ItemStatus.SUBMITTED, a),
        ],
        ItemStatus.SCORED: [
            (ItemStatus.DRAFT, ItemStatus.ANNOTATING, a),
            (ItemStatus.ANNOTATING, ItemStatus.SUBMITTED, a),
            (ItemStatus.SUBMITTED, ItemStatus.SCORED, None),
        ],
        ItemStatus.FLAGGED: [
            (ItemStatus.DRAFT, ItemStatus.ANNOTATING, a),
            (ItemStatus.ANNOTATING, ItemStatus.SUBMITTED, a),
            (ItemStatus.SUBMITTED, ItemStatus.SCORED, None),
            (ItemStatus.SCORED, ItemStatus.EXAMINING, e),
            (ItemStatus.EXAMINING, ItemStatus.FLAGGED, e),
        ],
        ItemStatus.ACCEPTED: [
            (ItemStatus.DRAFT, ItemStatus.ANNOTATING, a),
            (ItemStatus.ANNOTATING, ItemStatus.SUBMITTED, a),
            (ItemStatus.SUBMITTED, ItemStatus.SCORED, None),
            (ItemStatus.SCORED, ItemStatus.EXAMINING, e),
            (ItemStatus.EXAMINING, ItemStatus.ACCEPTED, e),
        ],
    }
    return steps[ItemStatus(status)]


def _qa_json(pairs) -> list[dict]:
    return [{"question": qa.question, "answer": qa.answer, "skill": qa.skill} for qa in pairs]


def _chains_create(*, project: Project, clips: list[Clip], users: dict) -> list[QAChain]:
    now = timezone.now()
    chains = []
    for scene, clip, status in zip(sb.SCENES, clips, sb.CHAIN_STATUSES, strict=True):
        drafted = [scene.machine_edits.get(i, qa) for i, qa in enumerate(scene.chain)]
        machine_draft = {"pairs": _qa_json(drafted)}
        chain = QAChain.objects.create(
            project=project,
            clip=clip,
            machine_draft=machine_draft,
            draft_call=_draft_call(project=project, step="qa_chain", parsed=machine_draft),
            **_status_fields(status=status, users=users, now=now),
        )
        # A machine draft is what the machine wrote; human work shows the annotator's edits.
        pairs = drafted if status == ItemStatus.DRAFT else scene.chain
        QAPair.objects.bulk_create(
            QAPair(chain=chain, index=i, question=qa.question, answer=qa.answer, skill=qa.skill)
            for i, qa in enumerate(pairs)
        )
        _events(item=chain, project=project, path=_status_path(status=status, users=users))
        if status in (ItemStatus.SCORED, ItemStatus.FLAGGED, ItemStatus.ACCEPTED):
            _judge_score(project=project, chain=chain)
        if status == ItemStatus.FLAGGED:
            ExamVerdict.objects.create(
                project=project,
                examiner=users["examiner"],
                round_started_at=chain.submitted_at,
                item_version=chain.version,
                passed=False,
                reasons=list(sb.DEMO_FLAG_REASONS),
                checklist={code: code not in sb.DEMO_FLAG_REASONS for code in sb.DEMO_CHAIN_CHECKS},
                comment=sb.DEMO_FLAG_COMMENT,
                **ExamVerdict.ref_for(chain),
            )
        chains.append(chain)
    return chains


def _judge_score(*, project: Project, chain: QAChain) -> None:
    dims = dict(zip(project.taxonomy("judge_dimensions"), (95, 92, 96, 97, 91, 94, 90), strict=True))
    overall = 94
    QualityScore.objects.create(
        project=project,
        item_version=chain.version,
        dimensions=dims,
        overall=overall,
        threshold=project.judge_threshold,
        passed=overall >= project.judge_threshold,
        comments="Accurate and coherent; the turns build on each other.",
        **QualityScore.ref_for(chain),
    )


def _chain_pairs_create(*, project: Project, video: Video, chains: list[QAChain], users: dict) -> None:
    now = timezone.now()
    for before_index, status in enumerate(sb.CHAIN_PAIR_STATUSES):
        specs = [r for r in sb.RELATIONS if r.before_index == before_index]
        candidates = [
            {"from": r.from_pair, "to": r.to_pair, "type": r.relation_type, "rationale": r.rationale} for r in specs
        ]
        chain_pair = ChainPair.objects.create(
            project=project,
            video=video,
            before_index=before_index,
            chain_before=chains[before_index],
            chain_after=chains[before_index + 1],
            machine_draft={"relations": candidates},
            draft_call=_draft_call(project=project, step="relations", parsed={"relations": candidates}),
            **_status_fields(status=status, users=users, now=now),
        )
        before = {p.index: p for p in chains[before_index].pairs.all()}
        after = {p.index: p for p in chains[before_index + 1].pairs.all()}
        for spec in specs:
            _relation_create(
                chain_pair=chain_pair, spec=spec, from_pair=before[spec.from_pair], to_pair=after[spec.to_pair]
            )
        _events(item=chain_pair, project=project, path=_status_path(status=status, users=users))


def _relation_create(*, chain_pair: ChainPair, spec: sb.RelationSpec, from_pair: QAPair, to_pair: QAPair) -> None:
    relation = Relation(
        chain_pair=chain_pair,
        from_pair=from_pair,
        to_pair=to_pair,
        relation_type=spec.relation_type,
        origin=Origin.MACHINE,
        rationale=spec.rationale,
    )
    if spec.rewritten is not None:
        # Accepted: the later QA is rewritten so answering it needs the earlier clip; the relation keeps
        # what it was before, and the pair now reads as rewritten.
        relation.decision = RelationDecision.ACCEPTED
        relation.original_question, relation.original_answer = to_pair.question, to_pair.answer
        relation.rewritten_question, relation.rewritten_answer = spec.rewritten.question, spec.rewritten.answer
        to_pair.question, to_pair.answer, to_pair.skill = (
            spec.rewritten.question,
            spec.rewritten.answer,
            spec.rewritten.skill,
        )
        to_pair.save(update_fields=["question", "answer", "skill"])
    relation.save()


def _mcqs_create(*, project: Project, video: Video, users: dict) -> None:
    levels = {c["code"]: c["level"] for c in project.taxonomy("question_categories")}
    groups = {t["task"]: t["group"] for t in project.taxonomy("tasks")}
    now = timezone.now()
    for spec in (*sb.MCQS, sb.LIVI_MCQ):
        start = spec.question.index(spec.referring_query)
        fields = _status_fields(status=spec.status, users=users, now=now)
        if spec.status != ItemStatus.DRAFT:
            fields["origin"] = Origin.HUMAN
        mcq = MCQ.objects.create(
            project=project,
            question=spec.question,
            referring_query=spec.referring_query,
            referring_start=start,
            referring_end=start + len(spec.referring_query),
            question_wo_referring_query=spec.question_wo_referring_query,
            options=list(spec.options),
            correct_index=spec.correct_index,
            category=spec.category,
            level=levels.get(spec.category, ""),
            task_group=groups.get(spec.category, ""),
            machine_draft={
                "question": spec.question,
                "options": list(spec.options),
                "correct_index": spec.correct_index,
            }
            if spec.status == ItemStatus.DRAFT
            else None,
            **fields,
        )
        MCQVideo.objects.create(mcq=mcq, video=video, role=VideoRole.MAIN, order=0)
        for order, t in enumerate(spec.moments):
            ReferredMoment.objects.create(mcq=mcq, video=video, time_s=t, frame_index=video.frame_index(t), order=order)
        _events(item=mcq, project=project, path=_status_path(status=spec.status, users=users))


def _mvp_mcq_create(*, project: Project, reference: Video, candidates: list[Video], users: dict) -> None:
    mcq = MCQ.objects.create(
        project=project,
        question=sb.MVP_QUESTION,
        options=list(sb.MVP_OPTIONS),
        correct_index=sb.MVP_CORRECT_INDEX,
        status=ItemStatus.ANNOTATING,
        origin=Origin.HUMAN,
        human_edited=True,
        author=users["annotator"],
    )
    MCQVideo.objects.create(mcq=mcq, video=reference, role=VideoRole.REFERENCE, order=0)
    for order, video in enumerate(candidates, start=1):
        MCQVideo.objects.create(mcq=mcq, video=video, role=VideoRole.CANDIDATE, order=order)
    _events(item=mcq, project=project, path=_status_path(status=ItemStatus.ANNOTATING, users=users))


def _library_create(*, project: Project, video: Video, users: dict) -> None:
    for task, text, status, origin in sb.SEED_QUESTIONS:
        SeedQuestion.objects.create(
            project=project,
            task=task,
            text=text,
            status=status,
            origin=origin,
            created_by=users["admin"] if origin == Origin.HUMAN else None,
        )
    for role, text in sb.VIDEO_DESCRIPTIONS:
        VideoDescription.objects.create(
            video=video,
            agent_role=role,
            model=sb.DESCRIPTION_MODEL,
            text=text,
            draft_call=_draft_call(project=project, step="description", parsed={"role": role, "text": text}),
        )


def _storage_delete_tree(prefix: str) -> None:
    """Remove every stored file under `prefix` (the storage API has no recursive delete)."""
    try:
        dirs, files = default_storage.listdir(prefix)
    except FileNotFoundError:
        return
    for sub in dirs:
        _storage_delete_tree(f"{prefix}/{sub}")
    for name in files:
        default_storage.delete(f"{prefix}/{name}")
    try:
        folder = Path(default_storage.path(prefix))
    except NotImplementedError:  # object storages have no folders to tidy
        return
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
