import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from api.auth import TokenObtainThrottle
from tests import factories

from .error_shape import assert_error

pytestmark = pytest.mark.django_db

OBTAIN = "/api/auth/token/"
REVOKE = "/api/auth/token/revoke/"


def _obtain(client, username, password="pw"):
    return client.post(OBTAIN, {"username": username, "password": password}, content_type="application/json")


def test_urls_are_where_the_docs_say():
    assert reverse("api:token-obtain") == OBTAIN
    assert reverse("api:token-revoke") == REVOKE


def test_obtain_returns_a_token_that_authenticates_api_calls(client, project, people):
    response = _obtain(client, people["annotator"].username)
    assert response.status_code == 200
    body = response.json()
    assert body["username"] == people["annotator"].username
    assert Token.objects.get(user=people["annotator"]).key == body["token"]

    listed = client.get("/api/projects/", headers={"Authorization": f"Token {body['token']}"})
    assert listed.status_code == 200
    assert [p["slug"] for p in listed.json()["results"]] == [project.slug]


def test_obtain_again_rotates_the_token(client, people):
    first = _obtain(client, people["annotator"].username).json()["token"]
    second = _obtain(client, people["annotator"].username).json()["token"]
    assert first != second
    stale = client.get("/api/projects/", headers={"Authorization": f"Token {first}"})
    assert_error(stale, 401, "authentication_failed")
    assert client.get("/api/projects/", headers={"Authorization": f"Token {second}"}).status_code == 200


def test_obtain_ignores_a_stale_token_header(client, people):
    """A script re-logging in after revocation still sends its old header; that must not block it."""
    response = client.post(
        OBTAIN,
        {"username": people["annotator"].username, "password": "pw"},
        content_type="application/json",
        headers={"Authorization": "Token not-a-real-token"},
    )
    assert response.status_code == 200


def test_wrong_password_is_401_in_the_error_shape(client, people):
    response = _obtain(client, people["annotator"].username, password="wrong")
    assert_error(response, 401, "authentication_failed")
    assert response["WWW-Authenticate"] == "Token"
    assert not Token.objects.filter(user=people["annotator"]).exists()


def test_inactive_user_gets_no_token(client):
    user = factories.UserFactory(is_active=False)
    assert_error(_obtain(client, user.username), 401, "authentication_failed")


def test_missing_fields_are_a_validation_error_per_field(client):
    error = assert_error(client.post(OBTAIN, {}, content_type="application/json"), 400, "validation_error")
    assert set(error["details"]) == {"username", "password"}


def test_malformed_json_is_a_parse_error(client):
    assert_error(client.post(OBTAIN, "{not json", content_type="application/json"), 400, "parse_error")


def test_obtain_is_throttled_per_client(client, people, monkeypatch):
    monkeypatch.setattr(TokenObtainThrottle, "rate", "2/min")
    for _ in range(2):
        assert _obtain(client, people["annotator"].username, password="guess").status_code == 401
    response = _obtain(client, people["annotator"].username)
    error = assert_error(response, 429, "throttled")
    assert error["details"]["retry_after_s"] > 0
    assert int(response["Retry-After"]) > 0


def test_revoke_deletes_the_token(client, people, token_for):
    headers = token_for(people["annotator"])
    assert client.post(REVOKE, headers=headers).status_code == 204
    assert not Token.objects.filter(user=people["annotator"]).exists()
    assert_error(client.get("/api/projects/", headers=headers), 401, "authentication_failed")


def test_revoke_needs_a_login(client):
    assert_error(client.post(REVOKE), 401, "not_authenticated")


def test_session_post_without_csrf_token_is_403(people):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(people["annotator"])
    error = assert_error(browser.post(REVOKE), 403, "permission_denied")
    assert "CSRF" in error["message"]
