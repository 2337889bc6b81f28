"""Media in a release, on a real generated video: originals copied under videos/, clips cut by ffmpeg."""

import hashlib
import json
import subprocess

import pytest
from django.core.files.storage import default_storage

from annotator.models import MCQ, ItemStatus, MCQVideo, QAChain, QAPair
from releases.build import release_build
from releases.models import DatasetRelease, ReleaseStatus
from releases.writers.media import probe_local_duration
from tests.factories import ClipFactory, UserFactory, video_from_file
from videos.synthetic import SceneSpec, make_scene_video

from .read_back import paths, read_bytes, read_json

pytestmark = pytest.mark.django_db
FPS = 25
SCENES = [2.0, 3.0, 2.0]


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("media") / "scenes.mp4"
    make_scene_video(path, [SceneSpec(s) for s in SCENES], width=160, height=96, fps=FPS)
    return path


@pytest.fixture
def media_release(project, scene_file):
    video = video_from_file(
        project,
        scene_file,
        name="scenes",
        duration_s=sum(SCENES),
        fps=float(FPS),
        frame_count=int(sum(SCENES) * FPS),
        width=160,
        height=96,
        has_audio=True,
        topic_category="LV",
    )
    # Clips as the pipeline pads them: scene ± 0.5 s, within the video.
    bounds = [(0.0, 2.5), (1.5, 5.5), (4.5, 7.0)]
    for index, (start, end) in enumerate(bounds):
        chain = QAChain.objects.create(
            project=project,
            clip=ClipFactory(video=video, index=index, start_s=start, end_s=end),
            status=ItemStatus.ACCEPTED,
        )
        QAPair.objects.create(chain=chain, index=0, question=f"What is shown in scene {index}?", answer="A pattern.")
    mcq = MCQ.objects.create(
        project=project,
        status=ItemStatus.ACCEPTED,
        question="Which pattern comes first?",
        question_wo_referring_query="Which pattern comes first?",
        options=["bars", "boxes", "noise", "fractal"],
        correct_index=0,
        category="SSS",
        level="L2-Relation",
    )
    MCQVideo.objects.create(mcq=mcq, video=video, order=0)

    def make(version, **filters):
        return DatasetRelease.objects.create(
            project=project,
            version=version,
            formats=["svbench", "longvideobench"],
            filters=filters,
            created_by=UserFactory(),
            storage_prefix=f"releases/{project.slug}/{version}/",
        )

    return video, bounds, make


def _frames(data: bytes, tmp_path) -> int:
    path = tmp_path / "clip.mp4"
    path.write_bytes(data)
    out = subprocess.run(  # noqa: S603
        [
            "ffprobe",
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=nb_read_frames",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(json.loads(out.stdout)["streams"][0]["nb_read_frames"])


def test_include_media_copies_the_original_and_the_loader_paths_resolve(media_release):
    video, _, make = media_release
    release = release_build(release=make("v1"))  # include_media defaults to true
    assert release.status == ReleaseStatus.READY, release.validation_errors
    with default_storage.open(video.original.name, "rb") as fh:
        original = fh.read()
    assert read_bytes(release, "videos/scenes.mp4") == original
    (record,) = read_json(release, "longvideobench/lvb_test.json")
    assert f"videos/{record['video_path']}" in paths(release)
    assert f"subtitles/{record['subtitle_path']}" in paths(release)
    # duration ≤ what ffprobe reads from the copied file.
    probed = probe_local_duration(default_storage.path(release.storage_prefix + "videos/scenes.mp4"))
    assert record["duration"] <= probed


def test_include_media_false_writes_text_only(media_release):
    _, _, make = media_release
    release = release_build(release=make("v1", include_media=False))
    assert release.status == ReleaseStatus.READY, release.validation_errors
    assert not [p for p in paths(release) if p.startswith(("videos/", "clips/"))]


def test_clip_files_are_cut_frame_accurately_and_identically_twice(media_release, tmp_path):
    _, bounds, make = media_release
    one = release_build(release=make("v1", include_media=False, clip_files=True))
    assert one.status == ReleaseStatus.READY, one.validation_errors
    clips = [p for p in paths(one) if p.startswith("clips/")]
    assert clips == ["clips/scenes/0000.mp4", "clips/scenes/0001.mp4", "clips/scenes/0002.mp4"]
    for path, (start, end) in zip(clips, bounds, strict=True):
        assert abs(_frames(read_bytes(one, path), tmp_path) - round((end - start) * FPS)) <= 1
    two = release_build(release=make("v2", include_media=False, clip_files=True))
    for path in clips:
        assert hashlib.sha256(read_bytes(one, path)).digest() == hashlib.sha256(read_bytes(two, path)).digest()
