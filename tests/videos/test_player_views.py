import pytest
from django.core.files.base import ContentFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests import factories
from videos.models import Comment, CueSource, SubtitleCue, VideoStatus

pytestmark = pytest.mark.django_db


def player_url(video, slug=None):
    return reverse("videos:player", args=[slug or video.project.slug, video.pk])


def vtt_url(video):
    return reverse("videos:player_subtitles", args=[video.project.slug, video.pk])


def comments_url(video, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return reverse("videos:player_comments", args=[video.project.slug, video.pk]) + (f"?{query}" if query else "")


def add_cues(video, spans, source=CueSource.SRT):
    SubtitleCue.objects.bulk_create(
        [SubtitleCue(video=video, start_s=s, end_s=e, text=f"line at {s:g}", source=source) for s, e in spans]
    )


def add_comments(video, times):
    Comment.objects.bulk_create(
        [Comment(video=video, time_s=t, text=f"comment at {t:g}", user="viewer") for t in times]
    )


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, duration_s=60.0, fps=25.0, scenes=[[0.0, 30.0], [30.0, 60.0]])


# --- permissions ---------------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, video):
    for url in (player_url(video), vtt_url(video), comments_url(video, start=0, end=5)):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_every_member_may_watch_and_strangers_get_404(client, people, video):
    for role in ("annotator", "examiner", "reviser", "admin"):
        client.force_login(people[role])
        assert client.get(player_url(video)).status_code == 200, role
        assert client.get(vtt_url(video)).status_code == 200, role
        assert client.get(comments_url(video, start=0, end=5)).status_code == 200, role

    client.force_login(people["outsider"])
    for url in (player_url(video), vtt_url(video), comments_url(video, start=0, end=5)):
        assert client.get(url).status_code == 404


def test_missing_and_foreign_videos_look_the_same(client, people, video):
    client.force_login(people["annotator"])
    other_project_video = factories.VideoFactory()
    # A video of another project, reached through a project the user belongs to: 404, not a leak.
    assert client.get(player_url(other_project_video, slug=video.project.slug)).status_code == 404
    assert client.get(reverse("videos:player", args=[video.project.slug, 999_999])).status_code == 404
    assert client.get(reverse("videos:player", args=["no-such-project", video.pk])).status_code == 404


def test_post_is_refused(client, people, video):
    client.force_login(people["annotator"])
    assert client.post(player_url(video)).status_code == 405


# --- the page --------------------------------------------------------------------------------


def test_page_plays_the_original_with_the_subtitle_track(client, people, video):
    add_cues(video, [(1.0, 2.5), (3.0, 4.0)])
    client.force_login(people["annotator"])
    page = client.get(player_url(video)).text
    assert f'src="{reverse("videos:media", args=[video.pk, "original"])}"' in page
    assert 'preload="metadata"' in page
    assert f'<track kind="subtitles" default src="{vtt_url(video)}"' in page
    assert 'data-start="1.0" data-end="2.5"' in page
    assert "00:03.000" in page and "line at 3" in page
    assert "poster=" not in page  # no poster yet: no broken image request
    assert 'id="player-status"' not in page


def test_page_prefers_the_proxy_and_shows_the_poster(client, people, video):
    video.proxy.save("proxy.mp4", ContentFile(b"\x00" * 10), save=False)
    video.poster.save("poster.jpg", ContentFile(b"\xff\xd8"), save=False)
    video.save()
    client.force_login(people["annotator"])
    page = client.get(player_url(video)).text
    assert f'src="{reverse("videos:media", args=[video.pk, "proxy"])}"' in page
    assert f'poster="{reverse("videos:media", args=[video.pk, "poster"])}"' in page


