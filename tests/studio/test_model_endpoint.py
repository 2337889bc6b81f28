"""The model endpoint page: set, test, never show the key; and a job's error shown once, in words."""

import pytest
from django.urls import reverse

from jobs.models import BackgroundJob, JobStatus
from llm.endpoints import endpoint_for, model_endpoint_save
from llm.models import ModelEndpoint, ModelUse
from tests.fakes.fixtures import FAKE_API_KEY

pytestmark = pytest.mark.django_db

SECRET = "sk-project-secret-4242"


def _form(**overrides) -> dict:
    data = {"base_url": "http://own.example/v1", "new_key": ""}
    for use in ModelUse.values:
        data.update({f"{use}_model": "", f"{use}_input_price": "", f"{use}_output_price": ""})
    return data | overrides


@pytest.fixture
def admin(client, people):
    client.force_login(people["admin"])
    return people["admin"]


def test_an_admin_sets_the_endpoint_and_the_key_is_never_shown_back(client, admin, project):
    url = reverse("studio:model_endpoint", args=[project.slug])
    response = client.post(
        url,
        _form(new_key=SECRET, drafts_model="own-text", drafts_input_price="1.5", drafts_output_price="6"),
    )
    assert response.status_code == 302
    endpoint = ModelEndpoint.objects.get(project=project)
    assert (endpoint.base_url, endpoint.api_key, endpoint.drafts_model, endpoint.updated_by) == (
        "http://own.example/v1",
        SECRET,
        "own-text",
        admin,
    )
    assert endpoint.prices == {"own-text": [1.5, 6.0]}

    page = client.get(url).text
    assert SECRET not in page and "A key is set for this project." in page
    assert 'value="own-text"' in page and 'value="http://own.example/v1"' in page

    # Saving without a new key keeps it; an invalid form does not echo a typed key either.
    client.post(url, _form(base_url="http://own.example/v2"))
    assert ModelEndpoint.objects.get(project=project).api_key == SECRET
    invalid = client.post(url, _form(base_url="not a url", new_key="sk-typed-but-invalid"))
    assert invalid.status_code == 200 and "sk-typed-but-invalid" not in invalid.text and SECRET not in invalid.text

    client.post(url, _form(clear_key="on"))
    assert ModelEndpoint.objects.get(project=project).api_key == ""


def test_the_key_appears_in_no_page_of_the_project(client, admin, project):
    model_endpoint_save(
        project=project, user=admin, base_url="http://own.example/v1", models={}, prices={}, new_key=SECRET
    )
    for name in ("studio:project_home", "studio:project_settings", "studio:model_endpoint"):
        assert SECRET not in client.get(reverse(name, args=[project.slug])).text
    api = client.get(f"/api/projects/{project.slug}/")
    assert SECRET not in api.content.decode()


def test_test_connection_reports_in_words_against_the_fake_server(client, admin, project, fake_openai):
    url = reverse("studio:model_endpoint_test", args=[project.slug])
    fragment = client.post(url, headers={"HX-Request": "true"}).text
    assert "Connected: model " in fragment and "<html" not in fragment

    fake_openai.api_key = "sk-another-key"
    page = client.post(url).text
    assert "The key was refused (401)" in page
    assert "<details" in page and "Incorrect API key" in page
    assert FAKE_API_KEY not in page


def test_test_connection_to_a_closed_port_says_the_connection_was_refused(client, admin, project):
    model_endpoint_save(project=project, user=admin, base_url="http://127.0.0.1:9/v1", models={}, prices={})
    page = client.post(reverse("studio:model_endpoint_test", args=[project.slug])).text
    assert "Could not connect to http://127.0.0.1:9/v1: the server refused the connection." in page


def test_admins_with_no_endpoint_are_told_where_to_set_one(client, admin, project, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    home = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert "Set a model endpoint" in home and reverse("studio:model_endpoint", args=[project.slug]) in home
    page = client.get(reverse("studio:model_endpoint", args=[project.slug])).text
    assert "no model endpoint is set for this project" in page
    model_endpoint_save(project=project, user=admin, base_url="http://own.example/v1", models={}, prices={})
    assert endpoint_for(project=project, use=ModelUse.DRAFTS).source == "project"
    assert "Set a model endpoint" not in client.get(reverse("studio:project_home", args=[project.slug])).text


RAW = "qa_chain: gave up after 4 attempts; last: connection failed: [Errno -2] Name or service not known"


@pytest.mark.parametrize("role", ["annotator", "examiner", "reviser", "admin"])
def test_a_failed_job_shows_its_error_once_in_words_with_the_detail_disclosed(client, people, project, role):
    # A failed job's message holds its error too (jobs.services): it used to be shown twice.
    BackgroundJob.objects.create(
        project=project, kind="annotator.draft_chains", status=JobStatus.FAILED, error=RAW, message=RAW
    )
    client.force_login(people[role])
    page = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert page.count("Name or service not known") == 1
    words = "Could not connect to the model endpoint: the server&#x27;s name could not be found"
    assert page.count(words) == 1
    details = page.index("<details")
    assert page.index(words) < details < page.index("Name or service not known")


def test_an_unknown_error_is_shown_once_as_it_is(client, people, project):
    job = BackgroundJob.objects.create(
        project=project, kind="videos.probe", status=JobStatus.FAILED, error="ffprobe: not a video", message="x"
    )
    client.force_login(people["admin"])
    page = client.get(reverse("studio:job_status", args=[project.slug, job.pk])).text
    assert page.count("ffprobe: not a video") == 1 and "failure-detail" not in page


def test_retrying_a_model_job_with_no_endpoint_is_refused_without_a_new_job(client, admin, project, settings):
    import annotator.drafts.runs  # noqa: F401 - registers the draft kinds' start check, as the web process has

    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    job = BackgroundJob.objects.create(
        project=project, kind="annotator.draft_chains", status=JobStatus.FAILED, error=RAW, params={"step": "chains"}
    )
    page = client.post(reverse("studio:job_retry", args=[project.slug, job.pk]), follow=True)
    assert [str(m) for m in page.context["messages"]] == [
        "No model endpoint is set for this project: a project admin can set one under Settings → Model endpoint."
    ]
    api = client.post(f"/api/projects/{project.slug}/jobs/{job.pk}/retry/")
    assert api.status_code == 409 and api.json()["error"]["code"] == "no_model_endpoint"
    assert BackgroundJob.objects.count() == 1
