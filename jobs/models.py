from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from projects.models import Project


class JobStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


class BackgroundJob(models.Model):
    """What a long step is doing, so every screen can show its progress, outcome and a retry.

    The Celery task is only the engine; this row is the truth the UI and API read.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=60, help_text="Task name, e.g. videos.probe")
    # What the job works on, by model label and primary key, so a retry can run it again.
    target_type = models.CharField(max_length=60, blank=True)
    target_id = models.BigIntegerField(null=True, blank=True)
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED)
    progress_done = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    celery_task_id = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Refreshed while the job runs (by its progress and by a timer beside the task): a running job
    # whose heartbeat is old lost its worker, and the sweep restarts or fails it.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(progress_done__gte=0) & Q(progress_total__gte=0), name="job_progress_nonnegative"
            ),
        ]
        indexes = [
            models.Index(fields=["project", "status"]),
            models.Index(fields=["target_type", "target_id"]),
            # The stale-job sweep reads only running jobs, every minute, from a table that keeps them all.
            models.Index(fields=["heartbeat_at"], condition=Q(status="running"), name="job_running_heartbeat"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} {self.status}"

    @property
    def percent(self) -> int | None:
        if not self.progress_total:
            return None
        return min(100, int(100 * self.progress_done / self.progress_total))

    @property
    def is_finished(self) -> bool:
        return self.status in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)
