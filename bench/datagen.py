"""Fill a PostgreSQL database to benchmark scale, fast and reproducibly.

Scale 1.0 is the anchor benchmarks put together in one project: 1,353 videos (SVBench), about
11,600 QA chains over as many clips, 50,000 QA pairs, 7,500 relations over 10,000 chain pairs,
6,700 MCQs (LongVideoBench-style, some multi-video, some LiViBench-style), 1.45 M real-time
comments (LiViBench), about 100 subtitle cues per video, and the people, queues, leases, judge
scores and review log of a busy project. `--scale 0.01` makes a proportionally smaller copy.

How it stays fast and small in memory: mid-sized tables go through bulk_create in large batches
(model defaults apply and the ids come back); the big tables (comments, cues) and the log-like ones
whose timestamps we choose (review events, assignments, quality scores) are streamed into COPY, so
1.45 M comments never exist as Python objects. Row-level triggers fire under COPY too, so every
invariant the database enforces is checked for every row. It all runs in one transaction: a failure
leaves nothing behind.

Content is a function of (scale, seed); timestamps are laid out over the 60 days before the run.

    python -m bench.datagen --scale 0.05      # against $DATABASE_URL (PostgreSQL), migrates first
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import random
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from projects.taxonomies import (
    CHAIN_JUDGE_DIMENSIONS,
    L1,
    LIVIBENCH_TASKS,
    LVB_QUESTION_CATEGORIES,
    LVB_TOPIC_CATEGORIES,
    RELATION_TYPES,
    SVBENCH_SKILLS,
)

DEFAULT_SLUG = "bench"
PASSWORD = "bench"  # noqa: S105 - throw-away benchmark logins on a loopback database
HISTORY_DAYS = 60
BATCH = 5000


@dataclass(frozen=True)
class Targets:
    """Row counts at scale 1.0 (the issue's numbers); `scaled` keeps them proportional."""

    videos: int = 1_353
    chains: int = 11_600
    qa_pairs: int = 50_000
    relations: int = 7_500
    mcqs: int = 6_700
    comments: int = 1_450_000
    cues_per_video: int = 100
    annotators: int = 40
    examiners: int = 10
    revisers: int = 10

    def scaled(self, factor: float) -> Targets:
        if not (isinstance(factor, int | float) and math.isfinite(factor) and factor > 0):
            raise ValueError(f"scale must be a number above 0, not {factor!r}")
        videos = max(2, round(self.videos * factor))
        # Every video has at least two clips, so every video has a chain pair to relate.
        chains = max(2 * videos, round(self.chains * factor))
        qa_pairs = max(chains, round(self.qa_pairs * factor))
        return replace(
            self,
            videos=videos,
            chains=chains,
            qa_pairs=qa_pairs,
            relations=min(chains - videos, max(1, round(self.relations * factor))),
            mcqs=max(1, round(self.mcqs * factor)),
            comments=max(videos, round(self.comments * factor)),
            annotators=max(2, round(self.annotators * factor)),
            examiners=max(2, round(self.examiners * factor)),
            revisers=max(1, round(self.revisers * factor)),
        )


@dataclass
class Dataset:
    """What was generated: later figures find their project, people and sizes here."""

    project_id: int
    slug: str
    scale: float
    seed: int
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)
    # Where the time went, stage by stage ("commit" runs the foreign-key checks still deferred).
    stage_seconds: dict[str, float] = field(default_factory=dict)
    admin_username: str = ""
    password: str = PASSWORD


class DatagenError(Exception):
    """Bad input or an unsuitable database, with a message fit for the command line."""


def generate(*, scale: float = 1.0, seed: int = 20250101, slug: str = DEFAULT_SLUG) -> Dataset:
    """Generate one benchmark project into the default database and return what was made."""
    from django.db import connection, transaction

    from projects.models import Project

    if connection.vendor != "postgresql":
        raise DatagenError(f"bench.datagen needs PostgreSQL (it streams rows with COPY), not {connection.vendor}")
    if Project.objects.filter(slug=slug).exists():
        raise DatagenError(f"a project with slug {slug!r} exists in this database already; choose another (--slug)")
    targets = Targets().scaled(scale)
    started = time.perf_counter()
    with transaction.atomic():
        gen = _Generator(targets=targets, seed=seed, slug=slug)
        gen.run()
        mark = time.perf_counter()
    gen.stage_seconds["commit"] = round(time.perf_counter() - mark, 2)
    mark = time.perf_counter()
    # Planner statistics, so the figures that follow see the database as a long-lived one would.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    gen.stage_seconds["analyze"] = round(time.perf_counter() - mark, 2)
    seconds = time.perf_counter() - started
    return Dataset(
        project_id=gen.project.id,
        slug=slug,
        scale=scale,
        seed=seed,
        seconds=seconds,
        counts=gen.counts,
        stage_seconds=gen.stage_seconds,
        admin_username=gen.admin.username,
    )


