"""Flagging a video unusable: reasons from the project's taxonomy, a note where the reason needs one."""

import pytest
from django.urls import reverse

from tests import factories
from videos.models import Video
from videos.unusable import (
    UnusableRefused,
    unusable_label,
    video_clear_unusable,
    video_flag_unusable,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project)


def test_flag_records_reason_note_and_who(video, people):
    video_flag_unusable(video=video, reason="still_frames", note=" frozen after 0:40 ", user=people["annotator"])
    stored = Video.objects.get(pk=video.pk)
    assert (stored.unusable_reason, stored.unusable_note, stored.unusable_by) == (
        "still_frames",
        "frozen after 0:40",
        people["annotator"],
    )
    assert unusable_label(project=video.project, code="still_frames") == "Still frames / no motion"


def test_other_needs_a_note(video, people):
    with pytest.raises(UnusableRefused, match="Say in the note"):
        video_flag_unusable(video=video, reason="other", note="  ", user=people["annotator"])
    video_flag_unusable(video=video, reason="other", note="Audio only", user=people["annotator"])
    assert Video.objects.get(pk=video.pk).unusable_reason == "other"


@pytest.mark.parametrize(
    "reason, message",
    [("", "Choose why the video is unusable"), ("blurry", '"blurry" is not a reason this project knows')],
)
def test_unknown_or_missing_reasons_are_refused_and_nothing_changes(video, people, reason, message):
    with pytest.raises(UnusableRefused, match=message):
        video_flag_unusable(video=video, reason=reason, user=people["annotator"])
    assert Video.objects.get(pk=video.pk).unusable_reason == ""


def test_reasons_are_project_data(video, people):
    project = video.project
    project.taxonomies = project.taxonomies | {"unusable_reasons": [{"code": "watermark", "name": "Watermark"}]}
    project.save()
    with pytest.raises(UnusableRefused, match="watermark"):
        video_flag_unusable(video=video, reason="still_frames", user=people["annotator"])
    video_flag_unusable(video=video, reason="watermark", user=people["annotator"])
    assert unusable_label(project=project, code="watermark") == "Watermark"
    assert unusable_label(project=project, code="gone") == "gone"  # removed since: shown as stored


def test_overlong_note_is_refused(video, people):
    with pytest.raises(UnusableRefused, match="under 2000 characters"):
        video_flag_unusable(video=video, reason="still_frames", note="x" * 2001, user=people["annotator"])


def test_clear_removes_the_flag(video, people):
    video_flag_unusable(video=video, reason="incomplete_subtitles", note="stops at 3:00", user=people["annotator"])
    video_clear_unusable(video=video)
    stored = Video.objects.get(pk=video.pk)
    assert (stored.unusable_reason, stored.unusable_note, stored.unusable_by) == ("", "", None)


def test_the_video_list_shows_the_flag(client, video, people):
    video_flag_unusable(video=video, reason="incomplete_subtitles", note="stops at 3:00", user=people["annotator"])
    client.force_login(people["admin"])
    html = client.get(reverse("videos:list", args=[video.project.slug])).content.decode()
    assert 'data-unusable="incomplete_subtitles"' in html and "stops at 3:00" in html
