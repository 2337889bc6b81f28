import io
import json

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command, execute_from_command_line
from django.core.management.base import CommandError

from jobs.models import JobStatus
from releases.models import DatasetRelease, ReleaseStatus

from .conftest import stored_release

pytestmark = pytest.mark.django_db


def _run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("release", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_queues_the_build_for_the_worker(project, people, accepted):
    video = accepted["videos"][0]
    out, _ = _run(
        "create",
        project.slug,
        "v1",
        "--format",
        "generic",
        "--format",
        "longvideobench",
        "--category",
        "E2O",
        "--video",
        video.name,
        "--ratios",
        "train=0.8,test=0.2",
        "--no-stratify",
        "--seed",
        "4",
        "--test-style",
        "--by",
        people["admin"].username,
    )
    release = DatasetRelease.objects.get()
    assert f"Release v1 is queued (job {release.job_id})" in out
    assert release.formats == ["longvideobench", "generic"] and release.test_style and release.seed == 4
    assert release.filters == {
        "statuses": ["accepted"],
        "categories": ["E2O"],
        "video_ids": [video.pk],
        "include_media": True,
    }
    assert release.split_config == {"ratios": {"train": 0.8, "test": 0.2}, "stratify": False}
    assert release.job.status == JobStatus.QUEUED


def test_create_sync_builds_here_with_a_progress_bar(project, people, accepted, capsys):
    out, _ = _run(
        "create",
        project.slug,
        "v1",
        "--format",
        "generic",
        "--counts",
        "test=1",
        "--by",
        people["admin"].username,
        "--sync",
    )
    release = DatasetRelease.objects.get()
    assert release.status == ReleaseStatus.READY, release.validation_errors
    assert release.job.status == JobStatus.SUCCEEDED
    assert "Release v1 of" in out and ": ready" in out and f"files: {len(release.files)}" in out
    assert "[" in capsys.readouterr().err  # the bar goes to stderr, the summary to stdout
    for f in release.files:
        assert default_storage.exists(release.storage_prefix + f["path"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["create", "no-such", "v1", "--format", "generic", "--by", "x"], "No project with slug 'no-such'"),
        (["create", "{slug}", "v1", "--format", "generic"], "Say who does this with --by"),
        (["create", "{slug}", "v1", "--format", "generic", "--by", "{annotator}"], "Only project admins cut releases"),
        (["create", "{slug}", "v1", "--format", "csv", "--by", "{admin}"], "formats: Unknown format csv"),
        (
            ["create", "{slug}", "v1", "--format", "generic", "--ratios", "train:0.8", "--by", "{admin}"],
            "--ratios takes split=number pairs",
        ),
        (
            ["create", "{slug}", "v1", "--format", "generic", "--video", "nope", "--by", "{admin}"],
            "No video named nope",
        ),
        (["show", "{slug}", "v9"], "has no release 'v9'"),
        (["delete", "{slug}", "v9", "--by", "{admin}"], "has no release 'v9'"),
    ],
)
def test_refusals_are_command_errors(project, people, accepted, args, message):
    names = {"slug": project.slug, "admin": people["admin"].username, "annotator": people["annotator"].username}
    with pytest.raises(CommandError, match=message):
        _run(*[a.format(**names) for a in args])
    assert not DatasetRelease.objects.exists()


def test_errors_go_to_stderr_with_a_non_zero_exit(project, people, capsys):
    with pytest.raises(SystemExit) as exit_info:
        execute_from_command_line(
            [
                "manage.py",
                "release",
                "create",
                project.slug,
                "v1",
                "--format",
                "generic",
                "--by",
                people["admin"].username,
            ]
        )
    assert exit_info.value.code != 0
    captured = capsys.readouterr()
    assert "No item matches these filters" in captured.err and captured.out == ""


def test_list_show_and_delete(project, people, django_capture_on_commit_callbacks):
    release = stored_release(project, by=people["admin"])
    stored_release(
        project,
        version="v2",
        status=ReleaseStatus.FAILED,
        validation_errors=[{"format": "generic", "file": "g.jsonl", "item": "mcq 3", "message": "bad"}],
    )
    out, _ = _run("list", project.slug)
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["VERSION", "STATUS", "FORMATS"]
    assert lines[1].split()[:2] == ["v2", "failed"] and lines[2].split()[:5] == ["v1", "ready", "generic", "2", "2"]

    out, _ = _run("show", project.slug, "v1")
    assert "Release v1 of" in out and "train" in out and "question_categories: E2O 1, S2A 1" in out
    assert f"files: {len(release.files)}" in out
    out, _ = _run("show", project.slug, "v2")
    assert "validation errors: 1" in out and "g.jsonl mcq 3: bad" in out
    out, _ = _run("show", project.slug, "v1", "--json")
    assert json.loads(out) == release.manifest

    with pytest.raises(CommandError, match="Only project admins delete releases"):
        _run("delete", project.slug, "v1", "--by", people["examiner"].username)
    with django_capture_on_commit_callbacks(execute=True):  # the files go once the deletion commits
        out, _ = _run("delete", project.slug, "v1", "--by", people["admin"].username)
    assert "Release v1 deleted" in out
    release.refresh_from_db()
    assert release.status == ReleaseStatus.DELETED and release.deleted_by == people["admin"]
    assert not default_storage.exists(release.archive.name)
    out, _ = _run("list", project.slug)
    assert "v1               deleted" in out
    with pytest.raises(CommandError, match="already deleted"):
        _run("delete", project.slug, "v1", "--by", people["admin"].username)


def test_list_of_a_project_without_releases(project):
    out, _ = _run("list", project.slug)
    assert out.strip() == f"Project {project.slug} has no release yet."
