from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError

from .models import BenchmarkImport, DatasetRelease, ImportedRecord, ReleaseStatus
from .services import release_delete


@admin.register(DatasetRelease)
class DatasetReleaseAdmin(admin.ModelAdmin):
    """Releases are immutable: the admin site shows them and deletes through the service (files removed,
    the record kept with who and when, logged); new releases are cut on the release pages, the API or
    `manage.py release create`, which check their inputs."""

    list_display = ["version", "project", "status", "created_by", "created_at", "finished_at", "deleted_by"]
    list_filter = ["status", "project"]
    list_select_related = ["project", "created_by", "deleted_by"]
    search_fields = ["version", "project__slug"]
    actions = ["delete_releases"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        # Deleting the row would lose who deleted it and leave its files behind: use the action.
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.action(description="Delete the selected releases' files (the records stay)")
    def delete_releases(self, request, queryset):
        deleted = 0
        for release in queryset.select_related("project").exclude(status=ReleaseStatus.DELETED):
            try:
                release_delete(release=release, by=request.user)
            except (PermissionDenied, ValidationError) as exc:
                text = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
                self.message_user(request, f"{release}: {text}", messages.ERROR)
            else:
                deleted += 1
        if deleted:
            self.message_user(
                request, f"Deleted {deleted} release{'s' if deleted != 1 else ''}; their files are removed."
            )


@admin.register(BenchmarkImport)
class BenchmarkImportAdmin(admin.ModelAdmin):
    """Imports are records of what came in: read here, made by the import page, the API or the command."""

    list_display = ["id", "project", "format", "item_status", "source", "created_by", "created_at"]
    list_filter = ["format", "project"]
    list_select_related = ["project", "created_by"]
    search_fields = ["source", "project__slug"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(ImportedRecord)
class ImportedRecordAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark_import", "item_kind", "file", "record_index", "record_id"]
    list_filter = ["item_kind"]
    search_fields = ["file", "record_id"]
    raw_id_fields = ["benchmark_import", "qa_chain", "chain_pair", "mcq"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False
