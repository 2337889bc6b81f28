"""Six LongVideoBench questions over two real videos, a release of them, and two scripted models."""

import math
import re

from releases.build import release_build
from releases.services import release_create
from tests import factories
from tests.fakes.openai_server import Reply
from videos.synthetic import SceneSpec, make_scene_video

# (question, video, category, key); the options are the same four colours everywhere.
QUESTIONS = [
    ("Q1 What colour is the first card?", "v1", "E2O", 0),
    ("Q2 What colour is the second card?", "v1", "E2O", 1),
    ("Q3 What colour is the lamp?", "v1", "O2E", 2),
    ("Q4 What colour is the cup?", "v2", "E2O", 3),
    ("Q5 What colour is the wall?", "v2", "O2E", 0),
    ("Q6 What colour is the floor?", "v2", "O2E", 1),
]
OPTIONS = ["red", "green", "blue", "white"]
LETTERS = "ABCD"
# What each model replies per question: a letter, or words (then the extractor's verdict).
REPLIES = {
    "model-a": {
        "Q1": "A",
        "Q2": "C",
        "Q3": ("I would pick the third one.", "C"),
        "Q4": "D",
        "Q5": "B",
        "Q6": ("Hard to say.", "none"),
    },
    "model-b": {"Q1": "B", "Q2": "C", "Q3": "C", "Q4": "D", "Q5": "A", "Q6": "A"},
}
# By hand: A scores 1,0,1 | 1,0,0 (v1 | v2); mean 1/2; the per-video sums of deviations are +1/2 and −1/2, so
# the clustered SE is sqrt(1/4 + 1/4) / 6.
A_SE = math.sqrt(0.5) / 6
# E2O: Q1, Q2 (v1), Q4 (v2) = 1, 0, 1: mean 2/3, sums −1/3 (v1) and +1/3 (v2): SE sqrt(2/9) / 3.
E2O_SE = math.sqrt(2 / 9) / 3
# O2E: Q3 (v1), Q5, Q6 (v2) = 1, 0, 0: mean 1/3, sums +2/3 and −2/3: SE sqrt(8/9) / 3.
O2E_SE = math.sqrt(8 / 9) / 3
# B scores 0,0,1 | 1,1,0. A − B = 1,0,0 | 0,−1,0: A alone right on Q1, B alone on Q5 → McNemar p = 1.
QUESTION = re.compile(r"Question: (Q\d)")


def responder(request):
    text = request.text
    if request.schema:  # the extractor: which option did the reply choose?
        for model in REPLIES.values():
            for reply in model.values():
                if isinstance(reply, tuple) and reply[0] in text:
                    return Reply.json({"choice": reply[1]})
        return Reply.json({"choice": "none"})
    reply = REPLIES[request.model][QUESTION.search(text).group(1)]
    return Reply.text(reply[0] if isinstance(reply, tuple) else reply)


def build_release(tmp_path, settings):
    settings.LLM_CONCURRENCY = 1
    settings.LLM_MAX_ATTEMPTS = 2
    project = factories.ProjectFactory(kind="longvideobench", slug="evalproj")
    admin = factories.UserFactory()
    factories.MembershipFactory(project=project, user=admin, role="admin")
    videos = {}
    for name, scenes in (("v1", [SceneSpec(1.0), SceneSpec(1.0)]), ("v2", [SceneSpec(0.5), SceneSpec(1.5)])):
        path = tmp_path / f"{name}.mp4"
        make_scene_video(path, scenes, width=160, height=90, fps=25, audio=False)
        videos[name] = factories.video_from_file(
            project, path, name=name, duration_s=2.0, fps=25.0, frame_count=50, topic_category="LC"
        )
        factories.SubtitleCueFactory(video=videos[name], start_s=0.2, end_s=0.8, text=f"{name} subtitle", source="srt")
    for question, video, category, key in QUESTIONS:
        mcq = factories.MCQFactory(
            project=project,
            question=question,
            referring_query="",
            referring_start=None,
            referring_end=None,
            question_wo_referring_query=question,
            options=OPTIONS,
            correct_index=key,
            category=category,
            status="accepted",
            video=videos[video],
        )
        mcq.moments.create(video=videos[video], time_s=0.5, frame_index=12, order=0)
    built = release_build(
        release=release_create(
            project=project,
            by=admin,
            version="v1",
            formats=["longvideobench"],
            filters={"include_media": False},
            enqueue=False,  # built here; a worker must not build it again meanwhile
        )
    )
    assert built.status == "ready", built.validation_errors
    built.admin = admin
    return built
