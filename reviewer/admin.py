from django.contrib import admin

from .models import Assignment, ExamVerdict, QualityScore, ReviewQueue

ITEM_RAW = ["qa_chain", "chain_pair", "mcq"]


@admin.register(QualityScore)
class QualityScoreAdmin(admin.ModelAdmin):
    list_display = ["id", "item_kind", "overall", "threshold", "passed", "item_version", "created_at"]
    list_filter = ["item_kind", "passed", "project"]
    search_fields = ["comments"]
    raw_id_fields = [*ITEM_RAW, "llm_call"]


@admin.register(ReviewQueue)
class ReviewQueueAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "stage", "item_kind", "priority", "overlap", "is_active"]
    list_filter = ["project", "stage", "item_kind", "is_active"]
    search_fields = ["name"]
    filter_horizontal = ["members"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["id", "item_kind", "stage", "assignee", "status", "leased_at", "lease_expires_at"]
    list_filter = ["status", "stage", "item_kind", "project", "queue"]
    search_fields = ["assignee__username"]
    raw_id_fields = [*ITEM_RAW, "assignee", "assigned_by", "queue"]


@admin.register(ExamVerdict)
class ExamVerdictAdmin(admin.ModelAdmin):
    list_display = ["id", "item_kind", "examiner", "passed", "item_version", "round_started_at", "created_at"]
    list_filter = ["passed", "item_kind", "project", "queue"]
    search_fields = ["comment", "examiner__username"]
    raw_id_fields = [*ITEM_RAW, "examiner", "assignment", "queue"]
