"""Fetch-and-authorise for things inside a project, in one step (Zulip's access_*_by_id).

A missing project, a project that is not yours and a video of another project all give the same
404; a member whose role does not allow the action gets 403 (projects.permissions decides).
"""

from rest_framework import exceptions

from jobs.models import BackgroundJob
from jobs.selectors import job_get
from projects.permissions import Action, get_project_or_404
from videos.models import Video

NO_SUCH_VIDEO = "No such video in this project."
NO_SUCH_JOB = "No such job in this project."


def video_or_404(user, slug: str, video_id: int, action: str = Action.VIEW, *, select_related=()) -> Video:
    project = get_project_or_404(user, slug, action)
    # The raw probe and free-form metadata can be large, and no answer here shows them.
    videos = Video.objects.filter(project=project, pk=video_id).defer("probe", "metadata")
    video = videos.select_related(*select_related).first()
    if video is None:
        raise exceptions.NotFound(NO_SUCH_VIDEO)
    video.project = project  # already fetched: spares a query wherever the view reads it
    return video


def job_or_404(user, slug: str, job_id: int, action: str = Action.VIEW) -> BackgroundJob:
    project = get_project_or_404(user, slug, action)
    job = job_get(project=project, job_id=job_id)
    if job is None:
        raise exceptions.NotFound(NO_SUCH_JOB)
    job.project = project
    return job
