from django.contrib import admin

from .models import EvaluationRun, Prediction


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "release", "model", "protocol", "status", "created_at"]
    list_filter = ["status", "protocol", "model"]
    search_fields = ["model", "name"]
    exclude = ["api_key"]  # stored server-side, never shown back
    readonly_fields = ["job", "summary"]


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "index", "record_id", "outcome", "score"]
    list_filter = ["outcome"]
    raw_id_fields = ["run", "mcq", "call", "extract_call"]
