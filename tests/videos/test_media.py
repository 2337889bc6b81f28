from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.test import override_settings
from django.utils.http import http_date
from rest_framework.authtoken.models import Token

from tests import factories
from videos.media import CHUNK_SIZE, ByteRange, RangeNotSatisfiable, content_type_for, parse_range

# Every byte value, repeated: any off-by-one in a range shows as wrong bytes.
CONTENT = bytes(range(256)) * 40
SIZE = len(CONTENT)  # 10240


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, original=ContentFile(CONTENT, name="clip.mp4"), size_bytes=SIZE)


@pytest.fixture
def member(client, people):
    client.force_login(people["annotator"])
    return client


def _url(video, kind="original"):
    return f"/media/videos/{video.pk}/{kind}/"


def _body(response) -> bytes:
    # Consuming the stream lets the test client close the response (and the file) as a server would.
    return b"".join(response.streaming_content) if response.streaming else response.content


# --- Who may fetch -----------------------------------------------------------------------------


def test_member_gets_206_and_exactly_100_bytes(member, video):
    response = member.get(_url(video), headers={"Range": "bytes=0-99"})
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 0-99/{SIZE}"
    assert response["Content-Length"] == "100"
    assert response["Accept-Ranges"] == "bytes"
    assert _body(response) == CONTENT[:100]


def test_member_without_range_gets_the_whole_file(member, video):
    response = member.get(_url(video))
    assert response.status_code == 200
    assert response["Content-Type"] == "video/mp4"
    assert response["Content-Length"] == str(SIZE)
    assert response["Accept-Ranges"] == "bytes"
    assert "private" in response["Cache-Control"]
    assert _body(response) == CONTENT


def test_stranger_gets_the_same_404_as_a_missing_video(client, people, video):
    client.force_login(people["outsider"])
    assert client.get(_url(video)).status_code == 404
    assert client.get("/media/videos/999999/original/").status_code == 404


