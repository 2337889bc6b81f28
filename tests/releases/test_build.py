"""release_build: status, idempotence, byte-identical files and archive, manifest, statistics, filters."""

import hashlib
import io
import json
import zipfile

import pytest
from django.core.files.storage import default_storage

from annotator.models import MCQ
from releases.build import ReleaseNotBuildable, release_build
from releases.models import ReleaseStatus
from releases.validation import schema_errors
from videos.models import Video

from .read_back import paths, read_bytes, read_json
from .release_data import build_small_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def small():
    return build_small_project()


def _digests(release) -> dict:
    return {path: hashlib.sha256(read_bytes(release, path)).hexdigest() for path in paths(release)}


def test_build_marks_ready_and_records_every_file_with_its_sha256(small):
    seen = []
    release = release_build(release=small.release(), progress=lambda d, t, m: seen.append((d, t, m)))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    assert release.validation_errors == []
    assert paths(release) == sorted(paths(release))
    assert "manifest.json" in paths(release)
    for record in release.files:
        data = read_bytes(release, record["path"])
        assert record["bytes"] == len(data)
        assert record["sha256"] == hashlib.sha256(data).hexdigest()
    assert release.storage_prefix == f"releases/{small.project.slug}/v1/"
    assert release.finished_at is not None
    assert seen and seen[-1][0] == seen[-1][1]
    # The manifest lists every other file with the same sha256.
    manifest = read_json(release, "manifest.json")
    assert manifest == release.manifest
    assert schema_errors("manifest", manifest) == []
    assert {f["path"] for f in manifest["files"]} == set(paths(release)) - {"manifest.json"}
    by_path = {f["path"]: f for f in release.files}
    assert all(by_path[f["path"]] == f for f in manifest["files"])


def test_manifest_holds_filters_split_versions_and_identity(small):
    release = release_build(release=small.release(filters={"include_media": False}))
    m = release.manifest
    assert m["version"] == "v1" and m["release_id"] == release.pk
    assert m["created_by"] == small.admin.username
    assert m["created_at"] == release.created_at.isoformat()
    assert m["filters"] == {"include_media": False}
    assert m["split"]["config"] == {"ratios": {"train": 0.5, "test": 0.5}} and m["split"]["seed"] == 7
    assert set(m["schema_versions"]) == {"manifest", "svbench", "longvideobench", "mvpbench", "livibench", "generic"}
    assert m["app_version"] == "0.1.0"
    counts = m["counts"]
    assert counts["videos"] == 4
    assert counts["items"] == {"qa_chain": 4, "chain_pair": 2, "relation": 1, "mcq": 5}
    assert counts["qa_pairs"] == 3 + 2 + 2 + 2
    assert sum(s["videos"] for s in counts["per_split"].values()) == 4
    assert counts["categories"]["topic_categories"] == {"KH": 1, "LC": 1, "LV": 2}
    assert counts["categories"]["question_categories"] == {"E2O": 1, "S2E": 1, "SSS": 1}
    assert counts["categories"]["tasks"] == {"event recognition": 1}
    assert counts["duration_groups"] == {"60": 1, "600": 3}


def test_statistics_shape(small):
    stats = release_build(release=small.release()).statistics
    assert stats["videos"] == 4 and stats["qa_pairs"] == 9
    for key, edges in (("duration_histogram", "edges_s"), ("qa_per_video", "edges")):
        assert len(stats[key][edges]) == len(stats[key]["counts"])
        assert sum(stats[key]["counts"]) == 4
    # 5 MCQs → 5 correct options; 4 + 5 + 4 + 3 + 4 options in all.
    lengths = stats["option_lengths"]
    assert sum(lengths["correct"]) == 5 and sum(lengths["distractor"]) == 20 - 5
    assert len(lengths["edges_chars"]) == len(lengths["correct"]) == len(lengths["distractor"])
    # beta: 2 pairs + 1 MCQ = 3 → bin [2, 5); gamma: 1 MVPBench MCQ → bin [1, 2).
    edges, counts = stats["qa_per_video"]["edges"], stats["qa_per_video"]["counts"]
    assert counts[edges.index(2)] >= 1 and counts[edges.index(1)] >= 1


