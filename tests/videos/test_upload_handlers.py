"""A non-member's upload is refused before its body is stored: the view authorises from the URL first,
and the upload handler refuses files sent to a project the sender cannot see."""

import io

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from tests import factories
from videos.upload_handlers import HashingUploadHandler

pytestmark = pytest.mark.django_db


@pytest.fixture
def chunks(monkeypatch):
    """Every chunk an upload handler was given to store."""
    received: list[int] = []
    original = HashingUploadHandler.receive_data_chunk

    def spy(self, raw_data, start):
        received.append(len(raw_data))
        return original(self, raw_data, start)

    monkeypatch.setattr(HashingUploadHandler, "receive_data_chunk", spy)
    return received


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, has_audio=True)


def _body() -> dict:
    # Larger than FILE_UPLOAD_MAX_MEMORY_SIZE would not matter: the handler writes every chunk to disk.
    return {"language": "en", "file": io.BytesIO(b"\x00" * (256 * 1024))}


def _url(project, video) -> str:
    return f"/api/projects/{project.slug}/videos/{video.pk}/transcribe/"


def test_a_non_member_token_upload_to_transcribe_is_refused_unread(client, project, people, video, chunks):
    token, _ = Token.objects.get_or_create(user=people["outsider"])
    response = client.post(_url(project, video), _body(), headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 404
    assert chunks == []


def test_a_non_member_session_upload_is_refused_unread_even_by_the_csrf_check(project, people, video, chunks):
    client = Client(enforce_csrf_checks=True)  # the CSRF check reads the form: the handler must refuse
    client.force_login(people["outsider"])
    client.cookies["csrftoken"] = "a" * 32  # with a cookie, the check reads the form for its token
    response = client.post(_url(project, video), _body())
    # Refused (not found, or 415: the step takes JSON, not a multipart upload), and nothing stored.
    assert response.status_code in (403, 404, 415)
    assert chunks == []


def test_an_anonymous_upload_is_refused_unread(client, project, video, chunks):
    assert client.post(_url(project, video), _body()).status_code == 401
    assert chunks == []


def test_a_member_without_the_role_is_refused_before_the_body(client, project, people, video, chunks):
    token, _ = Token.objects.get_or_create(user=people["annotator"])
    response = client.post(_url(project, video), _body(), headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 403
    assert chunks == []


def test_an_admin_upload_is_still_read(client, project, people, video, chunks, monkeypatch):
    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())
    token, _ = Token.objects.get_or_create(user=people["admin"])
    # An endpoint that takes files: the video upload (this file is no video: refused after it is read).
    url = f"/api/projects/{project.slug}/videos/"
    response = client.post(url, _body(), headers={"Authorization": f"Token {token.key}"})
    assert response.status_code in (201, 422)
    assert sum(chunks) == 256 * 1024  # the handler still stores what a permitted caller sends
