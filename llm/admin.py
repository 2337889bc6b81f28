from django.contrib import admin

from .models import LLMCall, PromptTemplate


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ["key", "version", "project", "is_active", "created_at"]
    list_filter = ["key", "is_active", "project"]
    search_fields = ["key", "body", "system"]


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "step",
        "model",
        "outcome",
        "attempts",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "latency_ms",
        "created_at",
    ]
    list_filter = ["outcome", "step", "model", "project"]
    search_fields = ["step", "model", "error", "raw_response"]
    readonly_fields = [f.name for f in LLMCall._meta.fields]
