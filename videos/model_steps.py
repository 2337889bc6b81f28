"""Steps that call a model endpoint (speech recognition, the LLM's complexity score), started by hand.

They cost money, so an admin starts them, for one video or for every ready video that still lacks
the step's result; each runs as a job (the browser and the API start them here, one way).
"""

from typing import NamedTuple

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from jobs.models import BackgroundJob
from jobs.services import JobAlreadyRunning, job_create, job_start_check_register
from llm.endpoints import endpoint_require
from projects.models import Project
from projects.refusals import Refused

from .models import Video, VideoStatus

TRANSCRIBE_TASK = "videos.transcribe"
COMPLEXITY_TASK = "videos.complexity"


class ModelStep(NamedTuple):
    task: str  # the job kind, which is also the Celery task's name
    label: str


# step → its task and what the job list calls it.
MODEL_STEPS = {
    "transcribe": ModelStep(TRANSCRIBE_TASK, gettext_lazy("Transcribing speech")),
    "complexity": ModelStep(COMPLEXITY_TASK, gettext_lazy("Scoring complexity")),
}


# A retried model step refuses as its first start did when the project has no endpoint.
job_start_check_register(kinds=[s.task for s in MODEL_STEPS.values()], check=endpoint_require)


class NoAudioTrack(Refused):
    """Transcription was asked of a video without sound; the message says so, for the user."""

    status, code = 422, "no_audio"


def video_step_start(*, video: Video, step: str, user=None, params: dict | None = None) -> BackgroundJob:
    """Queue one model step for one video.

    Raises KeyError for a step that does not exist, NoAudioTrack for transcribing a silent video,
    llm.endpoints.NoModelEndpoint when the project has no endpoint to call (before any job row
    exists) and jobs.services.JobAlreadyRunning while the same step runs for the video.
    """
    task = MODEL_STEPS[step].task
    if step == "transcribe" and not video.has_audio:
        raise NoAudioTrack(_("%(name)s has no audio track to transcribe.") % {"name": video.name})
    endpoint_require(project=video.project)
    return job_create(project=video.project, kind=task, target=video, user=user, params=params)


def videos_step_start(*, project: Project, videos: QuerySet[Video], step: str, user=None) -> tuple[int, int]:
    """Queue the step for every ready video among these that lacks its result (no transcript / no score).

    Returns how many jobs started and how many were skipped because the step already runs there.
    Raises llm.endpoints.NoModelEndpoint, before starting any, when the project has no endpoint.
    """
    endpoint_require(project=project)
    videos = videos.filter(status=VideoStatus.READY)
    if step == "transcribe":
        videos = videos.filter(has_audio=True).exclude(cues__isnull=False)
    else:
        videos = videos.filter(complexity_score__isnull=True)
    started = skipped = 0
    for video in videos:
        video.project = project  # one project for all: spares a query per video
        try:
            video_step_start(video=video, step=step, user=user)
            started += 1
        except JobAlreadyRunning:
            skipped += 1
    return started, skipped
