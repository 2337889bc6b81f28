"""One rule for video names, applied however a video comes in (upload, folder, manifest, API)."""

from pathlib import Path

import pytest
from django.core.management import call_command

from tests import factories
from videos.ingest import ImportRefused, video_import
from videos.manifest import import_rows, parse_manifest
from videos.models import Video
from videos.names import InvalidVideoName, video_name_check, video_name_from_filename
from videos.synthetic import SceneSpec, make_scene_video


@pytest.fixture(autouse=True)
def _no_worker(monkeypatch):
    monkeypatch.setattr("jobs.services.current_app.send_task", lambda name, args: type("R", (), {"id": "x"})())


@pytest.fixture(scope="module")
def video_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("names") / "clip.mp4"
    make_scene_video(path, [SceneSpec(1.0)], width=160, height=90)
    return path


@pytest.mark.parametrize("name", ["street_01", "Cooking show (2)", "做饭-01", "a.b", "v1+v2, take 3"])
def test_good_names_pass(name):
    assert video_name_check(name) == name


@pytest.mark.parametrize(
    "name, problem",
    [
        ("", "it is empty"),
        ("a/b", "'/'"),
        ("..", "'..'"),
        ("../../etc/passwd", "'/'"),
        ("a..b", "'..'"),
        ("<script>alert(1)</script>", "'<'"),
        ('x"onload=', "'\"'"),
        ("a\\b", "'\\\\'"),
        (".hidden", "starts with '.'"),
        ("-rf", "starts with '-'"),
        ("trailing.", "ends with '.'"),
        ("tab\there", "'\\t'"),
        ("x" * 201, "longer than 200"),
    ],
)
def test_bad_names_are_refused_with_the_name_and_the_reason(name, problem):
    with pytest.raises(InvalidVideoName) as caught:
        video_name_check(name)
    message = str(caught.value)
    assert repr(name[:80])[:-1] in message and problem in message


@pytest.mark.parametrize(
    "filename, name",
    [("street.mp4", "street"), ("<b>x<i>.mp4", "_b_x_i_"), ("..a..b.mp4", "a.b"), ("....mp4", "video")],
)
def test_names_taken_from_file_names_are_made_to_fit(filename, name):
    assert video_name_from_filename(filename) == name
    assert video_name_check(video_name_from_filename(filename))


@pytest.mark.django_db
def test_video_import_refuses_a_bad_name_and_stores_nothing(video_file):
    project = factories.ProjectFactory()
    with pytest.raises(ImportRefused, match=r"The video name '\.\./x' is not allowed"):
        video_import(project=project, source=video_file, filename="clip.mp4", name="../x")
    assert not Video.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_manifest_rows_with_bad_names_are_refused_and_the_others_go_on(video_file, settings):
    settings.VIDEO_IMPORT_ROOTS = [str(video_file.parent)]
    project = factories.ProjectFactory()
    data = f"path,name\n{video_file},<i>x</i>\n{video_file},good_one\n".encode()
    result = import_rows(project=project, rows=parse_manifest(data, "m.csv"))
    assert [o.ok for o in result.outcomes] == [False, True]
    assert "The video name '<i>x</i>' is not allowed" in result.outcomes[0].message
    assert list(Video.objects.filter(project=project).values_list("name", flat=True)) == ["good_one"]


@pytest.mark.django_db
def test_folder_import_makes_file_names_fit(tmp_path, video_file):
    (tmp_path / "<b>odd..name.mp4").write_bytes(video_file.read_bytes())
    project = factories.ProjectFactory(slug="names")
    call_command("import_videos", "names", "--folder", str(tmp_path))
    assert list(Video.objects.filter(project=project).values_list("name", flat=True)) == ["_b_odd.name"]


@pytest.mark.django_db
def test_api_upload_refuses_a_bad_name(client, project, people, video_file):
    from rest_framework.authtoken.models import Token

    token, _ = Token.objects.get_or_create(user=people["admin"])
    with open(video_file, "rb") as fh:
        response = client.post(
            f"/api/projects/{project.slug}/videos/",
            {"file": fh, "name": "a/b"},
            headers={"Authorization": f"Token {token.key}"},
        )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "import_refused"
    assert "The video name 'a/b' is not allowed" in response.json()["error"]["message"]
    assert not Video.objects.filter(project=project).exists()