def test_anonymous_is_sent_to_login_and_gets_no_bytes(client, video):
    response = client.get(_url(video), headers={"Range": "bytes=0-99"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert CONTENT[:100] not in response.content


def test_superuser_sees_any_project(client, video):
    client.force_login(factories.UserFactory(is_superuser=True))
    assert _body(client.get(_url(video))) == CONTENT


def test_api_token_works_for_scripts(client, people, video):
    token = Token.objects.create(user=people["examiner"])
    response = client.get(_url(video), headers={"Authorization": f"Token {token.key}", "Range": "bytes=-10"})
    assert response.status_code == 206
    assert _body(response) == CONTENT[-10:]


def test_bad_token_is_401(client, video):
    response = client.get(_url(video), headers={"Authorization": "Token nope"})
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_a_strangers_token_is_404(client, people, video):
    token = Token.objects.create(user=people["outsider"])
    assert client.get(_url(video), headers={"Authorization": f"Token {token.key}"}).status_code == 404


def test_only_get_and_head(member, video):
    assert member.post(_url(video)).status_code == 405


def test_unknown_kind_is_404(member, video):
    assert member.get(f"/media/videos/{video.pk}/thumbnail/").status_code == 404


# --- Ranges, byte-exact ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header, start, end",
    [
        ("bytes=0-0", 0, 0),
        ("bytes=100-199", 100, 199),
        ("bytes=10000-", 10000, SIZE - 1),
        ("bytes=-1", SIZE - 1, SIZE - 1),
        ("bytes=-500", SIZE - 500, SIZE - 1),
        ("bytes=-99999", 0, SIZE - 1),  # suffix longer than the file: all of it
        ("bytes=10200-99999", 10200, SIZE - 1),  # end past the file: clamped
        ("bytes=0-10239", 0, SIZE - 1),
        ("BYTES = 5 - 9", 5, 9),  # unit is case-insensitive, whitespace tolerated
    ],
)
def test_single_ranges(member, video, header, start, end):
    response = member.get(_url(video), headers={"Range": header})
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {start}-{end}/{SIZE}"
    assert response["Content-Length"] == str(end - start + 1)
    assert _body(response) == CONTENT[start : end + 1]


@pytest.mark.parametrize("header", ["bytes=10240-", "bytes=99999-100000", "bytes=-0"])
def test_unsatisfiable_range_is_416(member, video, header):
    response = member.get(_url(video), headers={"Range": header})
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{SIZE}"


@pytest.mark.parametrize(
    "header",
    [
        "bytes=0-9,20-29",  # several ranges: whole file, as documented
        "bytes=abc",
        "bytes=9-5",
        "bytes=-",
        "items=0-9",
        "0-9",
    ],
)
def test_ranges_we_do_not_serve_partially_give_the_whole_file(member, video, header):
    response = member.get(_url(video), headers={"Range": header})
    assert response.status_code == 200
    assert "Content-Range" not in response
    assert _body(response) == CONTENT


def test_large_file_streams_in_chunks(member, project):
    data = bytes(range(256)) * 2048  # 512 KiB
    video = factories.VideoFactory(project=project, original=ContentFile(data, name="big.mp4"))
    response = member.get(_url(video), headers={"Range": "bytes=1000-300000"})
    assert response.streaming
    chunks = list(response.streaming_content)
    assert len(chunks) > 1 and max(len(c) for c in chunks) <= CHUNK_SIZE
    assert b"".join(chunks) == data[1000:300001]


def test_head_gives_the_headers_and_no_body(member, video):
    response = member.head(_url(video), headers={"Range": "bytes=0-99"})
    assert response.status_code == 206
    assert response["Content-Length"] == "100"
    assert response["Content-Range"] == f"bytes 0-99/{SIZE}"
    assert _body(response) == b""
    whole = member.head(_url(video))
    assert whole.status_code == 200 and whole["Content-Length"] == str(SIZE)


# --- Validators ------------------------------------------------------------------------------------


def test_if_range_with_the_current_etag_honours_the_range(member, video):
    etag = member.head(_url(video))["ETag"]
    response = member.get(_url(video), headers={"Range": "bytes=0-9", "If-Range": etag})
    assert response.status_code == 206
    assert _body(response) == CONTENT[:10]


def test_if_range_with_the_current_date_honours_the_range(member, video):
    last_modified = member.head(_url(video))["Last-Modified"]
    response = member.get(_url(video), headers={"Range": "bytes=0-9", "If-Range": last_modified})
    assert response.status_code == 206


@pytest.mark.parametrize("if_range", ['"stale"', 'W/"weak"', http_date(0)])
def test_if_range_that_no_longer_matches_sends_the_whole_file(member, video, if_range):
    response = member.get(_url(video), headers={"Range": "bytes=0-9", "If-Range": if_range})
    assert response.status_code == 200
    assert _body(response) == CONTENT


def test_a_changed_file_gets_a_new_etag(member, video, settings):
    before = member.head(_url(video))["ETag"]
    path = Path(settings.MEDIA_ROOT) / video.original.name
    path.write_bytes(CONTENT[::-1])
    after = member.head(_url(video))["ETag"]
    assert before != after


def test_if_none_match_gives_304(member, video):
    etag = member.head(_url(video))["ETag"]
    response = member.get(_url(video), headers={"If-None-Match": etag})
    assert response.status_code == 304
    assert response["ETag"] == etag


# --- Kinds and types -------------------------------------------------------------------------------


def test_proxy_falls_back_to_the_original(member, video):
    assert _body(member.get(_url(video, "proxy"))) == CONTENT


def test_proxy_when_there_is_one(member, project):
    video = factories.VideoFactory(
        project=project,
        original=ContentFile(b"original", name="source.mkv"),
        proxy=ContentFile(b"proxy bytes", name="source.webm"),
    )
    response = member.get(_url(video, "proxy"))
    assert response["Content-Type"] == "video/webm"
    assert _body(response) == b"proxy bytes"
    assert member.get(_url(video))["Content-Type"] == "video/x-matroska"


def test_poster(member, project, video):
    assert member.get(_url(video, "poster")).status_code == 404  # none yet
    video.poster = ContentFile(b"\xff\xd8jpeg", name="poster.jpg")
    video.save()
    response = member.get(_url(video, "poster"))
    assert response["Content-Type"] == "image/jpeg"
    assert _body(response) == b"\xff\xd8jpeg"


def test_original_is_offered_under_its_uploaded_name(member, video):
    video.original_filename = "Cooking show.mp4"
    video.save()
    assert member.get(_url(video))["Content-Disposition"] == 'inline; filename="Cooking show.mp4"'


def test_file_missing_from_storage_is_404(member, video, settings):
    (Path(settings.MEDIA_ROOT) / video.original.name).unlink()
    assert member.get(_url(video)).status_code == 404


@pytest.mark.parametrize(
    "name, expected",
    [
        ("a.mp4", "video/mp4"),
        ("a.MP4", "video/mp4"),
        ("a.webm", "video/webm"),
        ("a.mkv", "video/x-matroska"),
        ("a.mov", "video/quicktime"),
        ("poster.jpg", "image/jpeg"),
        ("poster.png", "image/png"),
        ("noextension", "application/octet-stream"),
    ],
)
def test_content_type_for(name, expected):
    assert content_type_for(name) == expected


# --- Production: nginx sends the bytes ----------------------------------------------------------------


@override_settings(MEDIA_ACCEL_REDIRECT_PREFIX="/protected-media/")
def test_accel_redirect_hands_the_file_to_nginx_after_the_check(member, video):
    response = member.get(_url(video), headers={"Range": "bytes=0-99"})
    assert response.status_code == 200
    assert response["X-Accel-Redirect"] == f"/protected-media/{video.original.name}"
    assert response["Content-Type"] == "video/mp4"
    assert _body(response) == b""


@override_settings(MEDIA_ACCEL_REDIRECT_PREFIX="/protected-media/")
def test_accel_redirect_quotes_the_path(member, video):
    # Files imported from a server folder keep their own names, which may need quoting.
    video.original.name = f"projects/{video.project_id}/videos/a b?#%.mp4"
    video.save()
    response = member.get(_url(video))
    assert response["X-Accel-Redirect"] == f"/protected-media/projects/{video.project_id}/videos/a%20b%3F%23%25.mp4"


@override_settings(MEDIA_ACCEL_REDIRECT_PREFIX="/protected-media/")
def test_accel_redirect_is_never_given_to_a_stranger_or_anonymous(client, people, video):
    anonymous = client.get(_url(video))
    assert anonymous.status_code == 302 and "X-Accel-Redirect" not in anonymous
    client.force_login(people["outsider"])
    stranger = client.get(_url(video))
    assert stranger.status_code == 404 and "X-Accel-Redirect" not in stranger


# --- parse_range on its own ------------------------------------------------------------------------


def test_parse_range_edge_cases():
    assert parse_range("bytes=0-99", 1000) == ByteRange(0, 99)
    assert parse_range("bytes=0-99", 0) is None  # empty file: nothing to slice
    assert parse_range("bytes=0-1,2-3", 1000) is None
    with pytest.raises(RangeNotSatisfiable):
        parse_range("bytes=1000-", 1000)
    assert ByteRange(5, 9).length == 5


def test_object_storage_gets_a_presigned_redirect_after_the_permission_check(client, people, video, monkeypatch):
    from django.core.files.storage import FileSystemStorage

    monkeypatch.setattr(FileSystemStorage, "url", lambda self, name: f"https://objects.example/{name}?sig=abc")
    with override_settings(MEDIA_REDIRECT_TO_STORAGE_URL=True):
        client.force_login(people["outsider"])
        assert client.get(_url(video)).status_code == 404
        client.force_login(people["annotator"])
        response = client.get(_url(video))
    assert response.status_code == 302
    assert response["Location"] == f"https://objects.example/{video.original.name}?sig=abc"
