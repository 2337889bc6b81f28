"""JSON bodies only, typed as the schema says; an empty form is no body at all."""

import pytest

from tests import factories
from videos.curation import video_curate

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def url(project):
    video = factories.VideoFactory(project=project, duration_s=120.0, scenes=[[0, 40], [40, 80], [80, 120]])
    video_curate(video=video)
    return f"/api/projects/{project.slug}/videos/{video.pk}/curation/"


@pytest.fixture
def admin(client, people):
    client.force_login(people["admin"])
    return people["admin"]


def test_a_json_body_is_read(client, admin, url):
    assert client.post(url, {"status": "kept", "note": "fine"}, content_type="application/json").status_code == 200


def test_a_form_with_fields_is_415(client, admin, url):
    assert_error(client.post(url, {"status": "kept"}), 415, "unsupported_media_type")


def test_an_empty_form_is_no_body(client, admin, url):
    # The test client's bare post() sends an empty multipart form: the serializer sees no fields.
    error = assert_error(client.post(url), 400, "validation_error")
    assert set(error["details"]) == {"status"}


@pytest.mark.parametrize("note", [0, 1.5, True, [], {}])
def test_a_json_value_of_another_type_is_refused_not_coerced(client, admin, url, note):
    body = {"status": "kept", "note": note}
    error = assert_error(client.post(url, body, content_type="application/json"), 400, "validation_error")
    assert set(error["details"]) == {"note"}


def test_a_json_string_is_kept_as_sent(client, admin, url):
    body = {"status": "kept", "note": "  spaced  "}
    response = client.post(url, body, content_type="application/json")
    assert {d["override_note"] for d in response.json()["decisions"]} == {"  spaced  "}
