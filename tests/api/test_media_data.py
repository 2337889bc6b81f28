"""Clips and scenes, subtitle cues and their import, comments and their import, through the API."""

from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jobs.models import BackgroundJob, JobStatus
from tests import factories
from videos import tasks
from videos.ingest import video_import
from videos.models import Comment, CueSource, SubtitleCue
from videos.synthetic import SceneSpec, make_scene_video

from .error_shape import assert_error

pytestmark = pytest.mark.django_db

SRT = """1
00:00:00,500 --> 00:00:02,000
Welcome to the kitchen.

2
00:00:02,500 --> 00:00:01,000
This cue ends before it starts.

3
00:00:03,000 --> 00:00:04,500
<i>Now we chop the onions.</i>
"""


@pytest.fixture
def sent(monkeypatch):
    names = []
    monkeypatch.setattr(
        "jobs.services.current_app.send_task", lambda name, args: names.append(name) or type("R", (), {"id": "t1"})()
    )
    return names


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, duration_s=100.0)


def _url(project, video, suffix):
    return f"/api/projects/{project.slug}/videos/{video.pk}/{suffix}"


def _count_queries(client, url, headers) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, headers=headers)
    assert response.status_code == 200, response.content
    return len(ctx.captured_queries)


def _staged() -> list[Path]:
    """Comment files waiting for the worker (the factories' videos have stored files of their own)."""
    return sorted(p for p in Path(default_storage.location).glob("projects/*/imports/**/*") if p.is_file())


# ---------------------------------------------------------------------------------------------
# GET clips/


@pytest.fixture(scope="module")
def three_scenes(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("api-clips") / "three.mp4"
    make_scene_video(path, [SceneSpec(3.0), SceneSpec(3.0), SceneSpec(3.0)], width=160, height=90, fps=25)
    return path


def test_clips_and_scenes_of_a_processed_video(client, project, people, three_scenes, sent):
    video = video_import(project=project, source=three_scenes, filename="three.mp4")
    client.force_login(people["annotator"])
    before = client.get(_url(project, video, "clips/")).json()
    assert before == {"video_id": video.pk, "duration_s": pytest.approx(9.0, abs=0.1), "scenes": None, "clips": []}

    tasks.process(BackgroundJob.objects.get(target_id=video.pk).pk)
    body = client.get(_url(project, video, "clips/")).json()
    scenes = body["scenes"]
    assert len(scenes) == 3
    for scene, cut in zip(scenes[1:], (3.0, 6.0), strict=True):
        assert scene["start_s"] == pytest.approx(cut, abs=0.2)
    clips = body["clips"]
    assert [c["index"] for c in clips] == [0, 1, 2]
    for clip, scene in zip(clips, scenes, strict=True):
        # Each clip is its scene padded by the project's 0.5 s, clamped to the video.
        assert (clip["scene_start_s"], clip["scene_end_s"]) == pytest.approx((scene["start_s"], scene["end_s"]))
        assert clip["start_s"] == pytest.approx(max(0.0, scene["start_s"] - 0.5), abs=1e-3)
        assert clip["end_s"] == pytest.approx(min(body["duration_s"], scene["end_s"] + 0.5), abs=1e-3)


def test_clips_query_count_does_not_grow_with_clips(client, project, people, video, token_for):
    headers = token_for(people["annotator"])
    factories.ClipFactory(video=video, index=0)
    few = _count_queries(client, _url(project, video, "clips/"), headers)
    for index in range(1, 9):
        factories.ClipFactory(video=video, index=index)
    assert _count_queries(client, _url(project, video, "clips/"), headers) == few
    assert few == 5  # token + user, project, roles, video, clips


# ---------------------------------------------------------------------------------------------
# GET cues/


@pytest.fixture
def cues(video):
    made = {}
    for start, end, text, source in [
        (0.0, 2.0, "hello", CueSource.SRT),
        (2.0, 4.0, "onions", CueSource.SRT),
        (5.0, 5.0, "blip", CueSource.SRT),
        (9.0, 12.0, "goodbye", CueSource.SRT),
        (1.0, 3.0, "asr hello", CueSource.ASR),
    ]:
        made[text] = factories.SubtitleCueFactory(video=video, start_s=start, end_s=end, text=text, source=source)
    return made


def _texts(response):
    assert response.status_code == 200, response.content
    return [c["text"] for c in response.json()["results"]]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", ["hello", "asr hello", "onions", "blip", "goodbye"]),
        ("source=srt", ["hello", "onions", "blip", "goodbye"]),
        ("source=asr", ["asr hello"]),
        # Cues overlapping [start, end): "hello" ends at 2.0, so it is out; "blip" lasts no time at 5.0.
        ("start=2&end=5.5", ["asr hello", "onions", "blip"]),
        ("start=5&end=9", ["blip"]),
        ("start=10", ["goodbye"]),
        ("end=1&source=srt", ["hello"]),
    ],
)
def test_cues_in_time_order_filtered_by_source_and_window(client, project, people, video, cues, query, expected):
    client.force_login(people["annotator"])
    assert _texts(client.get(_url(project, video, f"cues/?{query}"))) == expected


