"""What videos do when a job tells them something (jobs cannot import videos, so it signals)."""

from django.dispatch import receiver

from jobs.models import BackgroundJob
from jobs.signals import job_abandoned

from .ingest import PROCESS_TASK
from .models import Video, VideoStatus


@receiver(job_abandoned, sender=BackgroundJob, dispatch_uid="videos.process_abandoned")
def video_process_abandoned(*, job: BackgroundJob, reason: str, **kwargs) -> None:
    """Processing whose worker stopped for good fails the video with the reason, as a raised error does."""
    if job.kind == PROCESS_TASK and job.target_id is not None:
        Video.objects.filter(pk=job.target_id, status=VideoStatus.PROCESSING).update(
            status=VideoStatus.FAILED, status_reason=reason[:2000]
        )
