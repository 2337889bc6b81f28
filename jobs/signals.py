"""Signals from jobs to the apps whose work they run (jobs cannot import those apps).

`job_abandoned(sender=BackgroundJob, job=..., reason=...)` is sent, inside the transaction that marks
the job failed, when its worker stopped and it will not run again by itself. The app that owns the
target then shows the failure where it shows its own (a video's status, a release's state), as it
would have had the task raised.
"""

from django.dispatch import Signal

job_abandoned = Signal()