def test_cues_are_paginated(client, project, people, video, cues):
    client.force_login(people["annotator"])
    body = client.get(_url(project, video, "cues/?page_size=2&page=2")).json()
    assert body["count"] == 5 and [c["text"] for c in body["results"]] == ["onions", "blip"]
    assert set(body["results"][0]) == {"id", "start_s", "end_s", "text", "source", "language"}


def test_bad_cue_filters_are_400(client, project, people, video, cues):
    client.force_login(people["annotator"])
    error = assert_error(client.get(_url(project, video, "cues/?source=tv")), 400, "validation_error")
    assert list(error["details"]) == ["source"]
    error = assert_error(client.get(_url(project, video, "cues/?start=soon")), 400, "validation_error")
    assert list(error["details"]) == ["start"]


def test_cue_list_query_count_is_pinned(client, project, people, video, token_for):
    headers = token_for(people["reviser"])
    factories.SubtitleCueFactory(video=video)
    few = _count_queries(client, _url(project, video, "cues/"), headers)
    factories.SubtitleCueFactory.create_batch(30, video=video)
    assert _count_queries(client, _url(project, video, "cues/"), headers) == few == 6  # ... video, count, rows


def test_reads_need_a_member_of_the_videos_project(client, project, people, video):
    foreign = factories.VideoFactory()
    for suffix in ("clips/", "cues/", "comments/?start=0&end=10", "comments/density/"):
        assert_error(client.get(_url(project, video, suffix)), 401, "not_authenticated")
        client.force_login(people["outsider"])
        assert_error(client.get(_url(project, video, suffix)), 404, "not_found")
        client.force_login(people["annotator"])
        assert client.get(_url(project, video, suffix)).status_code == 200
        wrong = client.get(f"/api/projects/{project.slug}/videos/{foreign.pk}/{suffix}")
        missing = client.get(f"/api/projects/{project.slug}/videos/999999/{suffix}")
        assert assert_error(wrong, 404, "not_found") == assert_error(missing, 404, "not_found")
        client.logout()


# ---------------------------------------------------------------------------------------------
# POST subtitles/


def _post_file(client, url, name, data: bytes, **fields):
    return client.post(url, {"file": SimpleUploadedFile(name, data), **fields})


def test_subtitles_import_keeps_valid_cues_and_lists_the_skipped_by_line(client, project, people, video):
    asr = factories.SubtitleCueFactory(video=video, source=CueSource.ASR, text="from speech")
    factories.SubtitleCueFactory(video=video, source=CueSource.VTT, text="an older file")
    client.force_login(people["admin"])
    url = _url(project, video, "subtitles/")
    response = _post_file(client, url, "kitchen.srt", SRT.encode("utf-8-sig"), language="en")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["count"], body["format"], body["encoding"]) == (2, "srt", "utf-8-sig")
    [skipped] = body["skipped"]
    assert skipped["line"] == 6 and "end" in skipped["message"]

    # The new file's cues replaced the older file's; the transcript is kept apart.
    client.force_login(people["annotator"])
    listed = client.get(_url(project, video, "cues/?source=srt")).json()["results"]
    assert [(c["start_s"], c["end_s"], c["text"], c["language"]) for c in listed] == [
        (0.5, 2.0, "Welcome to the kitchen.", "en"),
        (3.0, 4.5, "Now we chop the onions.", "en"),
    ]
    others = SubtitleCue.objects.filter(video=video).exclude(source=CueSource.SRT)
    assert list(others.values_list("text", flat=True)) == [asr.text]


