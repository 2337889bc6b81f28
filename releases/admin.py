from django.contrib import admin

from .models import DatasetRelease, EvaluationRun


@admin.register(DatasetRelease)
class DatasetReleaseAdmin(admin.ModelAdmin):
    list_display = ["version", "project", "status", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "project"]
    search_fields = ["version"]
    readonly_fields = ["files", "manifest", "statistics", "validation_errors", "created_at", "finished_at"]


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "release", "model", "status", "created_at"]
    list_filter = ["status", "model"]
    search_fields = ["model"]
