from django.contrib import admin

from .models import BackgroundJob


@admin.register(BackgroundJob)
class BackgroundJobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "project", "status", "progress_done", "progress_total", "created_at", "finished_at"]
    list_filter = ["status", "kind", "project"]
    search_fields = ["kind", "message", "error", "celery_task_id"]
    readonly_fields = ["created_at", "started_at", "heartbeat_at", "finished_at", "celery_task_id"]
