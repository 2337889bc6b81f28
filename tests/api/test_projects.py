import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from projects.models import Role
from tests import factories

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


def _slugs(response):
    assert response.status_code == 200, response.content
    return [p["slug"] for p in response.json()["results"]]


def test_a_user_sees_only_their_projects(client, project, people):
    client.force_login(people["outsider"])
    outsider_project = people["outsider"].memberships.get().project
    assert _slugs(client.get("/api/projects/")) == [outsider_project.slug]

    client.force_login(people["examiner"])
    assert _slugs(client.get("/api/projects/")) == [project.slug]


def test_a_superuser_sees_every_project(client, project, people):
    factories.ProjectFactory.create_batch(2)
    admin = factories.UserFactory(is_superuser=True, is_staff=True)
    client.force_login(admin)
    listed = client.get("/api/projects/").json()
    assert listed["count"] == 4  # project, the outsider's, and two more
    assert all(p["roles"] == [] for p in listed["results"])


def test_a_person_with_several_roles_appears_once_with_all_roles(client, project):
    user = factories.UserFactory()
    for role in (Role.REVISER, Role.ANNOTATOR):
        factories.MembershipFactory(project=project, user=user, role=role)
    factories.VideoFactory.create_batch(3, project=project)
    client.force_login(user)
    [row] = client.get("/api/projects/").json()["results"]
    assert row["roles"] == ["annotator", "reviser"]
    assert row["video_count"] == 3  # not multiplied by the two membership rows
    assert row["links"]["self"] == f"http://testserver/api/projects/{project.slug}/"
    assert row["links"]["videos"] == f"http://testserver/api/projects/{project.slug}/videos/"


def test_list_query_count_does_not_grow_with_projects(client, token_for):
    user = factories.UserFactory()
    headers = token_for(user)

    def count_queries():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/api/projects/", headers=headers).status_code == 200
        return len(ctx.captured_queries)

    project = factories.ProjectFactory()
    factories.MembershipFactory(project=project, user=user)
    few = count_queries()
    for _ in range(15):
        other = factories.ProjectFactory()
        factories.MembershipFactory(project=other, user=user, role=Role.ADMIN)
        factories.MembershipFactory(project=other, user=user, role=Role.EXAMINER)
        factories.VideoFactory.create_batch(2, project=other)
    many = count_queries()
    assert few == many
    # Token + user, count, rows, the caller's memberships.
    assert many <= 4


def test_list_query_count_pinned(client, django_assert_num_queries, token_for):
    user = factories.UserFactory()
    headers = token_for(user)
    for _ in range(5):
        factories.MembershipFactory(user=user)
    with django_assert_num_queries(4):
        assert client.get("/api/projects/", headers=headers).status_code == 200


def test_detail_for_a_member(client, project, people):
    factories.VideoFactory.create_batch(2, project=project)
    client.force_login(people["examiner"])
    body = client.get(f"/api/projects/{project.slug}/").json()
    assert body["slug"] == project.slug
    assert body["roles"] == ["examiner"]
    assert body["video_count"] == 2
    assert body["judge_threshold"] == 90


def test_detail_gives_the_same_404_for_missing_and_not_yours(client, project, people):
    client.force_login(people["outsider"])
    not_yours = client.get(f"/api/projects/{project.slug}/")
    missing = client.get("/api/projects/does-not-exist/")
    assert assert_error(not_yours, 404, "not_found") == assert_error(missing, 404, "not_found")


def test_detail_for_anonymous_is_401_not_404(client, project):
    assert_error(client.get(f"/api/projects/{project.slug}/"), 401, "not_authenticated")


# --- create, settings, archive ---


def _staff(client):
    user = factories.UserFactory(is_staff=True)
    client.force_login(user)
    return user