def test_subtitles_in_gb18030_and_longvideobench_json(client, project, people, video):
    client.force_login(people["admin"])
    srt = "1\n00:00:01,000 --> 00:00:02,000\n现在我们切洋葱。\n".encode("gb18030")
    body = _post_file(client, _url(project, video, "subtitles/"), "zh.srt", srt).json()
    assert body["count"] == 1 and body["encoding"].lower().replace("-", "") in ("gb18030", "gbk", "gb2312")
    assert SubtitleCue.objects.get(video=video).text == "现在我们切洋葱。"

    lvb = b'[{"start": "00:00:01.000", "end": "00:00:02.500", "line": "hi"}]'
    body = _post_file(client, _url(project, video, "subtitles/"), "lvb.json", lvb).json()
    assert (body["count"], body["format"]) == (1, "lvb_start_end")


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("notes.srt", b"just some words\nand more words\n", "notes.srt"),
        ("empty.json", b"[]", "empty.json"),
        ("bad.srt", b"1\n00:00:05,000 --> 00:00:01,000\nbackwards\n", "line 2"),
        ("binary.vtt", bytes(range(256)) * 4, "binary.vtt"),
    ],
    ids=["no-timings", "empty-json", "backwards", "binary"],
)
def test_unusable_subtitles_are_400_with_the_reason_and_change_nothing(
    client, project, people, video, name, data, reason
):
    kept = factories.SubtitleCueFactory(video=video, source=CueSource.SRT, text="keep me")
    client.force_login(people["admin"])
    error = assert_error(_post_file(client, _url(project, video, "subtitles/"), name, data), 400, "validation_error")
    messages = error["details"]["file"]
    assert messages[0].startswith(name) and any(reason in m for m in messages)
    assert list(SubtitleCue.objects.filter(video=video).values_list("pk", flat=True)) == [kept.pk]