# --- Text -------------------------------------------------------------------------------------
SUBJECTS = [
    "the man in the red jacket",
    "the woman holding a cup",
    "the child on the bench",
    "the brown dog",
    "the cyclist",
    "the chef",
    "the host",
    "the player in white",
    "the driver",
    "the streamer",
    "the girl with the backpack",
    "the old man",
    "the waiter",
    "the guitarist",
    "the referee",
]
ACTIONS = [
    "pick up the box",
    "open the door",
    "turn left at the corner",
    "start cooking",
    "wave at the camera",
    "sit down",
    "put the phone away",
    "cross the street",
    "pour the water",
    "read the sign",
    "hand over the keys",
    "climb the stairs",
    "switch on the lamp",
    "paint the wall",
    "count the coins",
]
PLACES = [
    "in the kitchen",
    "on the street",
    "near the window",
    "on the stage",
    "in the park",
    "at the counter",
    "in the car",
    "by the river",
    "in the classroom",
    "on the balcony",
    "at the market",
    "in the studio",
]
REASONS = [
    "because the others are waiting",
    "to get ready for the next step",
    "since it started to rain",
    "so that the guests can see it",
    "because the light changed",
    "to avoid the crowd",
    "as the timer went off",
    "to show the audience how it works",
]
QUESTION_FORMS = {
    "II": "Why does {s} {a} {p}?",
    "PA": "What could {s} do next after they {a}?",
    "CR": "What would happen if {s} did not {a}?",
    "STS": "Where will {s} be after they {a} {p}?",
    "RI": "How is {s} related to the person beside them {p}?",
    "CST": "How does the mood of {s} change when they {a}?",
    "CTA": "Does {s} {a} faster than earlier in the video?",
    "CSI": "Why is it sensible for {s} to {a} {p}?",
    "ECA": "What happens right after {s} begins to {a} {p}?",
}
OBJECTS = [
    "a red umbrella",
    "a wooden chair",
    "a blue bicycle",
    "a glass jar",
    "a paper map",
    "a black hat",
    "a green bottle",
    "a white cat",
    "a laptop",
    "a clock",
    "a bunch of flowers",
    "a yellow taxi",
]
COLOURS = ["red", "green", "blue", "white", "black", "yellow", "brown", "grey", "orange", "purple"]
COMMENT_PHRASES = [
    "lol",
    "666",
    "wow",
    "nice shot",
    "what is that?",
    "hello from Berlin",
    "first time here",
    "so cute",
    "again!",
    "I love this part",
    "who else is watching in 2025",
    "that was close",
    "hahaha",
    "gg",
    "can you show it again",
    "the music is great",
    "no way",
    "ok this is amazing",
    "same here",
    "???",
    "太强了",
    "哈哈哈哈",
    "来了来了",
    "前方高能",
    "good morning",
    "turn up the volume",
    "is this live?",
    "respect",
    "legend",
    "this streamer is the best",
    "watching from Brazil",
    "W",
    "L",
    "clip it",
]
COMMENT_SUFFIXES = ["", "", "", "!", "!!", " haha", " +1", " 😂", " 🔥", " ...", " again"]
CUE_FORMS = [
    "Now {s} is going to {a}.",
    "Look, {s} wants to {a} {p}.",
    "Let's see whether {s} can {a}.",
    "Welcome back, everyone.",
    "Okay, here we go.",
    "As you can see, it is getting late {p}.",
    "I think {s} will {a} {r}.",
    "Thanks for watching so far.",
]
FLAG_REASONS = [
    "wrong category",
    "answer not supported by the video",
    "question answerable without video",
    "referred moment missing",
    "distractor too easy",
    "pronoun ambiguity",
    "grammar",
]

# Status of reviewable items: a busy project has most accepted and the rest spread over the stages.
STATUS_WEIGHTS = {
    "draft": 8,
    "annotating": 15,
    "submitted": 4,
    "scored": 4,
    "examining": 12,
    "flagged": 4,
    "revising": 8,
    "accepted": 45,
}
FORWARD = ["draft", "annotating", "submitted", "scored", "examining", "accepted"]
# Queues whose items are seen by two people at that stage.
OVERLAP_TWO = {("mcq", "examining"): 2}
# Minutes a person holds an item at each stage (uniform between the two), and how often a lease lapses
# (the person walked away) before someone completes the stage.
WORK_MINUTES = {"annotating": (5, 40), "examining": (1, 12), "revising": (3, 25)}
LAPSED_SHARE = 0.08


def _copy_text(value) -> str:
    """One value in PostgreSQL's COPY text format."""
    if value is None:
        return r"\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False)
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class _RowReader:
    """A file-like view of an iterator of COPY text (whole rows, one or many per piece), so rows
    stream into the server instead of piling up in memory."""

    def __init__(self, pieces: Iterator[str]):
        self._pieces = pieces
        self._buffer = ""

    def read(self, size: int = -1) -> str:
        parts, have = [self._buffer], len(self._buffer)
        for piece in self._pieces:
            parts.append(piece)
            have += len(piece)
            if 0 <= size <= have:
                break
        data = "".join(parts)
        if size < 0:
            self._buffer = ""
            return data
        self._buffer = data[size:]
        return data[:size]

    def readline(self, size: int = -1) -> str:
        return self.read(size)


def copy_rows(model, fields: list[str], rows: Iterable[str], *, now: datetime) -> None:
    """COPY `rows` into `model`'s table: pieces of COPY text, each one or more whole rows ending in "\\n".

    `fields` name the model fields the lines carry, in order (a foreign key by its field name, the
    value being the id). Any other field gets its model default, so a field added later does not
    break the generator as long as it has a default.
    """
    from django.db import connection

    opts = model._meta
    given = [opts.get_field(name) for name in fields]
    given_names = {f.name for f in given}
    extra_columns, extra_values = [], []
    for f in opts.concrete_fields:
        if f.primary_key or f.name in given_names:
            continue
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            value = now
        elif f.has_default():
            value = f.get_default()
        elif f.null:
            value = None
        elif f.has_db_default():
            continue
        else:
            raise DatagenError(f"bench.datagen does not fill {model.__name__}.{f.name}, which has no default")
        extra_columns.append(f.column)
        extra_values.append(_copy_text(value))
    if extra_columns:
        # A raw newline only ever ends a row: newlines inside values are escaped by _copy_text.
        suffix = "\t" + "\t".join(extra_values) + "\n"
        rows = (piece.replace("\n", suffix) for piece in rows)
    columns = ", ".join(f'"{c}"' for c in [f.column for f in given] + extra_columns)
    # copy_expert is psycopg2's own: wrap its errors in Django's, as for every other query.
    with _loading(model), connection.cursor() as cursor, connection.wrap_database_errors:
        cursor.copy_expert(f'COPY "{opts.db_table}" ({columns}) FROM STDIN', _RowReader(iter(rows)), size=1 << 20)


