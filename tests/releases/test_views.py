import hashlib
import io
import tarfile

import pytest
from django.urls import reverse

from jobs.models import JobStatus
from releases.models import DatasetRelease, ReleaseStatus
from tests import factories

from .conftest import stored_release

pytestmark = pytest.mark.django_db

MEMBERS = ["admin", "annotator", "examiner", "reviser"]


@pytest.fixture
def release(project, people):
    return stored_release(project, by=people["admin"])


def _urls(project, release) -> dict:
    args = [project.slug, release.pk]
    return {
        "list": reverse("releases:list", args=[project.slug]),
        "detail": reverse("releases:detail", args=args),
        "statistics": reverse("releases:statistics", args=args),
        "zip": reverse("releases:download_zip", args=args),
        "tar": reverse("releases:download_tar", args=args),
    }


@pytest.mark.parametrize("role", MEMBERS)
def test_members_of_any_role_view_and_download(client, project, people, release, role):
    client.force_login(people[role])
    for name, url in _urls(project, release).items():
        response = client.get(url)
        assert response.status_code == 200, (name, response.status_code)
        if name in ("zip", "tar"):
            b"".join(response.streaming_content)


@pytest.mark.parametrize("role", ["annotator", "examiner", "reviser"])
def test_only_admins_create_and_delete(client, project, people, release, accepted, role):
    client.force_login(people[role])
    new = reverse("releases:new", args=[project.slug])
    delete = reverse("releases:delete", args=[project.slug, release.pk])
    assert client.get(new).status_code == 403
    assert client.post(new, {"version": "v9", "formats": ["generic"]}).status_code == 403
    assert client.post(reverse("releases:preview", args=[project.slug]), {}).status_code == 403
    assert client.get(delete).status_code == 403
    assert client.post(delete).status_code == 403
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY and DatasetRelease.objects.count() == 1
    # Members see no admin controls.
    page = client.get(_urls(project, release)["detail"]).text
    assert "Delete this release" not in page
    assert "New release" not in client.get(_urls(project, release)["list"]).text


