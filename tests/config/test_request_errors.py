"""Bodies the server will not take get 400/413, in the API's error shape under /api/, never a 500."""

import logging

import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token

from tests.api.error_shape import assert_error

pytestmark = pytest.mark.django_db

TOKEN = "/api/auth/token/"
LOGIN = "/accounts/login/"
SEVENTEEN_MB = 17 * 1024 * 1024


@pytest.fixture(autouse=True)
def _fresh_throttles():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def no_error_logs(caplog):
    caplog.set_level(logging.WARNING)
    yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]


def _fields(n: int) -> dict:
    return {f"f{i}": "x" for i in range(n)}


def _post_fields(client, url, encoding, n, headers=None):
    if encoding == "multipart":
        return client.post(url, _fields(n), headers=headers or {})
    body = "&".join(f"f{i}=x" for i in range(n))
    return client.post(url, body, content_type="application/x-www-form-urlencoded", headers=headers or {})


@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_more_than_a_thousand_fields_is_400_in_the_api_shape(client, project, people, no_error_logs, encoding):
    assert_error(_post_fields(client, TOKEN, encoding, 1001), 400, "too_many_fields")
    url = f"/api/projects/{project.slug}/imports/"
    # Anonymous on a project endpoint: refused before the body is read.
    assert_error(_post_fields(client, url, encoding, 1001), 401, "not_authenticated")
    token, _ = Token.objects.get_or_create(user=people["admin"])
    headers = {"Authorization": f"Token {token.key}"}
    assert_error(_post_fields(client, url, encoding, 1001, headers), 400, "too_many_fields")


def test_token_endpoint_with_1001_fields(client, no_error_logs):
    error = assert_error(client.post(TOKEN, _fields(1001)), 400, "too_many_fields")
    assert "1000" in error["message"]


def test_a_17_mb_body_is_413_in_the_api_shape(client, no_error_logs):
    response = client.post(TOKEN, b"x" * SEVENTEEN_MB, content_type="application/json")
    assert_error(response, 413, "request_too_large")


def test_a_17_mb_form_field_in_multipart_is_413(client, no_error_logs):
    response = client.post(TOKEN, {"username": "x" * SEVENTEEN_MB, "password": "p"})
    assert_error(response, 413, "request_too_large")


def test_malformed_multipart_is_400_in_the_api_shape(client, no_error_logs):
    response = client.generic("POST", TOKEN, b"--nope\r\ngarbage", content_type="multipart/form-data")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert set(response.json()["error"]) == {"code", "message", "details"}


def test_browser_pages_answer_a_plain_400_and_413(client, no_error_logs):
    response = client.post(LOGIN, _fields(1001))
    assert response.status_code == 400 and b"more than 1000 fields" in response.content
    response = client.post(LOGIN, b"x=" + b"y" * SEVENTEEN_MB, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413 and b"larger than" in response.content
    response = client.generic("POST", LOGIN, b"--nope\r\ngarbage", content_type="multipart/form-data")
    assert response.status_code == 400 and b"multipart" in response.content


@pytest.mark.parametrize("path", ["/api/nope/", "/api/nope", "/api/projects/x/videos/1/nope/"])
def test_unknown_api_paths_answer_json_404(client, path):
    response = client.get(path)
    assert_error(response, 404, "not_found")


def test_api_server_errors_answer_json(client, rf):
    from config.request_errors import page_not_found, server_error

    response = server_error(rf.get("/api/projects/"))
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    response = page_not_found(rf.get("/api/whatever/"), None)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


def test_browser_forms_the_csrf_check_would_read_answer_400_and_413(no_error_logs):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = "a" * 32  # with a cookie, CsrfViewMiddleware reads the form for its token
    assert client.post(LOGIN, _fields(1001)).status_code == 400
    response = client.generic("POST", LOGIN, b"--nope\r\ngarbage", content_type="multipart/form-data")
    assert response.status_code == 400
    response = client.post(LOGIN, {"x": "y" * SEVENTEEN_MB})
    assert response.status_code == 413 and b"larger than" in response.content
