"""A corpus of bad videos, subtitle files and comment files, each uploaded through the real views:
each gets a clear message naming the problem and leaves the database and storage as they were."""

import json
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core.files.storage import default_storage
from django.urls import reverse

from jobs.models import BackgroundJob
from tests import factories
from tests.videos.media_corpus import build_corpus
from videos.models import Clip, Comment, CurationDecision, SubtitleCue, Video

pytestmark = pytest.mark.django_db

UNUPLOADABLE = {"missing.mp4", "folder.mp4"}  # a browser cannot send these


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_corpus(tmp_path_factory.mktemp("bad-videos"))


def _snapshot() -> dict:
    files = sorted(str(p) for p in Path(default_storage.location).rglob("*") if p.is_file())
    rows = {
        m.__name__: list(m.objects.order_by("pk").values())
        for m in (Video, Clip, SubtitleCue, Comment, BackgroundJob, CurationDecision)
    }
    return {"files": files, "rows": rows}


@pytest.fixture
def admin_client(client, people):
    client.force_login(people["admin"])
    return client


@pytest.fixture
def existing_video(project):
    """A video with cues and comments already, so a bad import must not disturb them."""
    video = factories.VideoFactory(project=project)
    SubtitleCue.objects.create(video=video, start_s=1, end_s=2, text="Keep me", source="srt")
    Comment.objects.create(video=video, time_s=1.5, text="keep me too")
    return video


def test_bad_videos(admin_client, project, corpus, existing_video):
    cases = [c for name, c in corpus.items() if name not in UNUPLOADABLE]
    assert len(cases) >= 20
    before = _snapshot()
    for case in cases:
        with open(case.path, "rb") as fh:
            response = admin_client.post(reverse("videos:upload", args=[project.slug]), {"file": fh})
        assert response.status_code == 422, (case.name, response.content)
        error = response.json()["error"]
        assert error.startswith(case.name) and case.reason_contains in error, (case.name, error)
        assert _snapshot() == before, case.name


BAD_SUBTITLES = {
    "empty.srt": (b"", "empty"),
    "picture.srt": (bytes.fromhex("89504e470d0a1a0a") + b"\x00" * 64, "PNG"),
    "garbage.vtt": (bytes(range(256)) * 4, "not"),
    "all_broken.srt": (b"1\nnot a time\nhello\n\n2\nalso wrong --> nope\nworld\n", "no"),
    "object.json": (json.dumps({"start": 1}).encode(), "list"),
    "wrong_objects.json": (json.dumps([{"a": 1}, {"b": 2}]).encode(), "no"),
    "empty_list.json": (b"[]", "empty"),
    "prose.txt": (b"Once upon a time there was a video without subtitles.\n" * 20, "subtitle"),
}


def test_bad_subtitle_files(admin_client, project, existing_video):
    before = _snapshot()
    url = reverse("videos:subtitles_upload", args=[project.slug, existing_video.pk])
    for name, (data, phrase) in BAD_SUBTITLES.items():
        path_like = (name, data)
        response = admin_client.post(url, {"file": _upload(*path_like)}, follow=True)
        text = " ".join(str(m) for m in get_messages(response.wsgi_request))
        assert name in text and phrase.lower() in text.lower(), (name, text)
        assert _snapshot() == before, name


BAD_COMMENTS = {
    "empty.csv": (b"", "empty"),
    "no_columns.csv": (b"a,b,c\n1,2,3\n", "time"),
    "binary.jsonl": (bytes.fromhex("89504e470d0a1a0a") + b"\x00" * 64, "PNG"),
    "not_objects.jsonl": (b"[1, 2, 3]\n[4]\n", "object"),
    "subtitles.srt": (b"1\n00:00:01,000 --> 00:00:02,000\nhello\n", "CSV"),
}


def test_bad_comment_files(admin_client, project, existing_video):
    before = _snapshot()
    url = reverse("videos:comments_upload", args=[project.slug, existing_video.pk])
    for name, (data, phrase) in BAD_COMMENTS.items():
        response = admin_client.post(url, {"file": _upload(name, data)}, follow=True)
        text = " ".join(str(m) for m in get_messages(response.wsgi_request))
        assert name in text and phrase.lower() in text.lower(), (name, text)
        assert _snapshot() == before, name


def _upload(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)