def test_page_config_carries_clips_scenes_fps_and_density(client, people, video):
    factories.ClipFactory(video=video, index=1, start_s=29.5, end_s=60.0)
    factories.ClipFactory(video=video, index=0, start_s=0.0, end_s=30.5)
    add_comments(video, [1.0, 2.0, 59.0])
    client.force_login(people["annotator"])
    response = client.get(player_url(video))
    config = response.context["player_config"]
    assert config["fps"] == 25.0 and config["duration"] == 60.0
    assert config["clips"] == [{"index": 0, "start": 0.0, "end": 30.5}, {"index": 1, "start": 29.5, "end": 60.0}]
    assert config["scenes"] == [[0.0, 30.0], [30.0, 60.0]]
    assert sum(config["density"]["counts"]) == 3
    assert config["commentsUrl"] == comments_url(video)
    assert 'id="player-config"' in response.text  # json_script, read by player.js
    assert 'id="comments-list"' in response.text


def test_page_without_comments_does_not_ask_for_them(client, people, video):
    client.force_login(people["annotator"])
    response = client.get(player_url(video))
    assert response.context["player_config"]["density"] is None
    assert 'id="comments-list"' not in response.text
    assert "This video has no real-time comments." in response.text
    assert "No clips yet" in response.text


def test_page_shows_probe_facts(client, people, video):
    video.video_codec, video.audio_codec, video.has_audio, video.width, video.height = "h264", "aac", True, 320, 180
    video.save()
    client.force_login(people["annotator"])
    page = client.get(player_url(video)).text
    assert "01:00.000" in page  # duration
    assert "25 fps" in page
    assert "320×180" in page
    assert "h264 / aac" in page


def test_processing_video_shows_a_polling_banner_and_reloads_when_done(client, people, video):
    video.status = VideoStatus.PROCESSING
    video.save()
    client.force_login(people["annotator"])
    page = client.get(player_url(video)).text
    assert 'id="player-status"' in page and "still being processed" in page and 'hx-trigger="every 3s"' in page

    poll = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "player-status"}
    response = client.get(player_url(video), **poll)
    assert "still being processed" in response.text and "<video" not in response.text

    video.status = VideoStatus.READY
    video.save()
    response = client.get(player_url(video), **poll)
    assert response.status_code == 200 and response["HX-Refresh"] == "true"


def test_failed_video_says_why(client, people, video):
    video.status, video.status_reason = VideoStatus.FAILED, "The file is not a video: no video stream."
    video.save()
    client.force_login(people["annotator"])
    page = client.get(player_url(video)).text
    assert 'role="alert"' in page and "Processing failed: The file is not a video: no video stream." in page
    assert "hx-trigger" not in page