def test_subtitle_import_is_for_admins(client, project, people, video):
    url = _url(project, video, "subtitles/")
    assert_error(_post_file(client, url, "a.srt", SRT.encode()), 401, "not_authenticated")
    client.force_login(people["annotator"])
    assert_error(_post_file(client, url, "a.srt", SRT.encode()), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(_post_file(client, url, "a.srt", SRT.encode()), 404, "not_found")
    assert not SubtitleCue.objects.exists()


# ---------------------------------------------------------------------------------------------
# GET comments/ and comments/density/


@pytest.fixture
def comments(video):
    times = [0.5, 1.0, 1.0, 4.0, 9.99, 10.0, 55.0, 99.0]
    return [factories.CommentFactory(video=video, time_s=t, text=f"at {t}", user="viewer") for t in times]


def test_comment_window_is_half_open_and_in_time_order(client, project, people, video, comments):
    client.force_login(people["examiner"])
    body = client.get(_url(project, video, "comments/?start=1&end=10")).json()
    assert [c["time_s"] for c in body["comments"]] == [1.0, 1.0, 4.0, 9.99]
    assert (body["start"], body["end"], body["limit"], body["truncated"]) == (1.0, 10.0, 100, False)
    assert set(body["comments"][0]) == {"id", "time_s", "text", "user"}
    assert body["comments"][0]["user"] == "viewer"
    ids = [c["id"] for c in body["comments"][:2]]
    assert ids == sorted(ids)  # ties in time keep their import order


def test_comment_window_limit_says_when_it_truncated(client, project, people, video, comments):
    client.force_login(people["annotator"])
    body = client.get(_url(project, video, "comments/?start=0&end=100&limit=3")).json()
    assert [c["time_s"] for c in body["comments"]] == [0.5, 1.0, 1.0] and body["truncated"] is True
    body = client.get(_url(project, video, "comments/?start=0&end=100&limit=8")).json()
    assert len(body["comments"]) == 8 and body["truncated"] is False


@pytest.mark.parametrize(
    "query, field",
    [
        ("end=10", "start"),
        ("start=0", "end"),
        ("start=nan&end=5", "start"),
        ("start=0&end=inf", "end"),
        ("start=0&end=10&limit=0", "limit"),
        ("start=0&end=10&limit=5000", "limit"),
        ("start=zero&end=10", "start"),
    ],
)
def test_bad_comment_windows_are_400_naming_the_parameter(client, project, people, video, query, field):
    client.force_login(people["annotator"])
    error = assert_error(client.get(_url(project, video, f"comments/?{query}")), 400, "validation_error")
    assert field in error["details"]


def test_a_window_that_ends_before_it_starts_is_empty(client, project, people, video):
    client.force_login(people["annotator"])
    body = client.get(_url(project, video, "comments/?start=10&end=5")).json()
    assert (body["comments"], body["truncated"]) == ([], False)


def test_comment_window_query_count_is_constant(client, project, people, video, token_for):
    headers = token_for(people["annotator"])
    url = _url(project, video, "comments/?start=0&end=100&limit=1000")
    factories.CommentFactory(video=video)
    few = _count_queries(client, url, headers)
    factories.CommentFactory.create_batch(40, video=video)
    assert _count_queries(client, url, headers) == few == 5


def test_comment_density(client, project, people, video, comments):
    client.force_login(people["annotator"])
    body = client.get(_url(project, video, "comments/density/?bins=10")).json()
    assert (body["bins"], body["bin_s"], body["total"]) == (10, 10.0, 8)
    assert body["counts"] == [5, 1, 0, 0, 0, 1, 0, 0, 0, 1]
    assert client.get(_url(project, video, "comments/density/")).json()["bins"] == 100
    for bad in ("0", "2001", "many"):
        assert_error(client.get(_url(project, video, f"comments/density/?bins={bad}")), 400, "validation_error")


def test_density_of_a_video_without_a_duration_is_empty(client, project, people):
    video = factories.VideoFactory(project=project, duration_s=None)
    client.force_login(people["annotator"])
    body = client.get(_url(project, video, "comments/density/")).json()
    assert body == {"bins": 0, "bin_s": 0, "counts": [], "total": 0}


# ---------------------------------------------------------------------------------------------
# POST comments/


def test_comment_import_stages_the_file_and_the_job_loads_it(
    client, project, people, video, sent, django_capture_on_commit_callbacks
):
    data = b"time,text,user,likes\n1.5,first!,ann,3\n0.5,hello,bob,\nsoon,bad time,cy,\n20,later,ann,1\n"
    client.force_login(people["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = _post_file(client, _url(project, video, "comments/"), "chat.csv", data)
    assert response.status_code == 202, response.content
    job_id = response.json()["id"]
    assert response.json()["kind"] == "videos.import_comments" and sent == ["videos.import_comments"]
    assert len(_staged()) == 1 and not Comment.objects.exists()

    tasks.import_comments(job_id)
    job = client.get(f"/api/projects/{project.slug}/jobs/{job_id}/").json()
    assert job["status"] == JobStatus.SUCCEEDED and job["result"]["imported"] == 3 and job["result"]["skipped"] == 1
    assert "line 4" in job["result"]["problems"][0]
    assert _staged() == []  # the staged copy is gone once imported
    body = client.get(_url(project, video, "comments/?start=0&end=30")).json()
    assert [(c["time_s"], c["text"], c["user"]) for c in body["comments"]] == [
        (0.5, "hello", "bob"),
        (1.5, "first!", "ann"),
        (20.0, "later", "ann"),
    ]


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("chat.csv", b"when,what\n1,hi\n", "time"),
        ("chat.jsonl", b'[{"time": 1, "text": "hi"}]', "JSON array"),
        ("chat.csv", bytes(range(256)) * 8, "chat.csv"),
    ],
    ids=["no-time-column", "json-array", "binary"],
)
def test_a_wrong_comments_file_is_400_and_nothing_is_staged(client, project, people, video, sent, name, data, reason):
    client.force_login(people["admin"])
    error = assert_error(_post_file(client, _url(project, video, "comments/"), name, data), 400, "validation_error")
    assert error["details"]["file"][0].startswith(name) and reason in error["details"]["file"][0]
    assert _staged() == [] and not BackgroundJob.objects.exists() and not sent


def test_a_second_comment_import_while_one_runs_is_409_and_unstaged(client, project, people, video, sent):
    client.force_login(people["admin"])
    first = _post_file(client, _url(project, video, "comments/"), "a.csv", b"time,text\n1,hi\n").json()
    staged = _staged()
    error = assert_error(
        _post_file(client, _url(project, video, "comments/"), "b.csv", b"time,text\n2,yo\n"), 409, "job_already_running"
    )
    assert error["details"]["job"]["id"] == first["id"]
    assert _staged() == staged  # the second file was not left behind


def test_comment_import_is_for_admins(client, project, people, video, sent):
    url = _url(project, video, "comments/")
    assert_error(_post_file(client, url, "a.csv", b"time,text\n1,hi\n"), 401, "not_authenticated")
    client.force_login(people["annotator"])
    assert_error(_post_file(client, url, "a.csv", b"time,text\n1,hi\n"), 403, "permission_denied")
    client.force_login(people["outsider"])
    assert_error(_post_file(client, url, "a.csv", b"time,text\n1,hi\n"), 404, "not_found")
    assert _staged() == [] and not sent