def test_strangers_get_404_and_anonymous_the_login_page(client, project, people, release):
    urls = [
        *_urls(project, release).values(),
        reverse("releases:new", args=[project.slug]),
        reverse("releases:delete", args=[project.slug, release.pk]),
        reverse("releases:row", args=[project.slug, release.pk]),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
    client.force_login(people["outsider"])
    for url in urls:
        assert client.get(url).status_code == 404, url
    # A release of another project under this project's slug is missing too.
    other = stored_release(factories.ProjectFactory(), version="x1")
    client.force_login(people["admin"])
    assert client.get(reverse("releases:detail", args=[project.slug, other.pk])).status_code == 404


def test_list_shows_versions_status_counts_and_links_in_few_queries(
    client, project, people, release, django_assert_max_num_queries
):
    job = factories.BackgroundJobFactory(project=project, kind="releases.build", status=JobStatus.RUNNING)
    job.progress_done, job.progress_total = 3, 10
    job.save()
    for i in range(5):
        stored_release(project, version=f"v2.{i}", by=people["admin"], files={"a.json": b"[]"})
    building = DatasetRelease.objects.create(
        project=project, version="v3", formats=["svbench"], status=ReleaseStatus.BUILDING, job=job
    )
    client.force_login(people["examiner"])
    with django_assert_max_num_queries(8):
        response = client.get(_urls(project, release)["list"])
    page = response.text
    assert page.index("v3") < page.index("v2.4") < page.index(">v1<")  # newest first
    assert "Building" in page and "30%" in page  # the job partial's live progress
    assert f'hx-get="{reverse("releases:row", args=[project.slug, building.pk])}"' in page
    assert _urls(project, release)["zip"] in page and _urls(project, release)["tar"] in page
    assert "2 MCQs" in page


def test_list_row_partial_shows_the_finished_release(client, project, people, release):
    client.force_login(people["annotator"])
    response = client.get(reverse("releases:row", args=[project.slug, release.pk]), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.text.strip().startswith(f'<tr id="release-{release.pk}"')
    assert "hx-get" not in response.text  # ready: nothing left to wait for


def test_detail_lists_files_counts_and_validation_errors_with_item_links(client, project, people, release):
    mcq = factories.MCQFactory(project=project)
    release.status = ReleaseStatus.FAILED
    video = factories.VideoFactory(project=project, name="bench_0001")
    release.validation_errors = [
        {
            "format": "longvideobench",
            "file": "longvideobench/lvb_test.json",
            "item": f"mcq {mcq.pk}",
            "message": "candidates must hold 4 or 5 options",
        },
        {
            "format": "svbench",
            "file": "svbench/Dialogue/bench_0001.json",
            "item": "video bench_0001",
            "message": "no chain in the release",
        },
        {"format": "", "file": "", "item": "", "message": "… and 3 more problems not listed."},
    ]
    release.save()
    client.force_login(people["reviser"])
    page = client.get(_urls(project, release)["detail"]).text
    assert "Validation errors" in page and "candidates must hold 4 or 5 options" in page
    assert f'href="/p/{project.slug}/mcqs/{mcq.pk}/">mcq {mcq.pk}</a>' in page
    assert "no chain in the release" in page
    assert f'href="/p/{project.slug}/videos/{video.pk}/">video bench_0001</a>' in page
    assert "and 3 more problems not listed" in page
    for f in release.files:
        assert f["path"] in page and f["sha256"] in page
    assert "Download zip" not in page  # only a ready release downloads
    assert client.get(_urls(project, release)["zip"]).status_code == 404


def test_detail_of_a_ready_release_offers_downloads_and_counts(client, project, people, release):
    client.force_login(people["admin"])
    page = client.get(_urls(project, release)["detail"]).text
    assert "Download zip" in page and 'data-key="z"' in page and 'data-key="t"' in page
    assert "Statistics with charts" in page and 'data-key="s"' in page
    assert "Delete this release" in page and 'data-key="x"' in page
    assert "E2O" in page and "App version" in page and "generic 1" in page
    assert "Items per question category" in page


def test_zip_download_serves_the_stored_archive(client, project, people, release):
    client.force_login(people["annotator"])
    response = client.get(_urls(project, release)["zip"])
    assert response["Content-Type"] == "application/zip"
    assert f'attachment; filename="{project.slug}-v1.zip"' == response["Content-Disposition"]
    with release.archive.open("rb") as fh:
        assert b"".join(response.streaming_content) == fh.read()


def test_zip_download_behind_nginx_is_an_accel_redirect(client, project, people, release, settings):
    settings.MEDIA_ACCEL_REDIRECT_PREFIX = "/protected/"
    client.force_login(people["annotator"])
    response = client.get(_urls(project, release)["zip"])
    assert response["X-Accel-Redirect"] == "/protected/" + release.archive.name


def test_tar_is_streamed_deterministic_and_matches_the_manifest(client, project, people, release):
    client.force_login(people["annotator"])
    first = client.get(_urls(project, release)["tar"])
    body = b"".join(first.streaming_content)
    assert first["Content-Type"] == "application/x-tar"
    assert int(first["Content-Length"]) == len(body)
    second = b"".join(client.get(_urls(project, release)["tar"]).streaming_content)
    assert body == second
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [f"{project.slug}-v1/{f['path']}" for f in release.files]
        for member, listed in zip(members, release.files, strict=True):
            assert member.mtime == 315532800 and member.uid == 0 and member.mode == 0o644
            assert hashlib.sha256(tar.extractfile(member).read()).hexdigest() == listed["sha256"]


def test_statistics_page_draws_every_chart_with_its_numbers(client, project, people, release):
    client.force_login(people["examiner"])
    page = client.get(_urls(project, release)["statistics"]).text
    for chart_id in (
        "splits",
        "categories-question_categories",
        "duration-groups",
        "durations",
        "qa-per-video",
        "option-lengths",
    ):
        assert f'id="{chart_id}"' in page, chart_id
    assert page.count("<svg") == 6
    assert "E2O: 1" in page  # a bar's exact value in its title
    assert "<th>≥ 180</th>" in page  # the build's last bin is open-ended
    assert "0 relations" not in page and "2 MCQs" in page
    assert 'data-key="r"' in page


def test_statistics_page_before_the_build_says_so(client, project, people):
    pending = DatasetRelease.objects.create(project=project, version="v0", formats=["generic"])
    client.force_login(people["admin"])
    page = client.get(reverse("releases:statistics", args=[project.slug, pending.pk])).text
    assert "No statistics yet" in page and "<svg" not in page


# --- new release ----------------------------------------------------------------------------------------


def _form(**overrides) -> dict:
    data = {
        "version": "v2",
        "formats": ["generic", "longvideobench"],
        "statuses": ["accepted"],
        "include_media": "on",
        "split_mode": "ratios",
        "train": "0.8",
        "test": "0.2",
        "stratify": "on",
        "seed": "5",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def test_admin_creates_a_release_and_lands_on_its_page(client, project, people, accepted):
    client.force_login(people["admin"])
    url = reverse("releases:new", args=[project.slug])
    page = client.get(url).text
    assert 'data-key="v"' in page and "Ctrl+Enter" in page
    assert "These filters select <strong>1 QA chain, 2 MCQs from 2 videos</strong>" in page
    response = client.post(url, _form(categories="E2O, S2A", video_ids=accepted["videos"][0].name))
    release = DatasetRelease.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("releases:detail", args=[project.slug, release.pk])
    assert release.formats == ["longvideobench", "generic"]
    assert release.filters == {
        "statuses": ["accepted"],
        "categories": ["E2O", "S2A"],
        "video_ids": [accepted["videos"][0].pk],
        "include_media": True,
    }
    assert release.split_config == {"ratios": {"train": 0.8, "test": 0.2}, "stratify": True}
    assert release.seed == 5 and release.job.kind == "releases.build"
    page = client.get(response["Location"]).text
    assert "is queued" in page and f'id="job-{release.job.pk}"' in page


def test_refusals_keep_what_was_typed(client, project, people, accepted):
    stored_release(project, version="v2")
    client.force_login(people["admin"])
    url = reverse("releases:new", args=[project.slug])
    response = client.post(url, _form(categories="E2O", seed="11"))
    assert response.status_code == 200
    page = response.text
    assert "already has a release v2" in page
    assert 'value="E2O"' in page and 'value="11"' in page
    response = client.post(url, _form(version="v3", split_mode="counts", train=None, test=None))
    assert "Give at least one of train, eval, test a count." in response.text
    response = client.post(url, _form(version="v3", video_ids="no_such_video"))
    assert "No video named no_such_video in this project." in response.text
    assert DatasetRelease.objects.count() == 1


def test_preview_counts_what_the_filters_select(client, project, people, accepted):
    client.force_login(people["admin"])
    url = reverse("releases:preview", args=[project.slug])
    response = client.post(url, _form(), headers={"HX-Request": "true"})
    assert "1 QA chain, 2 MCQs from 2 videos" in response.text
    response = client.post(url, _form(categories="E2O"), headers={"HX-Request": "true"})
    assert "1 MCQ from 1 video" in response.text
    response = client.post(url, _form(statuses=["accepted", "examining"]), headers={"HX-Request": "true"})
    assert "1 QA chain, 3 MCQs from 2 videos" in response.text
    response = client.post(url, _form(categories="NOPE"), headers={"HX-Request": "true"})
    assert "No item matches these filters" in response.text
    response = client.post(url, _form(accepted_from="not a date"), headers={"HX-Request": "true"})
    assert "Fix the filters above" in response.text


# --- delete ---------------------------------------------------------------------------------------------


def test_admin_deletes_after_confirming(client, project, people, release, django_capture_on_commit_callbacks):
    client.force_login(people["admin"])
    url = reverse("releases:delete", args=[project.slug, release.pk])
    page = client.get(url).text
    assert "Delete release v1?" in page and 'data-key="y"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    assert response.status_code == 302 and response["Location"] == reverse("releases:list", args=[project.slug])
    release.refresh_from_db()
    assert release.status == ReleaseStatus.DELETED and release.deleted_by == people["admin"]
    assert not release.archive.storage.exists(release.archive.name)
    page = client.get(reverse("releases:list", args=[project.slug])).text
    assert f"by {people['admin'].username}" in page
    # Downloads of a deleted release are gone.
    assert client.get(_urls(project, release)["zip"]).status_code == 404


def test_project_home_links_to_releases(client, project, people):
    client.force_login(people["annotator"])
    page = client.get(reverse("studio:project_home", args=[project.slug])).text
    assert f'href="{reverse("releases:list", args=[project.slug])}"' in page


def test_preview_shows_the_split_by_video_and_warns_when_a_split_stays_empty(client, project, people, accepted):
    client.force_login(people["admin"])
    url = reverse("releases:preview", args=[project.slug])
    response = client.post(url, _form(), headers={"HX-Request": "true"})
    assert "train <strong>2</strong> · test <strong>0</strong>" in response.text
    assert "With 2 videos this split leaves test empty" in response.text
    response = client.post(url, _form(train="0.5", test="0.5"), headers={"HX-Request": "true"})
    assert "train <strong>1</strong> · test <strong>1</strong>" in response.text and "empty" not in response.text


def test_the_release_page_lists_counts_per_format_and_what_was_left_out(client, project, people):
    release = stored_release(project, version="v9")
    release.manifest = {
        **(release.manifest or {}),
        "per_format": {
            "svbench": {
                "items": {"qa_chain": 3},
                "left_out": [{"reason": "an MCQ (SVBench holds QA chains only)", "count": 2, "items": ["mcq 7"]}],
            },
            "generic": {"items": {"mcq": 2, "qa_chain": 3}, "left_out": []},
        },
    }
    release.save()
    client.force_login(people["annotator"])
    page = client.get(reverse("releases:detail", args=[project.slug, release.pk])).text
    assert "Per format" in page and "3 QA chains" in page and "2 MCQs, 3 QA chains" in page
    assert "2: an MCQ (SVBench holds QA chains only)" in page and "mcq 7 …" in page