def test_two_builds_give_identical_files_and_archive(small):
    first = release_build(release=small.release())
    digests = _digests(first)
    archive = default_storage.open(first.archive.name, "rb").read()
    # Rebuild the same release from scratch (as a retried task would, after a failure).
    type(first).objects.filter(pk=first.pk).update(status=ReleaseStatus.FAILED)
    first.refresh_from_db()
    again = release_build(release=first)
    assert again.status == ReleaseStatus.READY
    assert _digests(again) == digests
    assert again.files == first.files
    assert default_storage.open(again.archive.name, "rb").read() == archive


def test_a_second_release_of_the_same_data_differs_only_in_identity(small):
    one = release_build(release=small.release("v1"))
    two = release_build(release=small.release("v2"))
    a, b = _digests(one), _digests(two)
    assert set(a) == set(b)
    assert [p for p in a if a[p] != b[p]] == ["manifest.json"]
    m1, m2 = dict(one.manifest), dict(two.manifest)
    for key in ("release_id", "version", "created_at", "created_by"):
        m1.pop(key), m2.pop(key)
    assert m1 == m2


def test_archive_is_a_deterministic_zip_of_every_file(small):
    release = release_build(release=small.release())
    data = default_storage.open(release.archive.name, "rb").read()
    assert release.archive.name == f"{release.storage_prefix}{small.project.slug}-v1.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        top = f"{small.project.slug}-v1/"
        assert [i.filename for i in infos] == [top + p for p in paths(release)]
        assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
        for info in infos:
            assert zf.read(info) == read_bytes(release, info.filename[len(top) :])


def test_ready_and_deleted_releases_are_never_rebuilt(small):
    release = release_build(release=small.release())
    before = _digests(release)
    with pytest.raises(ReleaseNotBuildable):
        release_build(release=release)
    assert _digests(release) == before
    type(release).objects.filter(pk=release.pk).update(status=ReleaseStatus.DELETED)
    with pytest.raises(ReleaseNotBuildable):
        release_build(release=release)


def test_a_rebuild_removes_files_a_failed_build_left_behind(small):
    release = small.release()
    stale = release.storage_prefix + "svbench/Dialogue/stale.json"
    default_storage.save(stale, io.BytesIO(b"[]"))
    release = release_build(release=release)
    assert release.status == ReleaseStatus.READY
    assert not default_storage.exists(stale)


def test_only_accepted_items_by_default_and_statuses_widen_it(small):
    default = release_build(release=small.release("v1"))
    assert default.statistics["items"]["qa_chain"] == 4
    assert default.statistics["items"]["mcq"] == 5
    wide = release_build(
        release=small.release("v2", filters={"include_media": False, "statuses": ["annotating", "accepted"]})
    )
    assert wide.statistics["items"]["qa_chain"] == 5
    assert wide.statistics["items"]["mcq"] == 6
    assert wide.statistics["items"]["chain_pair"] == 3


def test_filters_by_video_and_category(small):
    release = release_build(
        release=small.release(
            formats=["longvideobench", "generic"],
            filters={"include_media": False, "categories": ["E2O", "S2E"], "video_ids": [small.videos["alpha"].pk]},
        )
    )
    assert release.status == ReleaseStatus.READY, release.validation_errors
    assert release.statistics["items"]["mcq"] == 1
    assert release.statistics["videos"] == 1


def test_filters_by_accepted_dates(small):
    empty = release_build(
        release=small.release("v1", formats=["generic"], filters={"include_media": False, "accepted_to": "2025-02-28"})
    )
    assert empty.status == ReleaseStatus.FAILED
    assert empty.validation_errors[0]["message"].startswith("No released item")
    dated = release_build(
        release=small.release(
            "v2",
            formats=["generic"],
            filters={"include_media": False, "accepted_from": "2025-03-01", "accepted_to": "2025-03-01"},
        )
    )
    assert dated.statistics["items"]["mcq"] == 5


def test_splits_are_kept_on_the_videos_for_later_releases(small):
    first = release_build(release=small.release("v1", split_config={"ratios": {"train": 0.5, "test": 0.5}}))
    splits = dict(Video.objects.filter(project=small.project).values_list("name", "split"))
    assert set(splits.values()) <= {"train", "test"} and "" not in splits.values()
    # A later release with another config and seed moves no video.
    second = release_build(release=small.release("v2", split_config={"counts": {"eval": 4}}, seed=99))
    assert dict(Video.objects.filter(project=small.project).values_list("name", "split")) == splits
    assert first.statistics["per_split"] == second.statistics["per_split"]


