"""403, 404 and 500 outside the API are pages in the site's style with a way back; the API keeps JSON."""

import pytest
from django.urls import reverse

from config.request_errors import server_error


@pytest.mark.django_db
def test_a_missing_page_is_styled_and_leads_back(client, people):
    client.force_login(people["annotator"])
    response = client.get("/p/no-such-project/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "css/app.css" in body and 'class="topbar"' in body
    assert "Nothing here" in body and reverse("studio:project_list") in body


@pytest.mark.django_db
def test_a_refused_page_says_why_and_leads_back(client, project, people):
    client.force_login(people["annotator"])
    response = client.post(reverse("reviewer:queues", args=[project.slug]), {"name": "x"})
    body = response.content.decode()
    assert response.status_code == 403
    assert "You may not do this" in body and "Only project admins define queues." in body
    assert reverse("studio:project_list") in body and "css/app.css" in body


def test_the_server_error_page_needs_neither_database_nor_context(rf):
    # No django_db mark: any query here would fail the test.
    response = server_error(rf.get("/p/x/"))
    body = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in body and "css/app.css" in body
    assert reverse("studio:project_list") in body


@pytest.mark.django_db
def test_the_api_still_answers_json(client, people):
    client.force_login(people["annotator"])
    response = client.get("/api/nope/")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