def test_create_from_a_preset(client):
    user = _staff(client)
    response = client.post(
        "/api/projects/", {"name": "Streams", "preset": "livibench"}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["slug"] == "streams" and body["kind"] == "livibench"
    assert body["min_complexity"] == 3 and body["judge_kinds"] == ["mcq"]
    assert body["taxonomies"]["tasks"]
    assert body["archived_at"] is None
    assert Role.ADMIN in [m.role for m in user.memberships.all()]


def test_create_refused_for_a_project_admin_without_the_permission(client, people):
    client.force_login(people["admin"])
    response = client.post("/api/projects/", {"name": "X"}, content_type="application/json")
    assert_error(response, 403, "project_refused")


def test_create_validation_errors_in_the_one_shape(client, project):
    _staff(client)
    response = client.post(
        "/api/projects/", {"name": "X", "preset": "nope", "slug": project.slug}, content_type="application/json"
    )
    assert "preset" in assert_error(response, 400, "validation_error")["details"]
    response = client.post("/api/projects/", {"name": "X", "slug": project.slug}, content_type="application/json")
    assert "slug" in assert_error(response, 400, "validation_error")["details"]


def test_create_copying_from_a_project_not_administered_is_404(client, project):
    _staff(client)
    response = client.post("/api/projects/", {"name": "X", "copy_from": project.slug}, content_type="application/json")
    assert_error(response, 404, "not_found")


def test_settings_read_and_patch(client, project, people):
    client.force_login(people["admin"])
    url = f"/api/projects/{project.slug}/settings/"
    assert client.get(url).json()["min_scenes"] == 5
    response = client.patch(
        url,
        {"min_scenes": 6, "judge_kinds": ["mcq"], "taxonomies": {"skills": [{"code": "A", "name": "Alpha"}]}},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    project.refresh_from_db()
    assert project.min_scenes == 6 and project.models_per_step["judge_kinds"] == ["mcq"]
    assert project.taxonomies["skills"] == [{"code": "A", "name": "Alpha"}]


def test_settings_patch_refuses_bad_taxonomies_and_contradictions(client, project, people):
    client.force_login(people["admin"])
    url = f"/api/projects/{project.slug}/settings/"
    bad = {"skills": [{"code": "A", "name": "x"}, {"code": "A", "name": ""}]}
    details = assert_error(
        client.patch(url, {"taxonomies": bad}, content_type="application/json"), 400, "validation_error"
    )["details"]
    assert any("used twice" in m for m in details["taxonomies"])
    response = client.patch(url, {"min_scenes": 30}, content_type="application/json")
    assert_error(response, 400, "validation_error")
    project.refresh_from_db()
    assert project.min_scenes == 5


def test_settings_are_for_admins(client, project, people):
    client.force_login(people["annotator"])
    assert_error(client.get(f"/api/projects/{project.slug}/settings/"), 403, "permission_denied")


def test_archive_and_unarchive(client, project, people):
    client.force_login(people["admin"])
    body = client.post(f"/api/projects/{project.slug}/archive/").json()
    assert body["archived_at"] is not None
    # Still readable, and the claim is a plain refusal.
    assert client.get(f"/api/projects/{project.slug}/").status_code == 200
    queue = factories.ReviewQueueFactory(project=project, members=[people["admin"]])
    response = client.post(f"/api/projects/{project.slug}/queues/{queue.pk}/claim/")
    assert "archived" in assert_error(response, 409, "project_archived")["message"]
    body = client.post(f"/api/projects/{project.slug}/unarchive/").json()
    assert body["archived_at"] is None


def test_list_shows_archived_projects_with_their_date_and_the_same_query_count(
    client, django_assert_num_queries, token_for
):
    user = factories.UserFactory()
    headers = token_for(user)
    for _ in range(3):
        factories.MembershipFactory(user=user, role=Role.ADMIN)
    archived = factories.MembershipFactory(user=user, role=Role.ADMIN).project
    client.force_login(user)
    client.post(f"/api/projects/{archived.slug}/archive/")
    client.logout()
    with django_assert_num_queries(4):
        response = client.get("/api/projects/", headers=headers)
    rows = {row["slug"]: row for row in response.json()["results"]}
    assert len(rows) == 4 and rows[archived.slug]["archived_at"] is not None


def test_copying_settings_through_the_api_copies_the_prompts_the_source_tuned(client):
    from llm.models import PromptTemplate
    from llm.prompts import template_update
    from projects.services import project_create

    staff = _staff(client)
    source = project_create(user=staff, name="Tuned", preset="svbench")
    template_update(project=source, key="qa_chain", body="Ask about {clip_start}.", user=staff)
    response = client.post(
        "/api/projects/", {"name": "Copy", "copy_from": source.slug}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    [copied] = PromptTemplate.objects.filter(project__slug="copy", is_active=True)
    assert (copied.key, copied.body) == ("qa_chain", "Ask about {clip_start}.")


def test_a_manifest_import_into_an_archived_project_is_refused_and_starts_nothing(client, project, people):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from jobs.models import BackgroundJob

    client.force_login(people["admin"])
    client.post(f"/api/projects/{project.slug}/archive/")
    response = client.post(
        f"/api/projects/{project.slug}/imports/", {"file": SimpleUploadedFile("m.csv", b"path\n/tmp/a.mp4\n")}
    )
    assert "archived" in assert_error(response, 409, "project_archived")["message"]
    assert not BackgroundJob.objects.filter(project=project).exists()
