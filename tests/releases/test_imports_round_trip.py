"""The demo released in every format, each format's folder imported into a fresh project and released
again with the same options: every data file (records, subtitles, comments, transcripts, videos) has
the same bytes. manifest.json carries the release's identity and dates and is left out. In generic
JSONL the items' own database ids (id, chain_before, chain_after), status, version and provenance
are the importing project's, so those fields are blanked on both sides; every other byte is compared.
"""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import Value
from django.db.models.functions import Concat

from annotator.models import MCQ, ItemStatus, Origin, QAPair
from projects.models import Project
from releases.build import release_build
from releases.imports.services import benchmark_import
from releases.models import DatasetRelease, ImportedRecord, ReleaseStatus
from releases.writers.common import dumps
from tests.releases.read_back import read_bytes
from tests.releases.test_demo_release import FORMATS, WORKED, demo  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db

SPLITS = {"ratios": {"train": 0.5, "test": 0.5}}
GENERIC_OWN = ("id", "status", "version", "provenance", "chain_before", "chain_after")


def _release(project, version, formats):
    release = DatasetRelease.objects.create(
        project=project, version=version, seed=5, formats=formats, filters={"statuses": WORKED}, split_config=SPLITS
    )
    release = release_build(release=release)
    assert release.status == ReleaseStatus.READY, release.validation_errors
    return release


def _data_files(release, fmt) -> dict[str, bytes]:
    tops = {fmt, "subtitles"} if fmt == "longvideobench" else {fmt}
    return {f["path"]: read_bytes(release, f["path"]) for f in release.files if f["path"].split("/", 1)[0] in tops}


def _generic_own_blanked(data: bytes) -> str:
    lines = []
    for line in data.decode().splitlines():
        record = json.loads(line)
        for key in GENERIC_OWN:
            if key in record:
                record[key] = None
        for relation in record.get("relations", []):
            relation["origin"] = None
        lines.append(dumps(record))
    return "\n".join(lines)


@pytest.mark.parametrize("fmt", FORMATS)
def test_release_import_release_gives_the_same_bytes(demo, fmt):  # noqa: F811
    first = _release(demo, "v1", FORMATS)
    folder = Path(settings.MEDIA_ROOT) / first.storage_prefix
    fresh = Project.objects.create(name=f"Imported {fmt}", slug=f"imported-{fmt}", kind=demo.kind)

    report = benchmark_import(project=fresh, format=fmt, source=folder)
    assert report.ok, report.problems
    assert report.counts["videos_imported"] >= 1 and report.counts["videos_matched"] == 0
    assert MCQ.objects.filter(project=fresh).exclude(origin=Origin.IMPORTED).count() == 0
    assert not MCQ.objects.filter(project=fresh).exclude(status=ItemStatus.EXAMINING).exists()
    assert ImportedRecord.objects.filter(benchmark_import_id=report.import_id).count() == (
        report.counts["mcqs"] + report.counts["chains"] + report.counts["chain_pairs"]
    )

    again = _release(fresh, "v1", [fmt])
    before, after = _data_files(first, fmt), _data_files(again, fmt)
    assert any(p.endswith((".json", ".jsonl")) for p in before)
    assert sorted(after) == sorted(before)
    for path, data in before.items():
        if fmt == "generic" and path != "generic/videos.jsonl":
            assert _generic_own_blanked(after[path]) == _generic_own_blanked(data), path
        else:
            assert after[path] == data, path
    videos = {f["path"]: f["sha256"] for f in first.files if f["path"].startswith("videos/")}
    for f in again.files:  # the videos imported from the release are the released files
        if f["path"].startswith("videos/"):
            assert videos[f["path"]] == f["sha256"]


def test_svbench_with_translations_comes_back_the_same(demo):  # noqa: F811
    QAPair.objects.filter(chain__project=demo).update(
        question_translation=Concat(Value("问："), "question"), answer_translation=Concat(Value("答："), "answer")
    )
    first = _release(demo, "v1", ["svbench"])
    assert any("/Dialogue_ZH/" in f["path"] for f in first.files)
    fresh = Project.objects.create(name="Imported zh", slug="imported-zh", kind=demo.kind)
    report = benchmark_import(project=fresh, format="svbench", source=Path(settings.MEDIA_ROOT) / first.storage_prefix)
    assert report.ok, report.problems
    again = _release(fresh, "v1", ["svbench"])
    before, after = _data_files(first, "svbench"), _data_files(again, "svbench")
    assert sorted(after) == sorted(before)
    assert all(after[path] == data for path, data in before.items())