def test_htmx_gets_the_player_fragment_only(client, people, video):
    client.force_login(people["annotator"])
    response = client.get(player_url(video), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert '<div class="player" id="player"' in response.text
    assert "<html" not in response.text and "<video" in response.text


def test_page_query_count_does_not_grow(client, people, video):
    client.force_login(people["annotator"])
    add_cues(video, [(1.0, 2.0)])
    factories.ClipFactory(video=video, index=0, start_s=0, end_s=10)
    add_comments(video, [1.0])
    client.get(player_url(video))  # warm caches (content types, sessions) outside the count
    with CaptureQueriesContext(connection) as small:
        assert client.get(player_url(video)).status_code == 200

    add_cues(video, [(i * 0.01, i * 0.01 + 0.5) for i in range(2, 2000)])
    for i in range(1, 200):
        factories.ClipFactory(video=video, index=i, start_s=i * 0.25, end_s=i * 0.25 + 5)
    add_comments(video, [i * 0.03 for i in range(2000)])
    with CaptureQueriesContext(connection) as big:
        response = client.get(player_url(video))
    assert response.status_code == 200
    assert response.text.count("<li data-start=") == 2000 - 1
    assert len(big.captured_queries) == len(small.captured_queries), [q["sql"] for q in big.captured_queries]


# --- subtitles ----------------------------------------------------------------------------------


def test_vtt_lists_the_cues_in_time_order(client, people, video):
    add_cues(video, [(3.0, 4.5), (1.25, 2.0)])
    client.force_login(people["annotator"])
    response = client.get(vtt_url(video))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/vtt; charset=utf-8"
    body = response.content.decode()
    assert body.startswith("WEBVTT\n")
    first = body.index("00:00:01.250 --> 00:00:02.000\nline at 1.25")
    assert first < body.index("00:00:03.000 --> 00:00:04.500\nline at 3")


def test_vtt_without_cues_is_empty_but_valid(client, people, video):
    client.force_login(people["annotator"])
    response = client.get(vtt_url(video))
    assert response["Content-Type"] == "text/vtt; charset=utf-8"
    assert response.content == b"WEBVTT\n"


def test_vtt_falls_back_to_the_transcript(client, people, video):
    add_cues(video, [(5.0, 6.0)], source=CueSource.ASR)
    client.force_login(people["annotator"])
    assert "00:00:05.000 --> 00:00:06.000\nline at 5" in client.get(vtt_url(video)).content.decode()


# --- comments of a moment --------------------------------------------------------------------------


def test_comments_window_is_half_open_and_ordered(client, people, video):
    add_comments(video, [6.0, 0.5, 1.0, 5.999, 3.0, 10.9])
    add_comments(factories.VideoFactory(project=video.project), [2.0])  # another video's comment
    client.force_login(people["annotator"])
    body = client.get(comments_url(video, start=1, end=6)).json()
    assert [c["time_s"] for c in body["comments"]] == [1.0, 3.0, 5.999]
    assert body["truncated"] is False and body["start"] == 1.0 and body["end"] == 6.0
    first = body["comments"][0]
    assert set(first) == {"id", "time_s", "text", "user"}
    assert first["text"] == "comment at 1" and first["user"] == "viewer"


def test_comments_negative_start_is_the_video_start(client, people, video):
    add_comments(video, [0.0, 2.0])
    client.force_login(people["annotator"])
    body = client.get(comments_url(video, start=-5, end=1)).json()
    assert [c["time_s"] for c in body["comments"]] == [0.0]


def test_comments_limit_and_truncation(client, people, video):
    add_comments(video, [1.0, 2.0, 3.0, 4.0])
    client.force_login(people["annotator"])
    body = client.get(comments_url(video, start=0, end=10, limit=2)).json()
    assert [c["time_s"] for c in body["comments"]] == [1.0, 2.0] and body["truncated"] is True
    body = client.get(comments_url(video, start=0, end=10, limit=4)).json()
    assert len(body["comments"]) == 4 and body["truncated"] is False


def test_comments_default_limit_caps_the_answer(client, people, video):
    add_comments(video, [i * 0.01 for i in range(80)])
    client.force_login(people["annotator"])
    body = client.get(comments_url(video, start=0, end=1)).json()
    assert len(body["comments"]) == 50 and body["truncated"] is True


@pytest.mark.parametrize(
    "params, message",
    [
        ({"end": 5}, "Give `start` in seconds"),
        ({"start": "abc", "end": 5}, "`start` must be a number of seconds"),
        ({"start": 0, "end": "nan"}, "`end` must be a finite number"),
        ({"start": 0, "end": "inf"}, "`end` must be a finite number"),
        ({"start": 5, "end": 4}, "`end` (4) must not be before `start` (5)"),
        ({"start": 0, "end": 601}, "Ask for at most 600 s"),
        ({"start": 0, "end": 5, "limit": 0}, "`limit` must be between 1 and 200"),
        ({"start": 0, "end": 5, "limit": 201}, "`limit` must be between 1 and 200"),
        ({"start": 0, "end": 5, "limit": "-1"}, "`limit` must be a whole number"),
        ({"start": 0, "end": 5, "limit": "ten"}, "`limit` must be a whole number"),
    ],
)
def test_comments_bad_parameters_get_a_clear_400(client, people, video, params, message):
    client.force_login(people["annotator"])
    response = client.get(comments_url(video, **params))
    assert response.status_code == 400
    assert response.json()["error"].startswith(message), response.json()


def test_comments_query_count_is_constant(client, people, video, django_assert_num_queries):
    add_comments(video, [i * 0.01 for i in range(150)])
    client.force_login(people["annotator"])
    client.get(comments_url(video, start=0, end=1))
    # session, user, project, membership, video, the window.
    with django_assert_num_queries(6):
        body = client.get(comments_url(video, start=0, end=2, limit=200)).json()
    assert len(body["comments"]) == 150
