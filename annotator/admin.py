from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from .models import (
    MCQ,
    ChainPair,
    MCQVideo,
    QAChain,
    QAPair,
    ReferredMoment,
    Relation,
    ReviewEvent,
    SeedQuestion,
    VideoDescription,
)

ITEM_FILTERS = ["status", "origin", "human_edited", "project"]


class QAPairInline(admin.TabularInline):
    model = QAPair
    extra = 0


@admin.register(QAChain)
class QAChainAdmin(SimpleHistoryAdmin):
    list_display = ["id", "clip", "status", "version", "origin", "author", "updated_at"]
    list_filter = ITEM_FILTERS
    search_fields = ["clip__video__name", "pairs__question"]
    raw_id_fields = ["clip", "draft_call", "author"]
    inlines = [QAPairInline]
    list_select_related = ["clip__video", "author"]


@admin.register(QAPair)
class QAPairAdmin(SimpleHistoryAdmin):
    list_display = ["id", "chain", "index", "skill", "question"]
    list_filter = ["skill", "chain__project"]
    search_fields = ["question", "answer"]
    raw_id_fields = ["chain"]


class RelationInline(admin.TabularInline):
    model = Relation
    extra = 0
    raw_id_fields = ["from_pair", "to_pair", "draft_call"]


@admin.register(ChainPair)
class ChainPairAdmin(SimpleHistoryAdmin):
    list_display = ["id", "video", "before_index", "status", "version", "author"]
    list_filter = ITEM_FILTERS
    search_fields = ["video__name"]
    raw_id_fields = ["video", "chain_before", "chain_after", "draft_call", "author"]
    inlines = [RelationInline]


@admin.register(Relation)
class RelationAdmin(SimpleHistoryAdmin):
    list_display = ["id", "chain_pair", "relation_type", "origin", "decision"]
    list_filter = ["relation_type", "origin", "decision"]
    search_fields = ["rewritten_question", "original_question", "rationale"]
    raw_id_fields = ["chain_pair", "from_pair", "to_pair", "draft_call"]


class MCQVideoInline(admin.TabularInline):
    model = MCQVideo
    extra = 0
    raw_id_fields = ["video"]


class ReferredMomentInline(admin.TabularInline):
    model = ReferredMoment
    extra = 0
    raw_id_fields = ["video"]


@admin.register(MCQ)
class MCQAdmin(SimpleHistoryAdmin):
    list_display = ["id", "question", "category", "level", "status", "version", "author"]
    list_filter = [*ITEM_FILTERS, "category", "level"]
    search_fields = ["question", "referring_query"]
    raw_id_fields = ["draft_call", "author"]
    inlines = [MCQVideoInline, ReferredMomentInline]


@admin.register(SeedQuestion)
class SeedQuestionAdmin(SimpleHistoryAdmin):
    list_display = ["id", "project", "task", "status", "origin", "text"]
    list_filter = ["project", "task", "status", "origin"]
    search_fields = ["text", "task"]
    raw_id_fields = ["draft_call", "created_by"]


@admin.register(VideoDescription)
class VideoDescriptionAdmin(admin.ModelAdmin):
    list_display = ["video", "agent_role", "model", "created_at"]
    list_filter = ["agent_role", "model"]
    search_fields = ["video__name", "text"]
    raw_id_fields = ["video", "draft_call"]


@admin.register(ReviewEvent)
class ReviewEventAdmin(admin.ModelAdmin):
    """Read-only: the log is append-only."""

    list_display = ["id", "item_kind", "from_status", "to_status", "actor", "created_at"]
    list_filter = ["item_kind", "to_status", "project"]
    search_fields = ["comment", "actor__username"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