@contextmanager
def _loading(model) -> Iterator[None]:
    """Load `model`'s table the way PostgreSQL's manual advises for bulk data: without its foreign keys
    and secondary indexes, which are put back afterwards (re-adding a key checks every row at once,
    far faster than a deferred check per row at commit). Names and definitions stay exactly as they were."""
    from django.db import connection

    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = %s::regclass AND contype = 'f' ORDER BY conname",
            [table],
        )
        keys = cursor.fetchall()
        cursor.execute(
            "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index"
            " WHERE indrelid = %s::regclass AND NOT indisprimary AND NOT indisunique"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = indexrelid)"
            " ORDER BY 1",
            [table],
        )
        indexes = cursor.fetchall()
        # A table with deferred checks still queued cannot be altered: run the queued checks now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")  # index builds sort in memory
        for name, _ in keys:
            cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
    yield
    with connection.cursor() as cursor:
        for _, definition in indexes:
            cursor.execute(definition)
        for name, definition in keys:
            cursor.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def _spread(total: int, bins: int, rng: random.Random, *, base: int, cap: int | None = None) -> list[int]:
    """`total` split over `bins`, each at least `base` (and at most `cap`), the rest at random."""
    counts = [base] * bins
    for _ in range(total - base * bins):
        i = rng.randrange(bins)
        while cap is not None and counts[i] >= cap:
            i = rng.randrange(bins)
        counts[i] += 1
    return counts


@dataclass
class _ExamRound:
    """One examination of an item: from its latest submit, at one version, and the verdicts given."""

    start: datetime
    version: int
    verdicts: list[tuple] = field(default_factory=list)  # (examiner, passed, when, seconds, reasons)


@dataclass
class _Timeline:
    """The workflow history of one item: (from, to, actor id, time, version) per transition."""

    steps: list[tuple[str, str, int | None, datetime, int]]
    author_id: int | None
    examiner_id: int | None
    reviser_id: int | None


