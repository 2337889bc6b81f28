import logging

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions

from api.errors import exception_handler
from api.projects import ProjectListApi

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


def test_anonymous_gets_401_with_the_scheme_to_use(client):
    response = client.get("/api/projects/")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_bad_token_is_401(client):
    assert_error(client.get("/api/projects/", headers={"Authorization": "Token nope"}), 401, "authentication_failed")


def test_missing_project_is_404(client, people):
    client.force_login(people["annotator"])
    error = assert_error(client.get("/api/projects/no-such-project/"), 404, "not_found")
    assert error["message"] == "No such project."


def test_method_not_allowed_is_405(client, people):
    client.force_login(people["annotator"])
    response = client.delete("/api/projects/")
    assert_error(response, 405, "method_not_allowed")
    assert "GET" in response["Allow"]


def test_invalid_filter_is_a_validation_error_naming_the_field(client, project, people):
    client.force_login(people["annotator"])
    error = assert_error(client.get(f"/api/projects/{project.slug}/videos/?status=bogus"), 400, "validation_error")
    assert list(error["details"]) == ["status"]
    assert "bogus" in error["details"]["status"][0]


def test_unexpected_exception_is_500_without_internals(client, people, monkeypatch, caplog):
    def explode(self):
        raise RuntimeError("secret internals: password=hunter2")

    monkeypatch.setattr(ProjectListApi, "get_queryset", explode)
    client.force_login(people["annotator"])
    with caplog.at_level(logging.ERROR, logger="api.errors"):
        response = client.get("/api/projects/")
    assert_error(response, 500, "server_error")
    assert b"hunter2" not in response.content
    assert b"Traceback" not in response.content
    # The traceback is not lost: it is in the log.
    assert any(r.exc_info and "hunter2" in str(r.exc_info[1]) for r in caplog.records)


def test_unknown_api_path_answers_in_the_error_shape(client):
    assert_error(client.get("/api/nothing-here/"), 404, "not_found")


def test_missing_trailing_slash_gets_a_hint(client):
    error = assert_error(client.get("/api/projects"), 404, "not_found")
    assert "/api/projects/" in error["message"]


def _reshape(exc):
    return exception_handler(exc, {"request": None, "view": None}).data


def test_django_exceptions_keep_their_message():
    assert _reshape(Http404("No such video.")) == {
        "error": {"code": "not_found", "message": "No such video.", "details": {}}
    }
    assert _reshape(PermissionDenied("Your role does not allow this."))["error"] == {
        "code": "permission_denied",
        "message": "Your role does not allow this.",
        "details": {},
    }


def test_custom_code_on_an_api_exception_is_kept():
    assert _reshape(exceptions.PermissionDenied("Examiners only.", code="role_required"))["error"]["code"] == (
        "role_required"
    )


def test_list_shaped_validation_errors_go_under_non_field_errors():
    error = _reshape(exceptions.ValidationError(["Pick at least one video."]))["error"]
    assert error["code"] == "validation_error"
    assert error["details"] == {"non_field_errors": ["Pick at least one video."]}