def test_a_failed_release_ties_no_video_to_a_split(small):
    MCQ.objects.filter(pk=small.mcqs["mvp"].pk).update(correct_index=4)  # three options: no answer label
    failed = release_build(release=small.release("v1", split_config={"ratios": {"train": 0.5, "test": 0.5}}))
    assert failed.status == ReleaseStatus.FAILED
    assert set(Video.objects.filter(project=small.project).values_list("split", flat=True)) == {""}
    # Its manifest still says which split each video would have had.
    assert sum(s["videos"] for s in failed.statistics["per_split"].values()) == 4

    MCQ.objects.filter(pk=small.mcqs["mvp"].pk).update(correct_index=0)
    ready = release_build(release=small.release("v2", split_config={"ratios": {"train": 0.5, "test": 0.5}}))
    assert ready.status == ReleaseStatus.READY
    assert "" not in set(Video.objects.filter(project=small.project).values_list("split", flat=True))


def test_a_build_that_raises_marks_the_release_failed(small, monkeypatch):
    from releases import build

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(build, "_write_archive", boom)
    release = small.release()
    with pytest.raises(RuntimeError):
        release_build(release=release)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED
    assert "disk full" in release.validation_errors[0]["message"]


def test_release_files_work_on_any_storage_not_only_local_disk():
    from django.core.files.storage import InMemoryStorage

    from releases.writers.common import ReleaseFiles, ReleaseStorageError

    storage = InMemoryStorage()
    files = ReleaseFiles(storage, "releases/p/v1/")
    assert not files.local
    files.write_json("a/doc.json", {"x": 1.5, "t": "é"})
    with files.stream("b/lines.jsonl") as out:
        out.write('{"n":1}\n')
        out.write_bytes(b'{"n":2}\n')
    listing = files.listing()
    assert [f["path"] for f in listing] == ["a/doc.json", "b/lines.jsonl"]
    for record in listing:
        data = storage.open("releases/p/v1/" + record["path"]).read()
        assert hashlib.sha256(data).hexdigest() == record["sha256"] and len(data) == record["bytes"]
    assert storage.open("releases/p/v1/a/doc.json").read() == '{"x":1.5,"t":"é"}'.encode()
    with pytest.raises(ReleaseStorageError):
        files.write_bytes("a/doc.json", b"again")
    with pytest.raises(ReleaseStorageError):
        files.write_bytes("../escape.json", b"")


def test_the_manifest_counts_each_format_and_says_why_items_were_left_out(small):
    per_format = release_build(release=small.release()).manifest["per_format"]
    assert list(per_format) == ["svbench", "longvideobench", "mvpbench", "livibench", "generic"]
    assert per_format["generic"] == {"items": {"chain_pair": 2, "mcq": 5, "qa_chain": 4}, "left_out": []}
    assert per_format["svbench"]["items"] == {"chain_pair": 2, "qa_chain": 4}
    (mcqs,) = per_format["svbench"]["left_out"]
    assert mcqs["count"] == 5 and mcqs["reason"].startswith("an MCQ") and len(mcqs["items"]) == 5
    assert per_format["mvpbench"]["items"] == {"mcq": 1}
    for fmt in ("longvideobench", "mvpbench", "livibench"):
        c = per_format[fmt]
        left = {entry["reason"]: entry["count"] for entry in c["left_out"]}
        assert c["items"].get("mcq", 0) + sum(n for r, n in left.items() if r.startswith("an MCQ")) == 5, fmt
        assert left["a QA chain or chain pair (SVBench and generic hold them)"] == 6, fmt
        assert all(entry["items"][0].split()[0] in ("mcq", "qa_chain", "chain_pair") for entry in c["left_out"])


def test_the_manifest_links_every_mcq_record_to_its_item(small):
    release = release_build(
        release=small.release(formats=["longvideobench", "livibench", "generic"], filters={"include_media": False})
    )
    items = release.manifest["items"]
    assert any(f.startswith("longvideobench/") for f in items)
    for file, ids in items.items():
        records = (
            read_json(release, file)
            if file.endswith(".json")
            else [json.loads(line) for line in read_bytes(release, file).decode().splitlines()]
        )
        assert len(records) == len(ids), file
        for record, mcq_id in zip(records, ids, strict=True):
            mcq = MCQ.objects.get(pk=mcq_id)
            assert record["question"] == mcq.question