class _Generator:
    def __init__(self, *, targets: Targets, seed: int, slug: str):
        from django.utils import timezone

        self.t = targets
        self.seed = seed
        self.slug = slug
        self.rng = random.Random(seed)
        self.now = timezone.now().replace(microsecond=0)
        self.t0 = self.now - timedelta(days=HISTORY_DAYS)
        self.counts: dict[str, int] = {}
        self.stage_seconds: dict[str, float] = {}

    def run(self) -> None:
        for stage in (
            self._project_and_people,
            self._videos,
            self._clips_and_chains,
            self._chain_pairs_and_relations,
            self._mcqs,
            self._cues,
            self._comments,
            self._review_log,
            self._backdate,
        ):
            started = time.perf_counter()
            stage()
            self.stage_seconds[stage.__name__.lstrip("_")] = round(time.perf_counter() - started, 2)

    # People --------------------------------------------------------------------------------
    def _project_and_people(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.hashers import make_password

        from annotator.models import ItemKind
        from projects.models import Membership, Project, ProjectKind, Role
        from reviewer.models import ReviewQueue

        User = get_user_model()
        self.project = Project.objects.create(
            name=f"Benchmark scale ({self.slug})",
            slug=self.slug,
            kind=ProjectKind.SVBENCH,
            description="Generated by bench.datagen for benchmarks; content is synthetic.",
        )
        hashed = make_password(PASSWORD)  # once: hashing is deliberately slow
        people = [
            ("admin", 1, Role.ADMIN),
            ("annotator", self.t.annotators, Role.ANNOTATOR),
            ("examiner", self.t.examiners, Role.EXAMINER),
            ("reviser", self.t.revisers, Role.REVISER),
        ]
        users = [
            User(
                username=f"{self.slug}-{label}-{i:02d}",
                email=f"{self.slug}-{label}-{i:02d}@example.org",
                password=hashed,
            )
            for label, n, _ in people
            for i in range(n)
        ]
        User.objects.bulk_create(users, batch_size=BATCH)
        by_role: dict[str, list] = {}
        it = iter(users)
        for _label, n, role in people:
            by_role[role] = [next(it) for _ in range(n)]
        self.admin = by_role[Role.ADMIN][0]
        self.annotators = [u.id for u in by_role[Role.ANNOTATOR]]
        self.examiners = [u.id for u in by_role[Role.EXAMINER]]
        self.revisers = [u.id for u in by_role[Role.REVISER]]
        memberships = [Membership(project=self.project, user=u, role=role) for role, us in by_role.items() for u in us]
        # People hold several roles: the admin annotates too, an examiner also revises.
        memberships.append(Membership(project=self.project, user=self.admin, role=Role.ANNOTATOR))
        memberships.append(Membership(project=self.project, user=by_role[Role.EXAMINER][0], role=Role.REVISER))
        Membership.objects.bulk_create(memberships, batch_size=BATCH)
        self.counts["users"] = len(users)
        self.counts["memberships"] = len(memberships)

        queue_specs = [
            ("Chains: annotate", "annotating", ItemKind.QA_CHAIN, self.annotators),
            ("Chains: examine", "examining", ItemKind.QA_CHAIN, self.examiners),
            ("Chains: revise", "revising", ItemKind.QA_CHAIN, self.revisers),
            ("Relations: annotate", "annotating", ItemKind.CHAIN_PAIR, self.annotators),
            ("Relations: examine", "examining", ItemKind.CHAIN_PAIR, self.examiners),
            ("MCQs: annotate", "annotating", ItemKind.MCQ, self.annotators),
            ("MCQs: examine", "examining", ItemKind.MCQ, self.examiners),
            ("MCQs: revise", "revising", ItemKind.MCQ, self.revisers),
        ]
        self.queues: dict[tuple[str, str], int] = {}
        self.overlap: dict[tuple[str, str], int] = {}
        for priority, (name, stage, kind, members) in enumerate(queue_specs):
            # MCQs are examined by two people each (LongVideoBench-style double checking): agreement is measured there.
            overlap = OVERLAP_TWO.get((str(kind), stage), 1)
            queue = ReviewQueue.objects.create(
                project=self.project,
                name=name,
                stage=stage,
                item_kind=kind,
                priority=len(queue_specs) - priority,
                overlap=overlap,
            )
            self.overlap[(str(kind), stage)] = overlap
            queue.members.set(members)
            self.queues[(str(kind), stage)] = queue.id
        self.counts["review_queues"] = len(queue_specs)

    # Videos and clips --------------------------------------------------------------------------
    def _videos(self) -> None:
        from videos.models import CurationStatus, Video, VideoStatus

        rng = self.rng
        self.chains_per_video = _spread(self.t.chains, self.t.videos, rng, base=min(5, self.t.chains // self.t.videos))
        videos, self.scenes = [], []
        topics = [t["code"] for t in LVB_TOPIC_CATEGORIES]
        for i, n_clips in enumerate(self.chains_per_video):
            lengths = [round(rng.uniform(5.0, 30.0), 3) for _ in range(n_clips)]
            bounds, start = [], 0.0
            for length in lengths:
                bounds.append((round(start, 3), round(start + length, 3)))
                start += length
            duration = round(start + rng.uniform(0.5, 5.0), 3)
            self.scenes.append(bounds)
            fps = rng.choice([24.0, 25.0, 29.97, 30.0])
            width, height = rng.choice([(1280, 720), (1920, 1080), (854, 480), (720, 1280)])
            name = f"bench_{i:05d}"
            videos.append(
                Video(
                    project=self.project,
                    name=name,
                    original=f"projects/{self.project.id}/videos/{name}.mp4",
                    original_filename=f"{name}.mp4",
                    sha256=hashlib.sha256(f"{self.seed}:{name}".encode()).hexdigest(),
                    size_bytes=int(duration * rng.uniform(150_000, 600_000)),
                    duration_s=duration,
                    fps=fps,
                    frame_count=int(duration * fps),
                    width=width,
                    height=height,
                    container="mov,mp4,m4a,3gp,3g2,mj2",
                    video_codec="h264",
                    audio_codec="aac",
                    has_audio=True,
                    status=VideoStatus.READY,
                    curation_status=CurationStatus.REJECTED if rng.random() < 0.03 else CurationStatus.KEPT,
                    complexity_score=rng.randint(3, 10),
                    topic_category=rng.choice(topics),
                    view_count=int(rng.paretovariate(1.2) * 1000),
                    language="en",
                    created_by_id=self.admin.id,
                )
            )
        Video.objects.bulk_create(videos, batch_size=BATCH)
        self.videos = videos
        self.counts["videos"] = len(videos)

    def _clips_and_chains(self) -> None:
        from annotator.models import QAChain, QAPair
        from videos.models import Clip

        rng = self.rng
        pad = 0.5
        clips = []
        for video, bounds in zip(self.videos, self.scenes, strict=True):
            for index, (start, end) in enumerate(bounds):
                clips.append(
                    Clip(
                        video=video,
                        index=index,
                        scene_start_s=start,
                        scene_end_s=end,
                        start_s=round(max(0.0, start - pad), 3),
                        end_s=round(min(video.duration_s, end + pad), 3),
                    )
                )
        Clip.objects.bulk_create(clips, batch_size=BATCH)

        n_chains = len(clips)
        per_chain = _spread(
            self.t.qa_pairs,
            n_chains,
            rng,
            base=min(3, self.t.qa_pairs // n_chains),
            cap=max(6, math.ceil(self.t.qa_pairs / n_chains)),
        )
        skills = [s["code"] for s in SVBENCH_SKILLS]
        chains, pairs, self.pairs_of = [], [], []
        for clip, n in zip(clips, per_chain, strict=True):
            chain = QAChain(project=self.project, clip=clip)
            self._set_workflow(chain, "qa_chain", scored=True)
            subject = rng.choice(SUBJECTS)
            own, draft = [], []
            for index in range(n):
                skill = rng.choice(skills)
                # Later turns use a pronoun, as SVBench asks, instead of repeating the name.
                who = subject if index == 0 else "they"
                action, place = rng.choice(ACTIONS), rng.choice(PLACES)
                question = QUESTION_FORMS[skill].format(s=who, a=action, p=place)
                answer = f"{_cap(who)} {action} {place} {rng.choice(REASONS)}."
                own.append(QAPair(chain=chain, index=index, question=question, answer=answer, skill=skill))
                draft.append({"question": question.replace(" the ", " a ", 1), "answer": answer, "skill": skill})
            if chain.human_edited:
                # What the machine first proposed, for the examiner's diff.
                chain.machine_draft = {"pairs": draft}
            chains.append(chain)
            pairs.extend(own)
            self.pairs_of.append(own)
        QAChain.objects.bulk_create(chains, batch_size=BATCH)
        QAPair.objects.bulk_create(pairs, batch_size=BATCH)
        self.clips, self.chains = clips, chains
        self.counts["clips"] = len(clips)
        self.counts["qa_chains"] = len(chains)
        self.counts["qa_pairs"] = len(pairs)

    def _chain_pairs_and_relations(self) -> None:
        from annotator.models import ChainPair, Relation, RelationDecision

        rng = self.rng
        chain_pairs, pair_chains = [], []
        position = 0
        for video, n in zip(self.videos, self.chains_per_video, strict=True):
            for i in range(n - 1):
                cp = ChainPair(
                    project=self.project,
                    video=video,
                    before_index=i,
                    chain_before=self.chains[position + i],
                    chain_after=self.chains[position + i + 1],
                )
                self._set_workflow(cp, "chain_pair", scored=False)
                chain_pairs.append(cp)
                pair_chains.append(position + i)
            position += n
        ChainPair.objects.bulk_create(chain_pairs, batch_size=BATCH)
        self.chain_pairs = chain_pairs

        types = [r["code"] for r in RELATION_TYPES]
        relations, seen = [], set()
        while len(relations) < self.t.relations:
            k = rng.randrange(len(chain_pairs))
            before, after = self.pairs_of[pair_chains[k]], self.pairs_of[pair_chains[k] + 1]
            a, b = rng.randrange(len(before)), rng.randrange(len(after))
            if (k, a, b) in seen:
                continue
            seen.add((k, a, b))
            cp, from_pair, to_pair = chain_pairs[k], before[a], after[b]
            if cp.status == "accepted":
                decision = RelationDecision.ACCEPTED if rng.random() < 0.8 else RelationDecision.REJECTED
            else:
                decision = RelationDecision.CANDIDATE
            rewritten = decision == RelationDecision.ACCEPTED
            later = to_pair.question
            rewrite = f"Compared with the earlier scene, {later[0].lower()}{later[1:]}" if rewritten else ""
            relations.append(
                Relation(
                    chain_pair=cp,
                    from_pair=from_pair,
                    to_pair=to_pair,
                    relation_type=rng.choice(types),
                    origin="machine" if rng.random() < 0.85 else "human",
                    decision=decision,
                    rationale=f"Both turns concern {rng.choice(SUBJECTS)}.",
                    original_question=to_pair.question,
                    original_answer=to_pair.answer,
                    rewritten_question=rewrite,
                    rewritten_answer=to_pair.answer if rewritten else "",
                )
            )
        Relation.objects.bulk_create(relations, batch_size=BATCH)
        self.counts["chain_pairs"] = len(chain_pairs)
        self.counts["relations"] = len(relations)

    def _mcqs(self) -> None:
        from annotator.models import MCQ, MCQVideo, ReferredMoment, VideoRole

        rng = self.rng
        categories = LVB_QUESTION_CATEGORIES
        # Task names that do not fit MCQ.category are left out (none, at 60 characters).
        room = MCQ._meta.get_field("category").max_length
        self.livibench_tasks = [t for t in LIVIBENCH_TASKS if len(t["task"]) <= room]
        mcqs, links, moments, moment_videos = [], [], [], []
        for _ in range(self.t.mcqs):
            video = rng.choice(self.videos)
            style = rng.random()
            subject, action, place = rng.choice(SUBJECTS), rng.choice(ACTIONS), rng.choice(PLACES)
            if style < 0.85:  # LongVideoBench: referring query, referred moments
                cat = rng.choice(categories)
                query = f"When {subject} begins to {action} {place}"
                rest = rng.choice(
                    [
                        "what colour is the object on the table?",
                        "which object appears next?",
                        "what does the person beside them hold?",
                        "what happens right after that?",
                    ]
                )
                options = rng.sample(COLOURS if "colour" in rest else OBJECTS, rng.choice([4, 5]))
                mcq = MCQ(
                    project=self.project,
                    question=f"{query}, {rest}",
                    referring_query=query,
                    referring_start=0,
                    referring_end=len(query),
                    question_wo_referring_query=_cap(rest),
                    options=options,
                    correct_index=rng.randrange(len(options)),
                    category=cat["code"],
                    level=cat["level"],
                )
                others = []
                n_moments = 1 if cat["level"] == L1 else rng.randint(2, 3)
                for order, t in enumerate(sorted(rng.uniform(0, video.duration_s) for _ in range(n_moments))):
                    moment_videos.append((mcq, video, round(t, 3), order))
            elif style < 0.95:  # MVPBench: a reference video and ordered candidates; answer is a label
                others = [v for v in rng.sample(self.videos, min(4, len(self.videos))) if v is not video][:3]
                labels = [str(i + 1) for i in range(len(others))]
                mcq = MCQ(
                    project=self.project,
                    question="Which candidate video continues the reference video? "
                    + " ".join("<video>" for _ in range(len(others) + 1)),
                    options=labels,
                    correct_index=rng.randrange(len(labels)),
                    category="continuation",
                    task_group="temporal",
                )
            else:  # LiViBench: a task of a task group, no referring query
                task = rng.choice(self.livibench_tasks)
                others = []
                options = rng.sample(OBJECTS, 4)
                mcq = MCQ(
                    project=self.project,
                    question=f"In this livestream, which object does {subject} use most?",
                    options=options,
                    correct_index=rng.randrange(4),
                    category=task["task"],
                    task_group=task["group"],
                )
            self._set_workflow(mcq, "mcq", scored=False)
            mcqs.append(mcq)
            role = VideoRole.REFERENCE if others else VideoRole.MAIN
            links.append(MCQVideo(mcq=mcq, video=video, role=role, order=0))
            links.extend(
                MCQVideo(mcq=mcq, video=v, role=VideoRole.CANDIDATE, order=i) for i, v in enumerate(others, start=1)
            )
        MCQ.objects.bulk_create(mcqs, batch_size=BATCH)
        for mcq, video, t, order in moment_videos:
            frame = min(int(round(t * video.fps)), video.frame_count - 1)
            moments.append(ReferredMoment(mcq=mcq, video=video, time_s=t, frame_index=frame, order=order))
        MCQVideo.objects.bulk_create(links, batch_size=BATCH)
        ReferredMoment.objects.bulk_create(moments, batch_size=BATCH)
        self.mcqs = mcqs
        self.counts["mcqs"] = len(mcqs)
        self.counts["mcq_videos"] = len(links)
        self.counts["referred_moments"] = len(moments)

    # Big tables, streamed ------------------------------------------------------------------------
    def _cues(self) -> None:
        from videos.models import SubtitleCue

        rng = self.rng
        total = 0
        texts = [
            _copy_text(
                _cap(
                    rng.choice(CUE_FORMS).format(
                        s=rng.choice(SUBJECTS), a=rng.choice(ACTIONS), p=rng.choice(PLACES), r=rng.choice(REASONS)
                    )
                )
            )
            for _ in range(5000)
        ]

        def rows() -> Iterator[str]:
            nonlocal total
            uniform = rng.uniform
            for video in self.videos:
                n = max(1, round(self.t.cues_per_video * uniform(0.9, 1.1)))
                total += n
                slot = video.duration_s / n
                lines = []
                # Cues in time order, each inside its own slot, so no two overlap.
                for i, text in enumerate(rng.choices(texts, k=n)):
                    start = i * slot + uniform(0, slot * 0.1)
                    end = min(video.duration_s, start + slot * uniform(0.6, 0.9))
                    lines.append(f"{video.id}\t{start:.3f}\t{end:.3f}\t{text}\tsrt\ten\n")
                yield "".join(lines)

        copy_rows(SubtitleCue, ["video", "start_s", "end_s", "text", "source", "language"], rows(), now=self.now)
        self.counts["subtitle_cues"] = total

    def _comments(self) -> None:
        from videos.models import Comment

        rng = self.rng
        # Livestream popularity is heavy-tailed: a few videos carry most of the comments.
        weights = [rng.paretovariate(1.5) for _ in self.videos]
        total_weight = sum(weights)
        per_video = [int(self.t.comments * w / total_weight) for w in weights]
        for i in rng.sample(range(len(per_video)), self.t.comments - sum(per_video)):
            per_video[i] += 1
        texts = [_copy_text(p + s) for p in COMMENT_PHRASES for s in COMMENT_SUFFIXES]
        users = [f"viewer{n}" for n in range(max(100, self.t.comments // 20))] + [""] * 10
        metadata = [r"\N"] * 9 + [_copy_text({"color": c, "mode": "scroll"}) for c in ("#ffffff", "#ffcc00", "#66ccff")]

        def rows() -> Iterator[str]:
            # One piece per video, in time order, as an import would write them.
            random_, choices = rng.random, rng.choices
            for video, n in zip(self.videos, per_video, strict=True):
                vid, duration = video.id, video.duration_s
                times = sorted(random_() * duration for _ in range(n))
                yield "".join(
                    f"{vid}\t{t:.3f}\t{text}\t{user}\t{meta}\n"
                    for t, text, user, meta in zip(
                        times, choices(texts, k=n), choices(users, k=n), choices(metadata, k=n), strict=True
                    )
                )

        copy_rows(Comment, ["video", "time_s", "text", "user", "metadata"], rows(), now=self.now)
        self.counts["comments"] = self.t.comments

    # Workflow -------------------------------------------------------------------------------
    def _set_workflow(self, item, kind: str, *, scored: bool) -> None:
        """Choose the item's status and lay out the transitions that led there."""
        rng = self.rng
        status = rng.choices(list(STATUS_WEIGHTS), weights=list(STATUS_WEIGHTS.values()))[0]
        if status == "scored" and not scored:
            status = "submitted"
        forward = [s for s in FORWARD if scored or s != "scored"]
        if status in forward and not (status == "accepted" and rng.random() < 0.2):
            path = forward[: forward.index(status) + 1]
        else:  # through one round of flag and revision
            to_exam = forward[: forward.index("examining") + 1]
            tail = {"flagged": ["flagged"], "revising": ["flagged", "revising"]}.get(
                status, ["flagged", "revising"] + forward[forward.index("submitted") :]
            )
            path = to_exam + tail
            status = path[-1]
        author = rng.choice(self.annotators) if len(path) > 1 else None
        examiner = rng.choice([e for e in self.examiners if e != author])
        reviser = rng.choice([r for r in self.revisers if r not in (author, examiner)] or self.revisers)
        actor_for = {
            "draft": None,
            "annotating": author,
            "submitted": author,
            "scored": None,
            "examining": None,
            "flagged": examiner,
            "revising": reviser,
            "accepted": examiner,
        }
        when = self.t0 + timedelta(seconds=rng.uniform(0, 0.8 * HISTORY_DAYS * 86400))
        version, steps, previous = 1, [], ""
        for to in path:
            if to in ("submitted", "revising") and previous:
                version += rng.randint(1, 3)  # edits saved before handing on
            steps.append((previous, to, actor_for[to], when, version))
            previous = to
            when = min(when + timedelta(seconds=rng.uniform(60, 8 * 3600)), self.now - timedelta(minutes=1))
        item.status = status
        item.version = version
        item.author_id = author
        item.human_edited = author is not None and len(path) > 2
        submitted = [s[3] for s in steps if s[1] == "submitted"]
        item.submitted_at = submitted[-1] if submitted else None
        item.accepted_at = steps[-1][3] if status == "accepted" else None
        item._timeline = _Timeline(steps, author, examiner, reviser)
        item._kind = kind

    def _review_log(self) -> None:
        from annotator.models import ReviewEvent
        from reviewer.models import Assignment, ExamVerdict, QualityScore

        rng = self.rng
        items = [*self.chains, *self.chain_pairs, *self.mcqs]
        ref_fields = ["item_kind", "qa_chain", "chain_pair", "mcq"]
        lease = timedelta(minutes=30)
        events = scores = assignments = verdicts = 0

        def ref(item) -> str:
            ids = [r"\N", r"\N", r"\N"]
            ids[["qa_chain", "chain_pair", "mcq"].index(item._kind)] = str(item.id)
            return item._kind + "\t" + "\t".join(ids)

        def event_lines() -> Iterator[str]:
            nonlocal events
            for item in items:
                r = ref(item)
                for previous, to, actor, when, version in item._timeline.steps:
                    reasons = rng.sample(FLAG_REASONS, rng.randint(1, 2)) if to == "flagged" else []
                    comment = "Please fix: " + "; ".join(reasons) if reasons else ""
                    events += 1
                    yield (
                        f"{r}\t{self.project.id}\t{_copy_text(actor)}\t{previous}\t{to}\t"
                        f"{_copy_text(reasons)}\t{_copy_text(comment)}\t{version}\t{when.isoformat()}\n"
                    )

        copy_rows(
            ReviewEvent,
            [
                *ref_fields,
                "project",
                "actor",
                "from_status",
                "to_status",
                "reasons",
                "comment",
                "item_version",
                "created_at",
            ],
            event_lines(),
            now=self.now,
        )

        def score_lines() -> Iterator[str]:
            nonlocal scores
            for item in self.chains:
                steps = item._timeline.steps
                for k, (_prev, to, _actor, when, version) in enumerate(steps):
                    if to != "scored":
                        continue
                    # A chain that moved on to the examiner passed the judge; one still waiting may not have.
                    low = 90 if k + 1 < len(steps) else 70
                    dims = {d: rng.randint(low, 100) for d in CHAIN_JUDGE_DIMENSIONS}
                    overall = round(sum(dims.values()) / len(dims))
                    scores += 1
                    yield (
                        f"{ref(item)}\t{self.project.id}\t{version}\t{_copy_text(dims)}\t{overall}\t90\t"
                        f"{_copy_text(overall >= 90)}\t{'' if overall >= 90 else 'Answers drift from the clip.'}\t"
                        f"{when.isoformat()}\n"
                    )

        copy_rows(
            QualityScore,
            [
                *ref_fields,
                "project",
                "item_version",
                "dimensions",
                "overall",
                "threshold",
                "passed",
                "comments",
                "created_at",
            ],
            score_lines(),
            now=self.now,
        )

        # A generator of its own for what was added later (work time, second examiners, verdicts, lapsed
        # leases), so the content above stays what it was for the same seed.
        extra = random.Random(self.seed * 31 + 7)
        rounds = self._exam_rounds(items, extra)
        lapse_pool = {
            "annotating": self.annotators,
            "examining": self.examiners,
            "revising": self.revisers,
        }

        def work(stage: str, start: datetime, end: datetime) -> datetime:
            """When the lease that ended at `end` began: some minutes of work, never before the stage did."""
            low, high = WORK_MINUTES[stage]
            return max(start, end - timedelta(minutes=extra.uniform(low, high)))

        def assignment_lines() -> Iterator[str]:
            nonlocal assignments
            for item in items:
                tl, r = item._timeline, ref(item)
                holder = {"annotating": tl.author_id, "examining": tl.examiner_id, "revising": tl.reviser_id}
                exams = iter(rounds.get(id(item), []))
                # Finished work: a completed lease for every stage the item went through (at an
                # examination, one per examiner who gave a verdict).
                for (_p, stage, _a, start, _v), (_p2, _to, _a2, end, _v2) in itertools.pairwise(tl.steps):
                    if stage not in holder or holder[stage] is None:
                        continue
                    if stage == "examining":
                        done = [
                            (who, at - timedelta(seconds=secs), at) for who, _ok, at, secs, _r in next(exams).verdicts
                        ]
                    else:
                        done = [(holder[stage], work(stage, start, end), end)]
                    for who, leased, completed in done:
                        assignments += 1
                        # Heartbeats kept the lease alive until the work was handed on.
                        yield self._assignment_line(
                            r, item, stage, who, "completed", leased, completed + lease, completed, completed
                        )
                    # Now and then someone claimed it first and walked away: that lease lapsed.
                    others = [p for p in lapse_pool[stage] if p not in (tl.author_id, *(w for w, _l, _c in done))]
                    if others and extra.random() < LAPSED_SHARE:
                        leased = start + (end - start) * extra.uniform(0, 0.5)
                        assignments += 1
                        yield self._assignment_line(
                            r, item, stage, extra.choice(others), "expired", leased, leased + lease, leased, None
                        )
                # An examination under way with two examiners: the second one may have judged already.
                for open_round in exams:
                    for who, _ok, at, secs, _r in open_round.verdicts:
                        assignments += 1
                        yield self._assignment_line(
                            r, item, "examining", who, "completed", at - timedelta(seconds=secs), at + lease, at, at
                        )
                # Work in hand: about half the items at a human stage are leased right now, some of
                # those leases already past their expiry and not yet swept.
                stage = item.status
                if stage in holder and holder[stage] is not None and rng.random() < 0.5:
                    leased = self.now - timedelta(seconds=rng.uniform(0, 45 * 60))
                    assignments += 1
                    yield self._assignment_line(
                        r, item, stage, holder[stage], "active", leased, leased + lease, leased, None
                    )

        copy_rows(
            Assignment,
            [
                *ref_fields,
                "project",
                "queue",
                "stage",
                "assignee",
                "assigned_by",
                "status",
                "leased_at",
                "lease_expires_at",
                "heartbeat_at",
                "completed_at",
            ],
            assignment_lines(),
            now=self.now,
        )

        def verdict_lines() -> Iterator[str]:
            nonlocal verdicts
            for item in items:
                queue = _copy_text(self.queues.get((item._kind, "examining")))
                for exam in rounds.get(id(item), []):
                    for who, passed, at, secs, reasons in exam.verdicts:
                        verdicts += 1
                        yield (
                            f"{ref(item)}\t{self.project.id}\t{who}\t{queue}\t{exam.start.isoformat()}\t{exam.version}\t"
                            f"{_copy_text(passed)}\t{_copy_text(reasons)}\t\t{secs}\t{at.isoformat()}\n"
                        )

        copy_rows(
            ExamVerdict,
            [
                *ref_fields,
                "project",
                "examiner",
                "queue",
                "round_started_at",
                "item_version",
                "passed",
                "reasons",
                "comment",
                "seconds_spent",
                "created_at",
            ],
            verdict_lines(),
            now=self.now,
        )
        self.counts["review_events"] = events
        self.counts["quality_scores"] = scores
        self.counts["assignments"] = assignments
        self.counts["exam_verdicts"] = verdicts

    def _exam_rounds(self, items: list, rng: random.Random) -> dict[int, list[_ExamRound]]:
        """Every examination round of every item, with its examiners' verdicts, consistent with the log:
        a round that ended accepted has only passes, one that ended flagged at least one flag, and the
        examiner named in the log gives the last verdict. Where the queue asks for two examiners, a
        second one (never the author) judges too, and may already have judged a round still open."""
        rounds: dict[int, list[_ExamRound]] = {}
        for item in items:
            tl = item._timeline
            overlap = self.overlap.get((item._kind, "examining"), 1)
            second = None
            if overlap > 1:
                second = rng.choice([e for e in self.examiners if e not in (tl.author_id, tl.examiner_id)])
            submitted, version, found = None, 1, []
            steps = tl.steps
            for k, (_prev, to, _actor, when, v) in enumerate(steps):
                if to == "submitted":
                    submitted, version = when, v
                if to != "examining" or submitted is None:
                    continue
                decided = steps[k + 1] if k + 1 < len(steps) else None
                exam = _ExamRound(start=submitted, version=version)
                if decided is not None:
                    end, flagged = decided[3], decided[1] == "flagged"
                    # Which of the two flagged: both, only the one in the log, or only the other.
                    pattern = rng.choice(["both", "both", "last", "other"]) if flagged and second else "last"
                    last_pass = not flagged or pattern == "other"
                    if second is not None:
                        at = when + (end - when) * rng.uniform(0.1, 0.9)
                        passes = not flagged or pattern == "last"
                        exam.verdicts.append(self._verdict(rng, second, passes, at, when))
                    exam.verdicts.append(self._verdict(rng, tl.examiner_id, last_pass, end, when))
                elif second is not None and rng.random() < 0.4:
                    at = when + (self.now - when) * rng.uniform(0.1, 0.9)
                    exam.verdicts.append(self._verdict(rng, second, rng.random() < 0.8, at, when))
                found.append(exam)
            if found:
                rounds[id(item)] = found
        return rounds

    def _verdict(self, rng: random.Random, who: int, passed: bool, at: datetime, since: datetime) -> tuple:
        """(examiner, passed, when, seconds spent, reasons): the work fits between the stage's start and `at`."""
        low, high = WORK_MINUTES["examining"]
        room = max(1, int((at - since).total_seconds()))
        seconds = min(room, int(rng.uniform(low, high) * 60))
        reasons = [] if passed else rng.sample(FLAG_REASONS, rng.randint(1, 2))
        return (who, passed, at, seconds, reasons)

    def _assignment_line(
        self,
        ref: str,
        item,
        stage: str,
        assignee: int,
        status: str,
        leased: datetime,
        expires: datetime,
        heartbeat: datetime,
        completed: datetime | None,
    ) -> str:
        queue = self.queues.get((item._kind, stage))
        return (
            f"{ref}\t{self.project.id}\t{_copy_text(queue)}\t{stage}\t{assignee}\t{self.admin.id}\t{status}\t"
            f"{leased.isoformat()}\t{expires.isoformat()}\t{heartbeat.isoformat()}\t{_copy_text(completed)}\n"
        )

    def _backdate(self) -> None:
        """bulk_create stamps `created_at` with now; the project's history starts 60 days back."""
        from django.db.models import Value
        from django.db.models.functions import Coalesce

        from annotator.models import MCQ, ChainPair, QAChain, Relation
        from videos.models import Clip, Video

        t0 = self.t0
        Video.objects.filter(project=self.project).update(created_at=t0, updated_at=t0)
        Clip.objects.filter(video__project=self.project).update(created_at=t0)
        for model in (QAChain, ChainPair, MCQ):
            model.objects.filter(project=self.project).update(
                created_at=t0, updated_at=Coalesce("accepted_at", "submitted_at", Value(t0))
            )
        Relation.objects.filter(chain_pair__project=self.project).update(created_at=t0, updated_at=t0)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.datagen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full benchmark size (default 1)")
    parser.add_argument("--seed", type=int, default=20250101)
    parser.add_argument("--slug", default=DEFAULT_SLUG, help="slug of the generated project (default: bench)")
    parser.add_argument("--no-migrate", action="store_true", help="do not run migrations first")
    args = parser.parse_args(argv)
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
        print(
            "bench.datagen: set DATABASE_URL to a PostgreSQL database (postgres://user@host:port/name); "
            "`make bench` starts one for you.",
            file=sys.stderr,
        )
        return 2
    try:
        Targets().scaled(args.scale)
    except ValueError as exc:
        print(f"bench.datagen: {exc}", file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    if not args.no_migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
    try:
        dataset = generate(scale=args.scale, seed=args.seed, slug=args.slug)
    except DatagenError as exc:
        print(f"bench.datagen: {exc}", file=sys.stderr)
        return 2
    width = max(len(k) for k in dataset.counts)
    for name, n in dataset.counts.items():
        print(f"{name:<{width}}  {n:>9,}")
    print(
        f"project {dataset.slug!r} (id {dataset.project_id}), scale {dataset.scale:g}, seed {dataset.seed}: "
        f"{dataset.seconds:.1f} s; logins {dataset.admin_username} … / password {dataset.password!r}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
