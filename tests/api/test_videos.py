import pytest
from django.core.files.base import ContentFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import factories
from videos.models import CurationStatus, Split, VideoStatus

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


def _names(response):
    assert response.status_code == 200, response.content
    return [v["name"] for v in response.json()["results"]]


@pytest.fixture
def videos(project):
    return {
        "a": factories.VideoFactory(
            project=project,
            name="a",
            status=VideoStatus.READY,
            split=Split.TRAIN,
            curation_status=CurationStatus.KEPT,
            duration_s=30.0,
        ),
        "b": factories.VideoFactory(
            project=project,
            name="b",
            status=VideoStatus.FAILED,
            split=Split.UNASSIGNED,
            curation_status=CurationStatus.REJECTED,
            duration_s=10.0,
        ),
        "c": factories.VideoFactory(
            project=project,
            name="c",
            status=VideoStatus.READY,
            split=Split.EVAL,
            curation_status=CurationStatus.PENDING,
            duration_s=20.0,
        ),
    }


def test_list_is_scoped_to_the_project(client, project, people, videos):
    factories.VideoFactory(name="elsewhere")  # another project
    client.force_login(people["reviser"])
    assert _names(client.get(f"/api/projects/{project.slug}/videos/")) == ["a", "b", "c"]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("status=ready", ["a", "c"]),
        ("status=failed", ["b"]),
        ("curation_status=kept", ["a"]),
        ("curation_status=pending", ["c"]),
        ("split=train", ["a"]),
        ("split=unassigned", ["b"]),
        ("status=ready&split=eval", ["c"]),
        ("ordering=-name", ["c", "b", "a"]),
        ("ordering=duration_s", ["b", "c", "a"]),
        ("ordering=-duration_s", ["a", "c", "b"]),
        ("ordering=not_a_field", ["a", "b", "c"]),
    ],
)
def test_filters_and_ordering(client, project, people, videos, query, expected):
    client.force_login(people["annotator"])
    assert _names(client.get(f"/api/projects/{project.slug}/videos/?{query}")) == expected


def test_list_for_a_stranger_is_404(client, project, people, videos):
    client.force_login(people["outsider"])
    assert_error(client.get(f"/api/projects/{project.slug}/videos/"), 404, "not_found")


def test_list_query_count_does_not_grow_with_videos(client, project, people, token_for):
    headers = token_for(people["annotator"])

    def count_queries():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/api/projects/{project.slug}/videos/", headers=headers).status_code == 200
        return len(ctx.captured_queries)

    video = factories.VideoFactory(project=project)
    factories.ClipFactory(video=video, index=0)
    few = count_queries()
    for _ in range(12):
        video = factories.VideoFactory(project=project, poster=ContentFile(b"jpg", name="poster.jpg"))
        for index in range(2):
            factories.ClipFactory(video=video, index=index)
    many = count_queries()
    assert few == many
    # Token + user, project, the caller's roles, count, rows.
    assert many <= 5


def test_detail_has_probe_metadata_clip_count_and_media_links(client, project, people):
    video = factories.VideoFactory(project=project, video_codec="h264", has_audio=True, probe={"format": {}})
    for index in range(3):
        factories.ClipFactory(video=video, index=index)
    client.force_login(people["annotator"])
    body = client.get(f"/api/projects/{project.slug}/videos/{video.pk}/").json()
    assert body["id"] == video.pk
    assert (body["duration_s"], body["fps"], body["width"], body["height"]) == (120.0, 25.0, 1280, 720)
    assert body["video_codec"] == "h264" and body["has_audio"] is True
    assert body["clip_count"] == 3
    media = body["links"]["media"]
    assert media["original"] == f"http://testserver/media/videos/{video.pk}/original/"
    assert media["proxy"] == f"http://testserver/media/videos/{video.pk}/proxy/"
    assert media["poster"] is None
    # The link works for the same caller.
    assert client.get(media["original"]).status_code == 200


def test_detail_gives_the_same_404_for_another_projects_video(client, project, people):
    foreign = factories.VideoFactory()
    client.force_login(people["annotator"])
    wrong_project = client.get(f"/api/projects/{project.slug}/videos/{foreign.pk}/")
    missing = client.get(f"/api/projects/{project.slug}/videos/999999/")
    assert assert_error(wrong_project, 404, "not_found") == assert_error(missing, 404, "not_found")


def test_detail_for_a_stranger_is_404(client, project, people):
    video = factories.VideoFactory(project=project)
    client.force_login(people["outsider"])
    assert_error(client.get(f"/api/projects/{project.slug}/videos/{video.pk}/"), 404, "not_found")
