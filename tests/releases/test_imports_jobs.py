"""Benchmark import from the browser/API path (a job over an uploaded zip or a server folder) and from
the shell (manage.py import_benchmark)."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotator.models import MCQ
from jobs.models import JobStatus
from projects.models import ProjectKind
from releases.imports.archive import ArchiveRefused, archive_unpack
from releases.imports.services import ImportNotStarted, benchmark_import_job, benchmark_import_start
from releases.models import BenchmarkImport
from tests import factories
from tests.releases.import_files import nothing_written, write_files
from tests.releases.test_imports_longvideobench import RECORD, SUBTITLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def lvb_project():
    project = factories.ProjectFactory(kind=ProjectKind.LONGVIDEOBENCH)
    factories.VideoFactory(project=project, name="cook", fps=25.0)
    return project


def _zip(records) -> SimpleUploadedFile:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("demo-v1/longvideobench/lvb_test.json", json.dumps(records))
        zf.writestr("demo-v1/subtitles/cook.json", json.dumps(SUBTITLES))
    return SimpleUploadedFile("demo-v1.zip", buf.getvalue(), content_type="application/zip")


def test_an_uploaded_zip_is_imported_by_the_job_with_its_report(lvb_project):
    user = factories.UserFactory()
    job = benchmark_import_start(project=lvb_project, format="longvideobench", user=user, upload=_zip([RECORD]))
    benchmark_import_job(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.result["ok"] and job.result["counts"]["mcqs"] == 1
    run = BenchmarkImport.objects.get(pk=job.result["import_id"])
    assert run.job == job and run.created_by == user and run.source == "demo-v1.zip"
    assert MCQ.objects.filter(project=lvb_project).count() == 1


def test_a_bad_file_fails_the_job_with_every_problem_and_imports_nothing(lvb_project):
    job = benchmark_import_start(
        project=lvb_project, format="longvideobench", upload=_zip([RECORD, {**RECORD, "correct_choice": 7}])
    )
    benchmark_import_job(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "Nothing was imported" in job.error
    assert not job.result["ok"] and "field “correct_choice”" in job.result["problems"][0]["message"]
    assert nothing_written(lvb_project)


def test_a_server_folder_must_be_inside_the_import_roots(lvb_project, tmp_path, settings):
    folder = write_files(tmp_path / "r", {"longvideobench/lvb_test.json": [RECORD], "subtitles/cook.json": SUBTITLES})
    settings.VIDEO_IMPORT_ROOTS = [str(tmp_path / "elsewhere")]
    with pytest.raises(ImportNotStarted, match="VIDEO_IMPORT_ROOTS"):
        benchmark_import_start(project=lvb_project, format="longvideobench", folder=str(folder))
    settings.VIDEO_IMPORT_ROOTS = [str(tmp_path)]
    job = benchmark_import_start(project=lvb_project, format="longvideobench", folder=str(folder))
    benchmark_import_job(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.result["counts"]["mcqs"] == 1


def test_a_zip_member_outside_its_folder_is_refused(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../evil.json", "[]")
    buf.seek(0)
    with pytest.raises(ArchiveRefused, match="outside"):
        archive_unpack(archive=buf, dest=tmp_path)
    assert not (tmp_path.parent / "evil.json").exists()


def test_the_command_imports_or_lists_the_problems(lvb_project, tmp_path, capsys):
    good = write_files(tmp_path / "g", {"longvideobench/lvb_test.json": [RECORD], "subtitles/cook.json": SUBTITLES})
    call_command("import_benchmark", lvb_project.slug, "longvideobench", str(good), "--status", "accepted")
    assert "Imported 1 MCQs" in capsys.readouterr().out
    assert MCQ.objects.get(project=lvb_project).status == "accepted"

    bad = write_files(tmp_path / "b", {"longvideobench/lvb_test.json": [{**RECORD, "candidates": 1}]})
    with pytest.raises(SystemExit) as exit_:
        call_command("import_benchmark", lvb_project.slug, "longvideobench", str(bad))
    assert exit_.value.code == 1
    assert "record 0 (id cook_0), field “candidates”" in capsys.readouterr().out
