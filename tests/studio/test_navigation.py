"""Queues and judge scores are in the navigation of every project page."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["studio:project_home", "videos:list", "releases:list", "annotator:work"])
def test_every_project_page_links_queues_and_scores(client, project, people, name):
    client.force_login(people["annotator"])
    body = client.get(reverse(name, args=[project.slug])).content.decode()
    assert 'class="site-nav"' in body
    assert reverse("reviewer:queues", args=[project.slug]) in body
    assert reverse("reviewer:score_list", args=[project.slug]) in body


def test_pages_outside_a_project_have_no_project_nav(client, people):
    client.force_login(people["annotator"])
    body = client.get(reverse("studio:project_list")).content.decode()
    assert 'class="site-nav"' not in body
