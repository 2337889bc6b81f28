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
