"""Password guessing: django-axes locks an account (and an address) after the failure limit, for the
browser login and the API token endpoint alike, whatever X-Forwarded-For a client sends."""

import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from django.core.management import call_command
from django.test import RequestFactory

from config.client_address import client_ip
from tests import factories
from tests.api.error_shape import assert_error

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
TOKEN = "/api/auth/token/"


@pytest.fixture(autouse=True)
def _fresh_throttles():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def user(db):
    return factories.UserFactory(username="ann")


def _browser_login(client, password, forwarded_for="198.51.100.1"):
    return client.post(LOGIN, {"username": "ann", "password": password}, headers={"X-Forwarded-For": forwarded_for})


def _token(client, password, forwarded_for="198.51.100.1"):
    return client.post(
        TOKEN,
        {"username": "ann", "password": password},
        content_type="application/json",
        headers={"X-Forwarded-For": forwarded_for},
    )


def test_wrong_passwords_lock_the_browser_login_even_with_a_new_forwarded_address_each_time(client, user, settings):
    limit = settings.AXES_FAILURE_LIMIT
    assert limit <= 30
    for n in range(limit - 1):
        assert _browser_login(client, "guess", forwarded_for=f"203.0.113.{n}").status_code == 200
    response = _browser_login(client, "guess", forwarded_for="203.0.113.250")
    assert response.status_code == 429
    assert b"Too many failed login attempts" in response.content
    assert b"ask an administrator to unlock it" in response.content
    # The right password does not get in while locked.
    assert _browser_login(client, factories.PASSWORD, forwarded_for="192.0.2.7").status_code == 429
    assert "_auth_user_id" not in client.session


def test_wrong_passwords_lock_the_token_endpoint_in_the_api_error_shape(client, user, settings):
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        assert_error(_token(client, "guess", forwarded_for=f"203.0.113.{n}"), 401, "authentication_failed")
    error = assert_error(_token(client, "guess", forwarded_for="203.0.113.250"), 429, "locked_out")
    assert "Too many failed login attempts" in error["message"]
    assert_error(_token(client, factories.PASSWORD, forwarded_for="192.0.2.7"), 429, "locked_out")


def test_browser_failures_count_towards_the_api_lockout(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _browser_login(client, "guess")
    assert_error(_token(client, factories.PASSWORD), 429, "locked_out")


def test_an_admin_unlocks_the_account(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _token(client, "guess")
    assert AccessAttempt.objects.filter(username="ann").exists()
    call_command("axes_reset_username", "ann")
    call_command("axes_reset_ip", "127.0.0.1")
    assert _token(client, factories.PASSWORD).status_code == 200


def test_a_browser_login_below_the_limit_resets_the_count(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _browser_login(client, "guess")
    assert _browser_login(client, factories.PASSWORD).status_code == 302
    client.logout()
    assert _browser_login(client, "guess").status_code == 200


@pytest.mark.parametrize(
    "count, forwarded, expected",
    [
        (0, "203.0.113.9", "10.0.0.2"),  # no trusted proxy: the header is the client's own words
        (1, "203.0.113.9", "203.0.113.9"),
        (1, "6.6.6.6, 203.0.113.9", "203.0.113.9"),  # a client-written first entry is ignored
        (2, "6.6.6.6, 203.0.113.9, 10.0.0.1", "203.0.113.9"),
        (2, "203.0.113.9", "10.0.0.2"),  # fewer hops than proxies: only the socket is trusted
    ],
)
def test_client_address_comes_from_trusted_proxies_only(settings, count, forwarded, expected):
    settings.VIDQA_TRUSTED_PROXY_COUNT = count
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == expected


def test_server_side_logins_without_a_request_still_work(client, user):
    assert client.login(username="ann", password=factories.PASSWORD)
