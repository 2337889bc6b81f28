"""A subtitle import that would replace cues imported earlier asks first; the API keeps its behaviour."""

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests import factories
from videos.models import SubtitleCue

pytestmark = pytest.mark.django_db

SRT = b"1\n00:00:01,000 --> 00:00:02,000\nnew words\n"


@pytest.fixture
def video(project):
    return factories.VideoFactory(project=project, status="ready")


def _post(client, project, video, **data):
    url = reverse("videos:subtitles_upload", args=[project.slug, video.pk])
    response = client.post(url, {"file": SimpleUploadedFile("new.srt", SRT), **data}, follow=True)
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


def _texts(video):
    return list(SubtitleCue.objects.filter(video=video).values_list("text", flat=True))


def test_a_video_without_cues_imports_at_once_and_its_form_asks_nothing(client, project, people, video):
    client.force_login(people["admin"])
    page = client.get(reverse("videos:player", args=[project.slug, video.pk])).text
    assert 'name="replace"' not in page
    assert "1 cues imported" in _post(client, project, video)
    assert _texts(video) == ["new words"]


def test_replacing_earlier_cues_needs_the_answer_and_the_form_asks_for_it(client, project, people, video):
    SubtitleCue.objects.create(video=video, start_s=1, end_s=2, text="old words", source="srt")
    client.force_login(people["admin"])
    page = client.get(reverse("videos:player", args=[project.slug, video.pk])).text
    assert 'name="replace" value="1" required' in page
    assert 'data-confirm="This replaces the 1 subtitle cue imported earlier. Import anyway?"' in page

    said = _post(client, project, video)
    assert "already has 1 subtitle cues" in said and "new.srt" in said
    assert _texts(video) == ["old words"]

    assert "1 cues imported" in _post(client, project, video, replace="1")
    assert _texts(video) == ["new words"]
