"""A small hand-built project with every kind of released item, for the release tests.

Videos (text-only files; builds use include_media false unless a test brings a real video):
- alpha  120 s, LV: four clips; chains 0–2 accepted, chain 3 still annotating; chain pair 0→1
         accepted with one accepted and one rejected link, 1→2 annotating, 2→3 accepted; two
         LongVideoBench MCQs (one L1, one L2 with five options) and one not yet accepted; SRT cues
         and one ASR cue.
- beta   45.5 s, LC: one accepted chain; one LongVideoBench MCQ; no subtitles at all.
- gamma  300 s, KH: the reference video of an MVPBench MCQ (candidates alpha, beta, delta).
- delta  200 s, LV: a LiViBench MCQ; three real-time comments and one ASR cue.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from annotator.models import MCQ, ChainPair, ItemStatus, MCQVideo, QAChain, QAPair, ReferredMoment, Relation
from releases.models import DatasetRelease
from tests.factories import ClipFactory, CommentFactory, ProjectFactory, SubtitleCueFactory, UserFactory, VideoFactory

ACCEPTED_AT = dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.UTC)
A = ItemStatus.ACCEPTED


@dataclass
class SmallProject:
    project: object
    admin: object
    videos: dict = field(default_factory=dict)
    chains: dict = field(default_factory=dict)  # (video, clip index) → QAChain
    chain_pairs: dict = field(default_factory=dict)  # (video, before index) → ChainPair
    mcqs: dict = field(default_factory=dict)  # label → MCQ

    def release(self, version: str = "v1", **fields) -> DatasetRelease:
        fields.setdefault("formats", ["svbench", "longvideobench", "mvpbench", "livibench", "generic"])
        fields.setdefault("filters", {"include_media": False})
        fields.setdefault("split_config", {"ratios": {"train": 0.5, "test": 0.5}})
        fields.setdefault("seed", 7)
        return DatasetRelease.objects.create(
            project=self.project,
            version=version,
            created_by=self.admin,
            storage_prefix=f"releases/{self.project.slug}/{version}/",
            **fields,
        )


def _chain(video, index, start, end, questions, *, status=A):
    clip = ClipFactory(video=video, index=index, start_s=start, end_s=end)
    chain = QAChain.objects.create(
        project=video.project,
        clip=clip,
        status=status,
        accepted_at=ACCEPTED_AT if status == A else None,
        origin="machine",
        human_edited=True,
    )
    for i, question in enumerate(questions):
        QAPair.objects.create(
            chain=chain, index=i, question=question, answer=f"Answer to: {question}", skill=["ECA", "II", "CR"][i % 3]
        )
    return chain


def _mcq(project, videos, *, status=A, **fields):
    mcq = MCQ.objects.create(
        project=project, status=status, accepted_at=ACCEPTED_AT if status == A else None, origin="human", **fields
    )
    for order, (video, role) in enumerate(videos):
        MCQVideo.objects.create(mcq=mcq, video=video, role=role, order=order)
    return mcq


def build_small_project(**project_fields) -> SmallProject:
    project = ProjectFactory(**project_fields)
    admin = UserFactory()
    data = SmallProject(project=project, admin=admin)
    v = data.videos
    v["alpha"] = VideoFactory(
        project=project,
        name="alpha",
        duration_s=120.0,
        fps=25.0,
        frame_count=3000,
        topic_category="LV",
        view_count=1234,
        has_audio=True,
        language="en",
    )
    v["beta"] = VideoFactory(
        project=project, name="beta", duration_s=45.5, fps=30.0, frame_count=1365, topic_category="LC", view_count=None
    )
    v["gamma"] = VideoFactory(project=project, name="gamma", duration_s=300.0, fps=25.0, topic_category="KH")
    v["delta"] = VideoFactory(
        project=project, name="delta", duration_s=200.0, fps=25.0, topic_category="LV", has_audio=True
    )

    alpha = v["alpha"]
    c = data.chains
    c[("alpha", 0)] = _chain(alpha, 0, 0.0, 10.5, ["Who enters the kitchen?", "What do they carry?", "Why?"])
    c[("alpha", 1)] = _chain(alpha, 1, 9.5, 20.25, ["What is on the table?", "Who sits down?"])
    c[("alpha", 2)] = _chain(alpha, 2, 19.25, 30.1, ["What happens next?", "How does it end?"])
    c[("alpha", 3)] = _chain(alpha, 3, 29.0, 40.125, ["Unreviewed?", "Still?"], status=ItemStatus.ANNOTATING)
    c[("beta", 0)] = _chain(v["beta"], 0, 1.0, 12.0, ["What is cooked?", "How long?"])

    def pair(video, before, status):
        cp = ChainPair.objects.create(
            project=project,
            video=v[video],
            before_index=before,
            chain_before=c[(video, before)],
            chain_after=c[(video, before + 1)],
            status=status,
            accepted_at=ACCEPTED_AT if status == A else None,
        )
        data.chain_pairs[(video, before)] = cp
        return cp

    cp01 = pair("alpha", 0, A)
    pair("alpha", 1, ItemStatus.ANNOTATING)
    pair("alpha", 2, A)
    p0 = list(c[("alpha", 0)].pairs.order_by("index"))
    p1 = list(c[("alpha", 1)].pairs.order_by("index"))
    Relation.objects.create(
        chain_pair=cp01, from_pair=p0[1], to_pair=p1[0], relation_type="action", decision="accepted"
    )
    Relation.objects.create(
        chain_pair=cp01, from_pair=p0[2], to_pair=p1[1], relation_type="person", decision="rejected"
    )

    m = data.mcqs
    m["lvb_l1"] = _mcq(
        project,
        [(alpha, "main")],
        question="When the man enters the kitchen, what does he carry?",
        referring_query="When the man enters the kitchen",
        referring_start=0,
        referring_end=31,
        question_wo_referring_query="What does he carry?",
        options=["a box", "a cup", "a bag", "nothing"],
        correct_index=2,
        category="E2O",
        level="L1-Perception",
    )
    ReferredMoment.objects.create(mcq=m["lvb_l1"], video=alpha, time_s=5.0, frame_index=125, order=0)
    m["lvb_l2"] = _mcq(
        project,
        [(alpha, "main")],
        question="After the table is set, which scene comes next?",
        question_wo_referring_query="Which scene comes next?",
        options=["kitchen", "garden", "street", "car", "office"],
        correct_index=4,
        category="SSS",
        level="L2-Relation",
    )
    ReferredMoment.objects.create(mcq=m["lvb_l2"], video=alpha, time_s=12.0, frame_index=300, order=0)
    ReferredMoment.objects.create(mcq=m["lvb_l2"], video=alpha, time_s=25.04, frame_index=626, order=1)
    m["lvb_draft"] = _mcq(
        project,
        [(alpha, "main")],
        status=ItemStatus.ANNOTATING,
        question="Not accepted?",
        options=["a", "b", "c", "d"],
        correct_index=0,
        category="E2O",
        level="L1-Perception",
    )
    m["lvb_beta"] = _mcq(
        project,
        [(v["beta"], "main")],
        question="In the pan scene, what is fried?",
        question_wo_referring_query="What is fried?",
        options=["eggs", "fish", "rice", "tofu"],
        correct_index=0,
        category="S2E",
        level="L1-Perception",
    )
    m["mvp"] = _mcq(
        project,
        [(v["gamma"], "reference"), (alpha, "candidate"), (v["beta"], "candidate"), (v["delta"], "candidate")],
        question="Which candidate continues the reference? <video> <video> <video> <video>",
        options=["1", "2", "3"],
        correct_index=1,
        category="continuation",
        task_group="temporal",
    )
    m["livi"] = _mcq(
        project,
        [(v["delta"], "main")],
        question="What does the streamer celebrate?",
        question_translation="主播在庆祝什么？",
        options=["a birthday", "a win", "a new home", "nothing"],
        correct_index=0,
        category="event recognition",
        task_group="fine perception",
    )

    SubtitleCueFactory(video=alpha, start_s=0.5, end_s=2.0, text="Hello there.", source="srt", language="en")
    SubtitleCueFactory(video=alpha, start_s=3.0, end_s=4.25, text="Let us cook.", source="srt", language="en")
    SubtitleCueFactory(video=alpha, start_s=5.0, end_s=7.0, text="Carry the bag.", source="srt", language="en")
    SubtitleCueFactory(video=alpha, start_s=0.4, end_s=2.1, text="hello there", source="asr", language="en")
    SubtitleCueFactory(video=v["delta"], start_s=1.0, end_s=3.5, text="Welcome to the stream!", source="asr")
    CommentFactory(video=v["delta"], time_s=2.0, text="first!", user="viewer1")
    CommentFactory(video=v["delta"], time_s=1.5, text="hi 👋", user="")
    CommentFactory(video=v["delta"], time_s=9.25, text="生日快乐", user="viewer2")
    return data
