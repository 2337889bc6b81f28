import io
import logging
from unittest import mock

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage

from jobs.models import BackgroundJob, JobStatus
from releases.models import DatasetRelease, ReleaseStatus
from releases.services import clean_split_config, release_create, release_delete

from .conftest import stored_release

pytestmark = pytest.mark.django_db


def _create(project, by, **kwargs):
    kwargs.setdefault("version", "v1")
    kwargs.setdefault("formats", ["generic"])
    return release_create(project=project, by=by, **kwargs)


def _messages(exc) -> dict:
    return exc.value.message_dict


def test_create_queues_the_build_job_on_commit(project, people, accepted, django_capture_on_commit_callbacks):
    with (
        mock.patch("jobs.services.current_app.send_task") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        send.return_value.id = "celery-1"
        release = _create(
            project,
            people["admin"],
            formats=["longvideobench", "generic", "longvideobench"],
            split_config={"ratios": {"test": 0.2, "train": 0.8}},
            seed=7,
        )
    release.refresh_from_db()
    assert release.status == ReleaseStatus.QUEUED
    assert release.formats == ["longvideobench", "generic"]  # the choices' order, no repeats
    assert release.filters == {"statuses": ["accepted"], "include_media": True}
    assert release.split_config == {"ratios": {"train": 0.8, "test": 0.2}, "stratify": True}
    assert release.seed == 7 and release.created_by == people["admin"]
    assert release.storage_prefix == f"releases/{project.slug}/v1/"
    job = release.job
    assert job.kind == "releases.build" and job.params == {"release_id": release.pk}
    assert (job.target_type, job.target_id) == ("releases.datasetrelease", release.pk)
    send.assert_called_once_with("releases.build", args=[job.pk])


@pytest.mark.parametrize("role", ["annotator", "examiner", "reviser", "outsider"])
def test_only_admins_create(project, people, accepted, role):
    with pytest.raises(PermissionDenied):
        _create(project, people[role])
    assert not DatasetRelease.objects.exists()


@pytest.mark.parametrize(
    "kwargs, field, text",
    [
        ({"version": "  "}, "version", "Give the release a version label"),
        ({"version": "../etc"}, "version", "cannot be a version label"),
        ({"version": "v" * 41}, "version", "at most 40 characters"),
        ({"formats": []}, "formats", "Choose at least one format"),
        ({"formats": ["svbench", "csv"]}, "formats", "Unknown format csv; choose from svbench"),
        ({"filters": {"colour": "red"}}, "filters", "Unknown filter colour"),
        ({"filters": {"statuses": ["done"]}}, "filters", "Unknown status done"),
        ({"filters": {"video_ids": [999999]}}, "filters", "No video with id 999999 in this project"),
        ({"filters": {"accepted_from": "yesterday"}}, "filters", "accepted_from must be a date as YYYY-MM-DD"),
        (
            {"filters": {"accepted_from": "2025-02-01", "accepted_to": "2025-01-01"}},
            "filters",
            "accepted_from (2025-02-01) is after accepted_to (2025-01-01)",
        ),
        ({"filters": {"categories": ["XYZ"]}}, "filters", "No item matches these filters"),
        ({"split_config": {"ratios": {"train": 0.8, "test": 0.4}}}, "split_config", "add up to 1.2"),
        ({"split_config": {"ratios": {"dev": 0.5}}}, "split_config", "Unknown split dev"),
        ({"split_config": {"ratios": {"test": 0.2}, "counts": {"test": 2}}}, "split_config", "not both"),
        ({"split_config": {"counts": {"test": 2.5}}}, "split_config", "must be a whole number"),
        ({"seed": -1}, "seed", "between 0 and"),
        ({"seed": "abc"}, "seed", "whole number"),
    ],
)
def test_create_refuses_bad_input_with_a_message_per_field(project, people, accepted, kwargs, field, text):
    with pytest.raises(ValidationError) as exc:
        _create(project, people["admin"], **kwargs)
    assert any(text in m for m in _messages(exc)[field]), _messages(exc)
    assert not DatasetRelease.objects.exists()


def test_every_bad_field_is_reported_at_once(project, people, accepted):
    with pytest.raises(ValidationError) as exc:
        _create(project, people["admin"], version="", formats=["nope"], seed=-5)
    assert set(_messages(exc)) == {"version", "formats", "seed"}


def test_nothing_matching_says_which_filters(project, people):
    with pytest.raises(ValidationError) as exc:
        _create(project, people["admin"])
    (message,) = _messages(exc)["filters"]
    assert "No item matches these filters (status accepted)" in message
    assert "accept items in review first" in message


def test_filters_narrow_by_category_video_and_date(project, people, accepted):
    video = accepted["videos"][0]
    release = _create(
        project,
        people["admin"],
        filters={"categories": ["E2O"], "video_ids": [str(video.pk)], "accepted_to": "2999-01-01"},
    )
    assert release.filters == {
        "statuses": ["accepted"],
        "categories": ["E2O"],
        "video_ids": [video.pk],
        "accepted_to": "2999-01-01",
        "include_media": True,
    }
    with pytest.raises(ValidationError) as exc:
        _create(project, people["admin"], version="v2", filters={"accepted_from": "2999-01-01"})
    assert "No item matches" in _messages(exc)["filters"][0]


def test_version_is_unique_per_project_with_a_clear_message(project, people, accepted):
    first = stored_release(project, by=people["admin"])
    with pytest.raises(ValidationError) as exc:
        _create(project, people["admin"], version="v1", formats=["svbench"])
    (message,) = _messages(exc)["version"]
    assert f"already has a release v1 (ready, created by {people['admin'].username}" in message
    assert "choose another label, e.g. v1.1" in message
    # Another project may use the same label.
    other = people["outsider"].memberships.get().project
    assert stored_release(other, version="v1").version == first.version


def test_double_click_returns_the_release_being_built(project, people, accepted):
    first = _create(project, people["admin"], seed=3)
    again = _create(project, people["admin"], seed=3)
    assert again.pk == first.pk
    assert DatasetRelease.objects.count() == 1
    assert BackgroundJob.objects.filter(kind="releases.build").count() == 1
    # Different inputs under the same label are not a double click.
    with pytest.raises(ValidationError) as exc:
        _create(project, people["admin"], seed=4)
    assert "already has a release v1 (queued" in _messages(exc)["version"][0]


def test_deleted_versions_are_not_reused(project, people, accepted):
    stored_release(project, status=ReleaseStatus.DELETED)
    with pytest.raises(ValidationError) as exc:
        _create(project, people["admin"])
    assert "has been deleted; a label is never reused" in _messages(exc)["version"][0]


def test_empty_split_config_means_no_split_and_flat_shapes_are_read():
    assert clean_split_config({}) == {} and clean_split_config(None) == {}
    assert clean_split_config({"train": 0.8, "test": 0.2}) == {"ratios": {"train": 0.8, "test": 0.2}, "stratify": True}
    assert clean_split_config({"counts": {"test": 3}, "stratify": False}) == {"counts": {"test": 3}, "stratify": False}


# --- delete ---------------------------------------------------------------------------------------------


def test_delete_marks_the_row_removes_the_files_and_logs(project, people, django_capture_on_commit_callbacks, caplog):
    release = stored_release(project, by=people["admin"])
    leftover = release.storage_prefix + "partial/tmp.bin"
    default_storage.save(leftover, io.BytesIO(b"x"))
    names = [release.storage_prefix + f["path"] for f in release.files] + [release.archive.name, leftover]
    assert all(default_storage.exists(n) for n in names)

    with caplog.at_level(logging.INFO, logger="releases.services"), django_capture_on_commit_callbacks(execute=True):
        release_delete(release=release, by=people["admin"])

    release.refresh_from_db()
    assert release.status == ReleaseStatus.DELETED
    assert release.deleted_by == people["admin"] and release.deleted_at is not None
    assert release.files  # the record keeps what was released
    assert not any(default_storage.exists(n) for n in names)
    assert any(
        f"release v1 of {project.slug} deleted by {people['admin'].username}" in r.getMessage() for r in caplog.records
    )


@pytest.mark.parametrize("role", ["annotator", "examiner", "reviser", "outsider"])
def test_only_admins_delete(project, people, role):
    release = stored_release(project)
    with pytest.raises(PermissionDenied):
        release_delete(release=release, by=people[role])
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY
    assert default_storage.exists(release.archive.name)


def test_delete_refuses_a_build_in_progress_and_a_deleted_release(project, people):
    release = stored_release(project, status=ReleaseStatus.BUILDING)
    with pytest.raises(ValidationError, match="being built"):
        release_delete(release=release, by=people["admin"])
    release.status = ReleaseStatus.DELETED
    release.save()
    with pytest.raises(ValidationError, match="already deleted"):
        release_delete(release=release, by=people["admin"])


def test_deleting_a_queued_release_cancels_its_job(project, people, accepted):
    release = _create(project, people["admin"])
    release_delete(release=release, by=people["admin"])
    release.job.refresh_from_db()
    assert release.job.status == JobStatus.CANCELLED
    assert release.job.message == "The release was deleted."


def test_admin_site_deletes_through_the_service(client, project, people, django_capture_on_commit_callbacks):
    release = stored_release(project)
    staff = people["admin"]
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    url = "/admin/releases/datasetrelease/"
    assert client.get(url).status_code == 200
    assert client.get(f"{url}{release.pk}/change/").status_code == 200
    assert client.get(f"{url}add/").status_code == 403  # releases are cut on the release pages
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"action": "delete_releases", "_selected_action": [release.pk]})
    assert response.status_code == 302
    release.refresh_from_db()
    assert release.status == ReleaseStatus.DELETED and release.deleted_by == staff
    assert not default_storage.exists(release.archive.name)
