from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models import ONE_ITEM, ItemKind, ItemRef, ItemStatus
from llm.models import LLMCall
from projects.models import Project


class QualityScore(ItemRef):
    """An LLM judge's verdict on one version of an item (SVBench: 7 dimensions and overall, 0–100)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="quality_scores")
    item_version = models.PositiveIntegerField()
    dimensions = models.JSONField(default=dict, help_text="dimension → 0..100")
    overall = models.PositiveSmallIntegerField()
    threshold = models.PositiveSmallIntegerField()
    passed = models.BooleanField()
    comments = models.TextField(blank=True)
    llm_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=ONE_ITEM, name="score_exactly_one_item"),
            models.CheckConstraint(condition=Q(overall__lte=100), name="score_overall_0_100"),
        ]
        indexes = [models.Index(fields=["project", "overall"])]

    def __str__(self) -> str:
        return f"{self.item_kind} {self.item.pk if self.item else '?'} v{self.item_version}: {self.overall}"


class ReviewQueue(models.Model):
    """A pool of items at one stage that its members pull from."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="queues")
    name = models.CharField(max_length=120)
    stage = models.CharField(
        max_length=20,
        choices=[
            (ItemStatus.ANNOTATING, "Annotating"),
            (ItemStatus.EXAMINING, "Examining"),
            (ItemStatus.REVISING, "Revising"),
        ],
    )
    item_kind = models.CharField(max_length=20, choices=ItemKind.choices)
    # Which items belong: category, duration group, score range, video ids …
    filters = models.JSONField(default=dict, blank=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="review_queues")
    priority = models.SmallIntegerField(default=0)
    overlap = models.PositiveSmallIntegerField(default=1, help_text="How many people see each item at this stage")
    # Long enough for a working session: a lease held while someone works lapses only when they have left.
    lease_seconds = models.PositiveIntegerField(default=4 * 60 * 60)
    # How often an open page renews its lease (static/js/lease.js) and says it is still open.
    heartbeat_seconds = models.PositiveIntegerField(default=60)
    # After a verdict, claim and open the next item at once (off: the page stays, "next" is one key away).
    auto_advance = models.BooleanField(default=False)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-priority", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="queue_unique_name"),
            models.CheckConstraint(condition=Q(overlap__gte=1), name="queue_overlap_positive"),
            models.CheckConstraint(condition=Q(lease_seconds__gte=30), name="queue_lease_minimum"),
            models.CheckConstraint(condition=Q(heartbeat_seconds__gte=10), name="queue_heartbeat_minimum"),
        ]

    def __str__(self) -> str:
        return self.name


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", _("Active")
    COMPLETED = "completed", _("Completed")
    RELEASED = "released", _("Released")
    EXPIRED = "expired", _("Expired")


class Assignment(ItemRef):
    """One person holding one item at one stage, as a lease that expires unless renewed."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    queue = models.ForeignKey(ReviewQueue, null=True, blank=True, on_delete=models.SET_NULL, related_name="assignments")
    stage = models.CharField(max_length=20, choices=ItemStatus.choices)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=20, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE)
    leased_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-leased_at"]
        constraints = [
            models.CheckConstraint(condition=ONE_ITEM, name="assignment_exactly_one_item"),
            models.CheckConstraint(
                condition=Q(lease_expires_at__gt=models.F("leased_at")), name="assignment_lease_after_start"
            ),
            # A person holds an item at a stage at most once at a time.
            models.UniqueConstraint(
                fields=["item_kind", "qa_chain", "chain_pair", "mcq", "stage", "assignee"],
                condition=Q(status="active"),
                name="assignment_one_active_per_person",
                nulls_distinct=False,
            ),
        ]
        indexes = [
            models.Index(fields=["assignee", "status"]),
            models.Index(fields=["status", "lease_expires_at"]),
            models.Index(fields=["queue", "status"]),
        ]

    def __str__(self) -> str:
        return f"{self.item_kind} → {self.assignee_id} at {self.stage} ({self.status})"


class ExamVerdict(ItemRef):
    """One examiner's pass or flag on one round of an item.

    With a queue's overlap above 1 several examiners judge the same round; the item moves on once
    as many verdicts as the overlap asks for are in (any flag → flagged, else accepted), and their
    agreement is measured from these rows.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="verdicts")
    examiner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    queue = models.ForeignKey(ReviewQueue, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The item's latest submit: verdicts of one round share it, so a revised item is judged afresh.
    round_started_at = models.DateTimeField()
    item_version = models.PositiveIntegerField()
    passed = models.BooleanField()
    # Checklist codes the examiner found failing (the flag's reasons), and the whole checklist as ticked.
    reasons = models.JSONField(default=list, blank=True)
    checklist = models.JSONField(default=dict, blank=True)
    comment = models.TextField(blank=True)
    # Seconds from the lease (or page open) to the verdict, for "time per item".
    seconds_spent = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=ONE_ITEM, name="verdict_exactly_one_item"),
            models.UniqueConstraint(
                fields=["item_kind", "qa_chain", "chain_pair", "mcq", "round_started_at", "examiner"],
                name="verdict_one_per_examiner_and_round",
                nulls_distinct=False,
            ),
        ]
        indexes = [
            models.Index(fields=["project", "created_at"]),
            models.Index(fields=["queue", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.item_kind} {'pass' if self.passed else 'flag'} by {self.examiner_id}"


class DashboardRange(models.TextChoices):
    """The dashboards' preset ranges: the last N calendar days, today included."""

    LAST_7 = "7d", _("7 days")
    LAST_30 = "30d", _("30 days")
    LAST_90 = "90d", _("90 days")

    @property
    def days(self) -> int:
        return int(self.value.removesuffix("d"))


class DashboardSnapshot(models.Model):
    """The admins' dashboards of one project and preset range, computed once and shown many times.

    Every panel at benchmark scale costs about a second to compute and draw; people open the page
    far more often than the numbers change. So the page shows this row (its age stated plainly),
    and `reviewer.dashboard_snapshots` recomputes it on request, on a first view, and every minute
    while people look at the dashboards and review work goes on (`activity` is what it saw then).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="dashboard_snapshots")
    range_key = models.CharField(max_length=8, choices=DashboardRange.choices)
    period_start = models.DateField()
    period_end = models.DateField()
    computed_at = models.DateTimeField()
    seconds_taken = models.FloatField(help_text="Wall time of the computation: queries and drawing")
    # panel → {"columns": [...], "rows": [[...]]}: the numbers exactly as the panel's CSV holds them.
    data = models.JSONField(default=dict)
    # The nine panels as HTML (charts drawn): the expensive part of the page, served as it is.
    html = models.TextField()
    # The project's review activity when the computation started (reviewer.dashboard_snapshots.activity).
    activity = models.JSONField(default=dict)
    # Last time someone opened the page on this snapshot (updated at most every few minutes).
    viewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "range_key"], name="dashboard_snapshot_one_per_range"),
        ]
        indexes = [models.Index(fields=["viewed_at"])]

    def __str__(self) -> str:
        return f"{self.project_id} {self.range_key} at {self.computed_at:%Y-%m-%d %H:%M:%S}"
