from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from llm.models import LLMCall
from projects.models import Project
from videos.models import Clip, Video


class ItemStatus(models.TextChoices):
    """One life cycle for every reviewable item (QA chain, the relations of a chain pair, MCQ)."""

    DRAFT = "draft", _("Machine draft")
    ANNOTATING = "annotating", _("Annotating")
    SUBMITTED = "submitted", _("Submitted")
    SCORED = "scored", _("Scored")
    EXAMINING = "examining", _("Examining")
    FLAGGED = "flagged", _("Flagged")
    REVISING = "revising", _("Revising")
    ACCEPTED = "accepted", _("Accepted")


# The statuses a review queue of each stage looks at (reviewer.queues.stage_q narrows them further).
STAGE_STATUSES = {
    "annotating": [ItemStatus.DRAFT, ItemStatus.ANNOTATING],
    "examining": [ItemStatus.SUBMITTED, ItemStatus.SCORED, ItemStatus.EXAMINING],
    "revising": [ItemStatus.FLAGGED, ItemStatus.REVISING],
}


def queue_order_indexes(prefix: str) -> list[models.Index]:
    """Per stage, the items of a project in a queue's order (latest submit, else creation; then id).

    Claim-next walks the one of its queue's stage from the oldest and stops at the first item it
    may take, instead of sorting every item of the stage on each claim, and never steps over items
    of other stages.
    """
    return [
        models.Index(
            models.F("project"),
            Coalesce("submitted_at", "created_at"),
            models.F("id"),
            condition=Q(status__in=[s.value for s in statuses]),
            name=f"{prefix}_order_{stage[:5]}",
        )
        for stage, statuses in STAGE_STATUSES.items()
    ]


class Origin(models.TextChoices):
    MACHINE = "machine", _("Machine")
    HUMAN = "human", _("Human")
    # Loaded from an existing benchmark file (releases.imports); the file and record are kept beside it.
    IMPORTED = "imported", _("Imported")


class ReviewableItem(models.Model):
    """Fields every reviewable item shares: its place in the workflow and its edit version."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=20, choices=ItemStatus.choices, default=ItemStatus.DRAFT)
    # Optimistic concurrency: every save of content bumps it; a save naming an older one conflicts.
    version = models.PositiveIntegerField(default=1)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.MACHINE)
    # Set on the first human edit; machine re-runs never touch such an item.
    human_edited = models.BooleanField(default=False)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # What the machine first proposed, kept for the examiner's diff against the draft.
    machine_draft = models.JSONField(null=True, blank=True)
    draft_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class QAChain(ReviewableItem):
    """SVBench: 5–6 consecutive open-ended QA turns over one clip."""

    clip = models.OneToOneField(Clip, on_delete=models.CASCADE, related_name="chain")
    history = HistoricalRecords()

    class Meta:
        ordering = ["clip__video_id", "clip__index"]
        indexes = [models.Index(fields=["project", "status"]), *queue_order_indexes("qachain")]

    def __str__(self) -> str:
        return f"Chain of {self.clip}"


class QAPair(models.Model):
    chain = models.ForeignKey(QAChain, on_delete=models.CASCADE, related_name="pairs")
    index = models.PositiveSmallIntegerField()
    question = models.TextField()
    answer = models.TextField()
    skill = models.CharField(max_length=10, blank=True, help_text="SVBench skill code")
    # A second language, so one release can hold both (SVBench/LiViBench: Chinese and English).
    question_translation = models.TextField(blank=True)
    answer_translation = models.TextField(blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["chain", "index"]
        constraints = [
            # Deferred so a reorder can swap indexes inside one transaction (PostgreSQL).
            models.UniqueConstraint(
                fields=["chain", "index"], name="qapair_unique_order", deferrable=models.Deferrable.DEFERRED
            ),
        ]

    def __str__(self) -> str:
        return f"Q{self.index}: {self.question[:50]}"


class ChainPair(ReviewableItem):
    """Two adjacent chains of one video (clip i and i+1); its relations are reviewed together."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="chain_pairs")
    before_index = models.PositiveIntegerField(help_text="Clip index of the earlier chain")
    chain_before = models.OneToOneField(QAChain, on_delete=models.CASCADE, related_name="pair_as_before")
    chain_after = models.OneToOneField(QAChain, on_delete=models.CASCADE, related_name="pair_as_after")
    history = HistoricalRecords()

    class Meta:
        ordering = ["video", "before_index"]
        constraints = [
            models.UniqueConstraint(fields=["video", "before_index"], name="chainpair_unique_position"),
            models.CheckConstraint(
                condition=~Q(chain_before=models.F("chain_after")), name="chainpair_distinct_chains"
            ),
            # That both chains belong to this video at clips before_index and before_index + 1 is
            # enforced by a trigger (see migrations).
        ]
        indexes = [models.Index(fields=["project", "status"]), *queue_order_indexes("chainpair")]

    def __str__(self) -> str:
        return f"{self.video.name} chains {self.before_index}→{self.before_index + 1}"


