"""What releases do when a job tells them something (jobs cannot import releases, so it signals)."""

from django.dispatch import receiver
from django.utils import timezone

from jobs.models import BackgroundJob
from jobs.signals import job_abandoned

from .models import DatasetRelease, ReleaseStatus


@receiver(job_abandoned, sender=BackgroundJob, dispatch_uid="releases.build_abandoned")
def release_build_abandoned(*, job: BackgroundJob, reason: str, **kwargs) -> None:
    """A build whose worker stopped for good fails its release with the reason, as a raised error does."""
    DatasetRelease.objects.filter(job=job, status__in=[ReleaseStatus.QUEUED, ReleaseStatus.BUILDING]).update(
        status=ReleaseStatus.FAILED,
        finished_at=timezone.now(),
        validation_errors=[{"format": "", "file": "", "item": "release", "message": f"The build stopped: {reason}"}],
    )
