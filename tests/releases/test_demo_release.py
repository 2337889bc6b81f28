"""Every release format written for the demo project (real generated media), validated, read back as each
benchmark's loader would and compared with the database; a test-style LongVideoBench release has no answers."""

import hashlib

import pytest

from annotator.models import MCQ, ChainPair, ItemStatus, QAChain, RelationDecision
from demo import storyboard as sb
from demo.services import MAIN_VIDEO_NAME, demo_project_load
from releases.build import release_build
from releases.models import DatasetRelease, ReleaseStatus
from tests.releases.read_back import paths, read_bytes, read_csv, read_json, read_jsonl
from videos.models import Video
from videos.probe import probe_file

pytestmark = pytest.mark.django_db

WORKED = [s for s in ItemStatus.values if s != ItemStatus.DRAFT]  # everything a person has touched
FORMATS = ["svbench", "longvideobench", "mvpbench", "livibench", "generic"]


@pytest.fixture
def demo(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return demo_project_load(force=True).project


def _release(project, version, **fields):
    fields.setdefault("formats", FORMATS)
    fields.setdefault("filters", {"statuses": WORKED})
    return DatasetRelease.objects.create(project=project, version=version, seed=5, **fields)


def test_every_format_for_the_demo_is_valid_and_reads_back_as_the_database_has_it(demo):
    release = release_build(release=_release(demo, "v1", split_config={"ratios": {"train": 0.5, "test": 0.5}}))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    assert release.validation_errors == []
    listed = paths(release)
    for f in release.files:  # the manifest's sha256 is the stored bytes'
        assert hashlib.sha256(read_bytes(release, f["path"])).hexdigest() == f["sha256"]
    main = Video.objects.get(project=demo, name=MAIN_VIDEO_NAME)
    split = main.split
    assert split in {"train", "test"}

    # SVBench: one Dialogue element per released chain in time order, never empty; Con pairs the next chain
    # with timestamps bit-identical to Dialogue's; Path aligned with Streaming; the meta CSV points at them.
    chains = list(
        QAChain.objects.filter(project=demo, clip__video=main, status__in=WORKED).order_by("clip__index")
    )
    dialogue = read_json(release, f"svbench/Dialogue/{main.name}.json")
    assert [e["chain"]["questions"] for e in dialogue] == [
        [p.question for p in c.pairs.order_by("index")] for c in chains
    ]
    assert all(e["chain"]["questions"] for e in dialogue)
    assert all(len(e["chain"]["questions"]) == len(e["chain"]["answers"]) for e in dialogue)
    starts = [(e["qac_timestamps_start"], e["qac_timestamps_end"]) for e in dialogue]
    assert starts == [(c.clip.start_s, c.clip.end_s) for c in chains]
    con = read_json(release, f"svbench/Con/{main.name}.json")
    by_start = {e["qac_timestamps_start"]: i for i, e in enumerate(dialogue)}
    for element in con:
        i = by_start[element["chain_1"]["qac_timestamps_start"]]
        assert element["chain_2"]["qac_timestamps_start"] == dialogue[i + 1]["qac_timestamps_start"]
        assert element["chain_2"]["qac_timestamps_end"] == dialogue[i + 1]["qac_timestamps_end"]
        rel = element["relationship"]
        assert len(rel["chainBefore"]) == len(rel["chainAfter"]) == len(rel["relationship"])
    released_pairs = ChainPair.objects.filter(video=main, status__in=WORKED)
    # An accepted pair releases its accepted links; a pair still in review also its candidate ones.
    linked = sum(
        cp.relations.filter(
            decision__in=[RelationDecision.ACCEPTED]
            + ([] if cp.status == ItemStatus.ACCEPTED else [RelationDecision.CANDIDATE])
        ).count()
        for cp in released_pairs
        if cp.chain_before.status in WORKED and cp.chain_after.status in WORKED
    )
    assert sum(len(e["relationship"]["relationship"]) for e in con) == linked
    streaming = read_json(release, f"svbench/Streaming/{main.name}.json")
    path = read_json(release, f"svbench/Path/{main.name}.json")["Paths"]
    assert len(path) == len(streaming)
    for steps, s in zip(path, streaming, strict=True):
        assert [dialogue[c]["chain"]["questions"][q] for c, q in steps] == s["questions"]
        assert [[dialogue[c]["qac_timestamps_start"], dialogue[c]["qac_timestamps_end"]] for c, _ in steps] == s[
            "timestamps"
        ]
    (meta,) = read_csv(release, "svbench/meta.csv")
    assert meta["Video_Name"] == main.name and meta["Sort_of_Set"] == split.capitalize()
    assert meta["Path_of_Video"] in listed and meta["Path_of_QandA"] in listed and meta["Path_of_Con"] in listed

    # LongVideoBench: the released LVB-category MCQs, every subtitle file there, floats, duration ≤ probed.
    lvb = MCQ.objects.filter(project=demo, status__in=WORKED, category__in=[m.category for m in sb.MCQS])
    records = read_json(release, f"longvideobench/lvb_{split}.json")
    assert sorted(r["question"] for r in records) == sorted(m.question for m in lvb)
    probed = probe_file(main.original.path).duration_s
    for r in records:
        assert f"subtitles/{r['subtitle_path']}" in listed and f"videos/{r['video_path']}" in listed
        assert isinstance(r["duration"], float) and r["duration"] <= probed
        assert isinstance(r["starting_timestamp_for_subtitles"], float)
        mcq = lvb.get(question=r["question"])
        assert r["candidates"] == mcq.options and r["correct_choice"] == mcq.correct_index
        assert r["position"] == [m.frame_index for m in mcq.moments.order_by("order")]
        assert r["question_wo_referring_query"] == mcq.question_wo_referring_query
    cues = read_json(release, f"subtitles/{main.name}.json")
    assert len(cues) == main.cues.count() and all(isinstance(x, float) for c in cues for x in c["timestamp"])

    # MVPBench: the multi-video question, its answer one of its options.
    mvp = [r for name in listed if name.startswith("mvpbench/") for r in read_jsonl(release, name)]
    assert [r["query"].count("<video>") for r in mvp] == [3]
    assert all(r["answer"] in r["options"] and r["id"] == f"{sb.MVP_REFERENCE.name}.mp4" for r in mvp)

    # LiViBench (our JSONL v1): the livestream question with its comments and ASR files.
    livi_files = [name for name in listed if name.startswith("livibench/") and name.count("/") == 1]
    (livi,) = [r for name in livi_files for r in read_jsonl(release, name)]
    assert livi["question"] == sb.LIVI_MCQ.question and livi["task"] == "event recognition"
    assert livi["options"] == list(sb.LIVI_MCQ.options) and livi["answer"] == sb.LIVI_MCQ.correct_index
    assert livi["comments_file"] in listed and livi["asr_file"] in listed
    assert len(read_jsonl(release, livi["comments_file"])) == main.comments.count()

    # Generic JSONL: every released item once, with its provenance.
    item_files = [name for name in listed if name.startswith("generic/") and name != "generic/videos.jsonl"]
    generic = [r for name in item_files for r in read_jsonl(release, name)]
    expected = (
        QAChain.objects.filter(project=demo, status__in=WORKED).count()
        + ChainPair.objects.filter(project=demo, status__in=WORKED).count()
        + MCQ.objects.filter(project=demo, status__in=WORKED).count()
    )
    assert len(generic) == expected and all("provenance" in r for r in generic)

    # The same inputs give the same bytes.
    again = release_build(release=_release(demo, "v1-again", split_config={"ratios": {"train": 0.5, "test": 0.5}}))
    same = {f["path"]: f["sha256"] for f in again.files if f["path"] != "manifest.json"}
    assert same == {f["path"]: f["sha256"] for f in release.files if f["path"] != "manifest.json"}


def test_a_test_style_longvideobench_release_of_the_demo_has_no_answers(demo):
    release = release_build(release=_release(demo, "test-style", formats=["longvideobench"], test_style=True))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    files = [name for name in paths(release) if name.startswith("longvideobench/lvb_")]
    records = [r for name in files for r in read_json(release, name)]
    assert records and all("correct_choice" not in r for r in records)
    assert all(len(r["candidates"]) in (4, 5) for r in records)