class RelationDecision(models.TextChoices):
    CANDIDATE = "candidate", _("Candidate")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")


class Relation(models.Model):
    """A temporal linkage from a QA pair of chain i to one of chain i+1, and the rewrite it asks for."""

    chain_pair = models.ForeignKey(ChainPair, on_delete=models.CASCADE, related_name="relations")
    from_pair = models.ForeignKey(QAPair, on_delete=models.CASCADE, related_name="relations_out")
    to_pair = models.ForeignKey(QAPair, on_delete=models.CASCADE, related_name="relations_in")
    relation_type = models.CharField(max_length=20, help_text="Code from the project's relation types")
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.MACHINE)
    decision = models.CharField(max_length=20, choices=RelationDecision.choices, default=RelationDecision.CANDIDATE)
    rationale = models.TextField(blank=True)
    # The later QA as it was before the rewrite, and the rewrite that makes it need the earlier clip.
    original_question = models.TextField(blank=True)
    original_answer = models.TextField(blank=True)
    rewritten_question = models.TextField(blank=True)
    rewritten_answer = models.TextField(blank=True)
    draft_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["chain_pair", "from_pair__index", "to_pair__index"]
        constraints = [
            models.UniqueConstraint(fields=["chain_pair", "from_pair", "to_pair"], name="relation_unique_link"),
            # from_pair in chain_before and to_pair in chain_after: trigger (see migrations).
        ]

    def __str__(self) -> str:
        return f"{self.relation_type}: {self.from_pair_id}→{self.to_pair_id}"


class MCQ(ReviewableItem):
    """A multiple-choice question (LongVideoBench, LiViBench, MVPBench), over one or several videos."""

    question = models.TextField(help_text="With the referring query")
    referring_query = models.TextField(blank=True)
    # The referring query as a character span of `question`.
    referring_start = models.PositiveIntegerField(null=True, blank=True)
    referring_end = models.PositiveIntegerField(null=True, blank=True)
    question_wo_referring_query = models.TextField(blank=True)
    options = models.JSONField(default=list, blank=True, help_text="4–5 option texts in order")
    # One integer, so there is never more or less than one correct option once it is set.
    correct_index = models.PositiveSmallIntegerField(null=True, blank=True)
    category = models.CharField(max_length=60, blank=True, help_text="LongVideoBench code or project task name")
    level = models.CharField(max_length=20, blank=True)
    task_group = models.CharField(max_length=60, blank=True)
    question_translation = models.TextField(blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(correct_index__isnull=True) | Q(correct_index__lte=4), name="mcq_correct_index_range"
            ),
            models.CheckConstraint(
                condition=(Q(referring_start__isnull=True) & Q(referring_end__isnull=True))
                | Q(referring_start__lt=models.F("referring_end")),
                name="mcq_referring_span",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "status"]),
            models.Index(fields=["project", "category"]),
            *queue_order_indexes("mcq"),
        ]

    def __str__(self) -> str:
        return f"MCQ {self.pk}: {self.question[:50]}"


class VideoRole(models.TextChoices):
    MAIN = "main", _("Main")
    REFERENCE = "reference", _("Reference")
    CANDIDATE = "candidate", _("Candidate")


class MCQVideo(models.Model):
    mcq = models.ForeignKey(MCQ, on_delete=models.CASCADE, related_name="mcq_videos")
    video = models.ForeignKey(Video, on_delete=models.PROTECT, related_name="mcq_links")
    role = models.CharField(max_length=20, choices=VideoRole.choices, default=VideoRole.MAIN)
    order = models.PositiveSmallIntegerField(default=0)
    history = HistoricalRecords()

    class Meta:
        ordering = ["mcq", "order"]
        constraints = [
            models.UniqueConstraint(fields=["mcq", "order"], name="mcqvideo_unique_order"),
            models.UniqueConstraint(fields=["mcq", "video"], name="mcqvideo_unique_video"),
        ]

    def __str__(self) -> str:
        return f"MCQ {self.mcq_id} · {self.role} #{self.order}: video {self.video_id}"


