from django.contrib import admin

from .models import Clip, Comment, CurationDecision, ExternalScore, SubtitleCue, Video


class CurationDecisionInline(admin.TabularInline):
    model = CurationDecision
    extra = 0
    readonly_fields = ["rule", "passed", "value", "reason", "decided_at"]


@admin.register(Video)
class VideoAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "status", "curation_status", "duration_s", "width", "height", "fps", "split"]
    list_filter = ["project", "status", "curation_status", "split", "has_audio", "video_codec", "topic_category"]
    search_fields = ["name", "original_filename", "sha256", "source_url"]
    readonly_fields = ["sha256", "size_bytes", "probe", "created_at", "updated_at"]
    inlines = [CurationDecisionInline]
    list_select_related = ["project"]


@admin.register(Clip)
class ClipAdmin(admin.ModelAdmin):
    list_display = ["video", "index", "start_s", "end_s"]
    list_filter = ["video__project"]
    search_fields = ["video__name"]
    list_select_related = ["video"]
    raw_id_fields = ["video"]


@admin.register(SubtitleCue)
class SubtitleCueAdmin(admin.ModelAdmin):
    list_display = ["video", "start_s", "end_s", "text", "source", "language"]
    list_filter = ["source", "language", "video__project"]
    search_fields = ["text", "video__name"]
    raw_id_fields = ["video"]
    list_select_related = ["video"]


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    list_display = ["video", "time_s", "user", "text"]
    list_filter = ["video__project"]
    search_fields = ["text", "user"]
    raw_id_fields = ["video"]
    list_select_related = ["video"]
    show_full_result_count = False  # millions of rows: skip the extra COUNT(*)


@admin.register(CurationDecision)
class CurationDecisionAdmin(admin.ModelAdmin):
    list_display = ["video", "rule", "passed", "value", "reason", "overridden_by"]
    list_filter = ["rule", "passed", "video__project"]
    search_fields = ["video__name", "reason"]
    raw_id_fields = ["video"]


@admin.register(ExternalScore)
class ExternalScoreAdmin(admin.ModelAdmin):
    list_display = ["video", "name", "value", "source"]
    list_filter = ["name", "video__project"]
    search_fields = ["video__name", "name"]
    raw_id_fields = ["video"]
