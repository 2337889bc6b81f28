import pytest

from api.pagination import StandardPagination
from projects.models import Role
from tests import factories

from .error_shape import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def member_of_many(client):
    user = factories.UserFactory(username="many")
    for i in range(7):
        factories.MembershipFactory(project=factories.ProjectFactory(name=f"P{i:02d}"), user=user, role=Role.ADMIN)
    client.force_login(user)
    return user


def test_pages_have_the_documented_shape(client, member_of_many):
    body = client.get("/api/projects/?page_size=3&page=2").json()
    assert set(body) == {"count", "page", "page_size", "total_pages", "next", "previous", "results"}
    assert (body["count"], body["page"], body["page_size"], body["total_pages"]) == (7, 2, 3, 3)
    assert [p["name"] for p in body["results"]] == ["P03", "P04", "P05"]
    assert body["next"] == "http://testserver/api/projects/?page=3&page_size=3"
    assert body["previous"] == "http://testserver/api/projects/?page_size=3"


def test_walking_the_pages_returns_every_row_once(client, member_of_many):
    names, url = [], "/api/projects/?page_size=2"
    while url:
        body = client.get(url).json()
        names += [p["name"] for p in body["results"]]
        url = body["next"]
    assert names == [f"P{i:02d}" for i in range(7)]


def test_page_size_is_capped(client, member_of_many):
    assert client.get("/api/projects/?page_size=100000").json()["page_size"] == StandardPagination.max_page_size == 500


@pytest.mark.parametrize("query", ["page_size=lots", "page_size=", "page_size=0", "page=two", "page=0", "page=1.5"])
def test_a_page_or_page_size_that_is_not_a_positive_integer_is_400(client, member_of_many, query):
    assert_error(client.get(f"/api/projects/?{query}"), 400, "validation_error")


def test_a_query_parameter_given_twice_is_400(client, member_of_many):
    assert_error(client.get("/api/projects/?page_size=2&page_size=3"), 400, "validation_error")


def test_page_past_the_end_is_404(client, member_of_many):
    assert_error(client.get("/api/projects/?page=99"), 404, "not_found")