class ReferredMoment(models.Model):
    """A moment the question points at, stamped from the player (time and frame index)."""

    mcq = models.ForeignKey(MCQ, on_delete=models.CASCADE, related_name="moments")
    video = models.ForeignKey(Video, on_delete=models.PROTECT, related_name="+")
    time_s = models.FloatField()
    frame_index = models.PositiveIntegerField()
    order = models.PositiveSmallIntegerField(default=0)
    note = models.CharField(max_length=200, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["mcq", "order", "time_s"]
        constraints = [models.CheckConstraint(condition=Q(time_s__gte=0), name="moment_time_nonnegative")]

    def __str__(self) -> str:
        return f"MCQ {self.mcq_id} @ {self.time_s:.3f} s (frame {self.frame_index})"


class SeedStatus(models.TextChoices):
    PROPOSED = "proposed", _("Proposed")
    KEPT = "kept", _("Kept")
    REJECTED = "rejected", _("Rejected")


class SeedQuestion(models.Model):
    """LiViBench: a curated example question per task that drafts are built from."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="seed_questions")
    task = models.CharField(max_length=60)
    text = models.TextField()
    status = models.CharField(max_length=20, choices=SeedStatus.choices, default=SeedStatus.PROPOSED)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.MACHINE)
    draft_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["project", "task", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "task", "text"], name="seed_unique_text")]

    def __str__(self) -> str:
        return f"[{self.task}] {self.text[:60]}"


class VideoDescription(models.Model):
    """LiViBench multi-agent description: one per video, agent role and model."""

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="descriptions")
    agent_role = models.CharField(max_length=40)
    model = models.CharField(max_length=120)
    text = models.TextField()
    draft_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["video", "agent_role"]
        constraints = [
            models.UniqueConstraint(fields=["video", "agent_role", "model"], name="description_unique_agent"),
        ]

    def __str__(self) -> str:
        return f"{self.video_id} · {self.agent_role} · {self.model}"


# --- references to items and their life cycle -------------------------------------------------


class ItemKind(models.TextChoices):
    QA_CHAIN = "qa_chain", _("QA chain")
    CHAIN_PAIR = "chain_pair", _("Relations of a chain pair")
    MCQ = "mcq", _("MCQ")


ONE_ITEM = (
    Q(item_kind=ItemKind.QA_CHAIN, qa_chain__isnull=False, chain_pair__isnull=True, mcq__isnull=True)
    | Q(item_kind=ItemKind.CHAIN_PAIR, qa_chain__isnull=True, chain_pair__isnull=False, mcq__isnull=True)
    | Q(item_kind=ItemKind.MCQ, qa_chain__isnull=True, chain_pair__isnull=True, mcq__isnull=False)
)


class ItemRef(models.Model):
    """Points at exactly one reviewable item, with real foreign keys (no generic relations)."""

    item_kind = models.CharField(max_length=20, choices=ItemKind.choices)
    qa_chain = models.ForeignKey(QAChain, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    chain_pair = models.ForeignKey(ChainPair, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    mcq = models.ForeignKey(MCQ, null=True, blank=True, on_delete=models.CASCADE, related_name="+")

    class Meta:
        abstract = True

    @property
    def item(self):
        return self.qa_chain or self.chain_pair or self.mcq

    @staticmethod
    def ref_for(item) -> dict:
        kind = {QAChain: ItemKind.QA_CHAIN, ChainPair: ItemKind.CHAIN_PAIR, MCQ: ItemKind.MCQ}[type(item)]
        return {"item_kind": kind, kind.value: item}


class ReviewEvent(ItemRef):
    """Append-only log of every workflow transition; rows are never changed or deleted."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="review_events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    from_status = models.CharField(max_length=20, choices=ItemStatus.choices, blank=True)
    to_status = models.CharField(max_length=20, choices=ItemStatus.choices)
    reasons = models.JSONField(default=list, blank=True)
    comment = models.TextField(blank=True)
    item_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table the review app created before the log moved here with the items (its
        # append-only trigger is on this table).
        db_table = "reviewer_reviewevent"
        ordering = ["created_at", "id"]
        constraints = [models.CheckConstraint(condition=ONE_ITEM, name="event_exactly_one_item")]
        indexes = [
            models.Index(fields=["project", "created_at"]),
            models.Index(fields=["actor", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.item_kind} {self.from_status or '∅'} → {self.to_status}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValidationError(_("Review events are append-only."))
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError(_("Review events are append-only."))
