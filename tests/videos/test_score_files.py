import pytest

from videos.score_files import score_rows


def test_wide_form_one_column_per_score_and_empty_cells_skipped():
    data = b"Video,aesthetic,flow\nkitchen,4.5,0.3\nstreet,,12\n\n,9,9\n"
    assert list(score_rows(data)) == [("kitchen", "aesthetic", 4.5), ("kitchen", "flow", 0.3), ("street", "flow", 12.0)]


@pytest.mark.parametrize("header", [b"video,name,value", b"video_name,score,value"])
def test_long_form_one_score_per_row(header):
    assert list(score_rows(header + b"\nkitchen, quality ,0.9\n")) == [("kitchen", "quality", 0.9)]


def test_other_encodings_are_read():
    data = "video,美学\n厨房,5\n".encode("utf-16")
    assert list(score_rows(data)) == [("厨房", "美学", 5.0)]


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "the first column must be named video"),
        (b"clip,aesthetic\n", "the first column must be named video"),
        (b"video,aesthetic\nkitchen,lovely\n", "line 2: could not convert"),
        (b"video,aesthetic\nkitchen,1\nstreet,inf\n", "line 3: 'inf' is not a finite number"),
        (b"video,name,value\nkitchen,quality\n", "line 2: expected three columns"),
        (b"video,name,value\nkitchen,,3\n", "line 2: expected three columns"),
        (bytes(range(256)) * 8, "not a text file"),
    ],
    ids=["empty", "no-video-column", "not-a-number", "infinite", "short-row", "no-score-name", "binary"],
)
def test_bad_files_say_why_and_where(data, message):
    with pytest.raises(ValueError, match="^" + message):
        list(score_rows(data))


@pytest.mark.django_db
def test_the_browser_page_reads_scores_with_the_same_rules(client, project, people):
    from django.contrib.messages import get_messages
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from tests import factories
    from videos.models import ExternalScore

    video = factories.VideoFactory(project=project, name="kitchen")
    client.force_login(people["admin"])
    url = reverse("videos:scores_upload", args=[project.slug])

    response = client.post(url, {"file": SimpleUploadedFile("s.csv", b"video,aesthetic\nkitchen,nan\n")})
    assert "line 2: 'nan' is not a finite number" in [str(m) for m in get_messages(response.wsgi_request)][0]
    assert not ExternalScore.objects.exists()

    client.post(url, {"file": SimpleUploadedFile("s.csv", b"video,name,value\nkitchen,aesthetic,5.5\n")})
    assert list(ExternalScore.objects.filter(video=video).values_list("name", "value")) == [("aesthetic", 5.5)]
