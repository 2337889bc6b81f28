"""The New project page, the settings page's taxonomies and archiving, and the project list."""

import pytest
from django.urls import reverse

from projects.models import Membership, Project, ProjectKind, Role
from projects.services import project_create
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    user = factories.UserFactory(is_staff=True)
    client.force_login(user)
    return user


def _settings_post(project, client, **overrides):
    """The settings form as the page sends it, unchanged unless `overrides` says otherwise."""
    page = client.get(reverse("studio:project_settings", args=[project.slug]))
    form = page.context["form"]
    data = {}
    for name in form.fields:
        value = form[name].value()  # already as the widget shows it (JSON as text)
        if value is None or value is False:
            continue
        data[name] = value
    for _key, _title, formset in page.context["taxonomy_formsets"]:
        for name, value in formset.management_form.initial.items():
            data[f"{formset.prefix}-{name}"] = value
        for f in formset.forms:
            for name in ("code", "label", "extra"):
                value = f[name].value()
                if value is not None:
                    data[f"{f.prefix}-{name}"] = value
    data.update(overrides)
    return data


def test_new_project_button_only_for_those_who_may_create(client, people, project):
    client.force_login(people["admin"])
    page = client.get(reverse("studio:project_list") + "?all=1").text
    assert reverse("studio:project_new") not in page
    assert client.get(reverse("studio:project_new")).status_code == 403

    client.force_login(factories.UserFactory(is_staff=True))
    page = client.get(reverse("studio:project_list")).text
    assert reverse("studio:project_new") in page
    assert "No project yet" in page  # the empty list says what to do next


def test_staff_creates_a_longvideobench_project(client, staff):
    response = client.post(
        reverse("studio:project_new"), {"name": "LVB clone", "preset": "longvideobench", "primary_language": "en"}
    )
    project = Project.objects.get(name="LVB clone")
    assert response["Location"] == reverse("studio:project_settings", args=[project.slug])
    assert project.kind == ProjectKind.LONGVIDEOBENCH and project.min_height_px == 720
    assert Membership.objects.filter(project=project, user=staff, role=Role.ADMIN).exists()


def test_new_project_copies_settings_from_an_administered_project(client, staff):
    source = project_create(user=staff, name="Source", preset="livibench")
    Project.objects.filter(pk=source.pk).update(min_complexity=4)
    client.post(
        reverse("studio:project_new"),
        {"name": "Copied", "preset": "svbench", "primary_language": "en", "copy_from": source.pk},
    )
    copied = Project.objects.get(name="Copied")
    assert copied.kind == ProjectKind.LIVIBENCH and copied.min_complexity == 4


def test_new_project_refuses_a_used_slug(client, staff, project):
    response = client.post(
        reverse("studio:project_new"),
        {"name": "X", "slug": project.slug, "preset": "svbench", "primary_language": "en"},
    )
    assert response.status_code == 200
    assert "already uses this short name" in response.text


def test_settings_edit_a_taxonomy_row_and_add_one(client, staff):
    project = project_create(user=staff, name="Chains", preset="svbench")
    data = _settings_post(
        project,
        client,
        **{"tax-skills-0-code": "INT", "tax-skills-0-label": "Intentions", "tax-skills-9-code": "NEW"},
    )
    data["tax-skills-9-label"] = "A new skill"
    response = client.post(reverse("studio:project_settings", args=[project.slug]), data)
    assert response.status_code == 302, response.context["form"].errors
    project.refresh_from_db()
    skills = project.taxonomies["skills"]
    assert skills[0] == {"code": "INT", "name": "Intentions"}
    assert skills[-1] == {"code": "NEW", "name": "A new skill"}
    # The guideline of a relation type survives the edit of its row.
    assert project.taxonomies["relation_types"][0]["guideline"]


def test_settings_refuse_duplicate_and_empty_codes(client, staff):
    project = project_create(user=staff, name="Chains", preset="svbench")
    before = project.taxonomies
    data = _settings_post(project, client, **{"tax-skills-1-code": "II", "tax-skills-2-label": ""})
    response = client.post(reverse("studio:project_settings", args=[project.slug]), data)
    assert response.status_code == 200
    assert "The code II is used twice." in response.text
    assert "Every row needs a label." in response.text
    project.refresh_from_db()
    assert project.taxonomies == before


def test_settings_remove_a_row_and_set_judge_kinds(client, staff):
    project = project_create(user=staff, name="Chains", preset="svbench")
    data = _settings_post(project, client, **{"tax-skills-0-DELETE": "on", "judge_kinds": ["qa_chain", "mcq"]})
    assert client.post(reverse("studio:project_settings", args=[project.slug]), data).status_code == 302
    project.refresh_from_db()
    assert [s["code"] for s in project.taxonomies["skills"]][0] == "PA"
    assert project.models_per_step["judge_kinds"] == ["qa_chain", "mcq"]


def test_archive_hides_the_project_and_unarchive_brings_it_back(client, people, project):
    other = factories.ProjectFactory(name="Other one")
    factories.MembershipFactory(project=other, user=people["admin"], role=Role.ADMIN)
    client.force_login(people["admin"])
    response = client.post(reverse("studio:project_archive", args=[project.slug]), {"action": "archive"}, follow=True)
    assert "stays readable and releasable" in response.text
    project.refresh_from_db()
    assert project.is_archived

    page = client.get(reverse("studio:project_list") + "?all=1").text
    assert project.name not in page and "Show 1 archived project" in page
    page = client.get(reverse("studio:project_list") + "?archived=1").text
    assert project.name in page
    # Still readable.
    assert client.get(reverse("studio:project_home", args=[project.slug])).status_code == 200

    client.post(reverse("studio:project_archive", args=[project.slug]), {"action": "unarchive"})
    project.refresh_from_db()
    assert not project.is_archived


def test_claim_next_in_an_archived_project_is_a_plain_refusal(client, people, project):
    project_archive_url = reverse("studio:project_archive", args=[project.slug])
    client.force_login(people["admin"])
    client.post(project_archive_url, {"action": "archive"})
    client.force_login(people["annotator"])
    response = client.post(reverse("reviewer:claim_next", args=[project.slug]), follow=True)
    assert "is archived and takes no new work" in response.text


def test_the_add_project_permission_opens_the_new_project_page(client):
    from django.contrib.auth.models import Permission

    user = factories.UserFactory()
    user.user_permissions.add(Permission.objects.get(codename="add_project"))
    client.force_login(user)
    assert client.get(reverse("studio:project_new")).status_code == 200
    response = client.post(
        reverse("studio:project_new"), {"name": "Mine", "preset": "mvpbench", "primary_language": "zh"}
    )
    assert response.status_code == 302
    assert Project.objects.get(name="Mine").kind == ProjectKind.MVPBENCH


def test_an_archived_project_home_says_so(client, people, project):
    from projects.services import project_archive

    project_archive(project=project, user=people["admin"])
    client.force_login(people["annotator"])
    page = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert "This project is archived" in page
