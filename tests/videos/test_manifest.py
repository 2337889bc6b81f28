import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests import factories
from videos.manifest import ManifestError, import_rows, parse_manifest
from videos.models import Video
from videos.synthetic import SceneSpec, make_scene_video

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("imports")
    make_scene_video(root / "a.mp4", [SceneSpec(1.0), SceneSpec(1.0)], width=160, height=90)
    (root / "sub").mkdir()
    make_scene_video(root / "sub" / "b.mkv", [SceneSpec(1.5)], width=160, height=90)
    (root / "readme.txt").write_text("not a video")
    (root / "broken.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 100)
    return root


def test_folder_import_command_reports_each_refusal_and_goes_on(folder, capsys):
    project = factories.ProjectFactory(slug="p1")
    call_command("import_videos", "p1", "--folder", str(folder))
    assert sorted(Video.objects.filter(project=project).values_list("name", flat=True)) == ["a", "b"]
    out = capsys.readouterr()
    assert "2 imported, 1 refused" in out.out
    assert "broken.mp4" in out.err  # the refused file is named with its reason


def test_manifest_csv_carries_metadata_and_checks_import_roots(folder, settings):
    project = factories.ProjectFactory()
    data = b"path,name,topic_category,view_count,speaker\n" + f"{folder / 'a.mp4'},cooking_01,LC,1234,Ann\n".encode()
    rows = parse_manifest(data, "m.csv")
    settings.VIDEO_IMPORT_ROOTS = ["/nonexistent"]
    result = import_rows(project=project, rows=rows)
    assert result.refused == 1 and "VIDEO_IMPORT_ROOTS" in result.outcomes[0].message
    settings.VIDEO_IMPORT_ROOTS = [str(folder)]
    result = import_rows(project=project, rows=rows)
    assert result.imported == 1
    video = Video.objects.get(project=project)
    assert (video.name, video.topic_category, video.view_count) == ("cooking_01", "LC", 1234)
    assert video.metadata == {"speaker": "Ann"}


def test_manifest_jsonl_and_bad_manifests(folder):
    rows = parse_manifest((json.dumps({"url": str(folder / "a.mp4"), "name": "x"}) + "\n").encode(), "m.jsonl")
    assert rows[0].location.endswith("a.mp4") and rows[0].metadata == {"name": "x"}
    for data, message in [
        (b"name,category\nx,y\n", "path or url column"),
        (b'{"path": "a.mp4"}\nnot json\n', "line 2"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 50, "not a text file"),
        (b"path\n", "no rows"),
    ]:
        with pytest.raises(ManifestError, match=message):
            parse_manifest(data, "m.csv")


def test_command_refuses_unknown_project():
    with pytest.raises(CommandError, match="No project"):
        call_command("import_videos", "nope", "--folder", "/tmp")
