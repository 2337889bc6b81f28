"""Projects: only the caller's, the same 404 for "missing" and "not yours"; create, settings, archive."""

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from llm.prompts import prompt_templates_copy
from projects.models import Project
from projects.permissions import Action, get_project_or_404, may_create_project, roles_of
from projects.presets import JUDGE_KINDS, JUDGE_KINDS_KEY, PRESETS
from projects.selectors import project_list_for
from projects.services import ProjectRefused, project_archive, project_create, project_unarchive, project_update
from projects.taxonomies import EDITABLE_TAXONOMIES, taxonomy_errors
from videos.curation import RULES

from .mixins import ApiAuthMixin


class ProjectLinksSerializer(serializers.Serializer):
    self = serializers.URLField()
    videos = serializers.URLField()


def _project_links(project: Project, request) -> dict:
    return {
        "self": reverse("api:project-detail", kwargs={"slug": project.slug}, request=request),
        "videos": reverse("api:video-list", kwargs={"slug": project.slug}, request=request),
    }


class ProjectListApi(ApiAuthMixin, generics.ListAPIView):
    """Projects the caller belongs to (every project for a superuser), by name."""

    class OutputSerializer(serializers.ModelSerializer):
        roles = serializers.SerializerMethodField(help_text="The caller's roles in the project.")
        video_count = serializers.IntegerField()
        links = serializers.SerializerMethodField()

        class Meta:
            model = Project
            fields = [
                "slug",
                "name",
                "kind",
                "description",
                "primary_language",
                "roles",
                "video_count",
                "archived_at",
                "created_at",
                "links",
            ]
            ref_name = "ProjectListItem"

        def get_roles(self, project) -> list[str]:
            return [m.role for m in project.viewer_memberships]

        @extend_schema_field(ProjectLinksSerializer)
        def get_links(self, project):
            return _project_links(project, self.context["request"])

    serializer_class = OutputSerializer

    def get_queryset(self):
        return project_list_for(user=self.request.user)

    @extend_schema(operation_id="projects_list", tags=["projects"])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class ProjectDetailApi(ApiAuthMixin, generics.RetrieveAPIView):
    """One project with its pipeline settings."""

    class OutputSerializer(serializers.ModelSerializer):
        roles = serializers.SerializerMethodField(help_text="The caller's roles in the project.")
        video_count = serializers.SerializerMethodField()
        links = serializers.SerializerMethodField()

        class Meta:
            model = Project
            fields = [
                "slug",
                "name",
                "kind",
                "description",
                "primary_language",
                "roles",
                "video_count",
                # Curation.
                "min_duration_s",
                "min_scenes",
                "max_scenes",
                "min_mean_scene_s",
                "max_mean_scene_s",
                "min_height_px",
                "min_complexity",
                # Scenes and clips.
                "scene_threshold",
                "scene_min_s",
                "clip_pad_s",
                # Drafts and quality gate.
                "frames_per_clip",
                "frame_max_side_px",
                "chain_min_turns",
                "chain_max_turns",
                "judge_enabled",
                "judge_threshold",
                "path_jump_probability",
                "archived_at",
                "created_at",
                "updated_at",
                "links",
            ]
            ref_name = "ProjectDetail"

        def get_roles(self, project) -> list[str]:
            return sorted(roles_of(self.context["request"].user, project))

        def get_video_count(self, project) -> int:
            return project.videos.count()

        @extend_schema_field(ProjectLinksSerializer)
        def get_links(self, project):
            return _project_links(project, self.context["request"])

    serializer_class = OutputSerializer

    def get_object(self):
        return get_project_or_404(self.request.user, self.kwargs["slug"])

    @extend_schema(
        operation_id="projects_retrieve",
        tags=["projects"],
        parameters=[
            OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The project's slug.")
        ],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


# --- create, settings, archive ---------------------------------------------------------------------


_SETTINGS_FIELDS = [
    "slug",
    "name",
    "kind",
    "description",
    "primary_language",
    "taxonomies",
    "curation_rules",
    "min_duration_s",
    "min_scenes",
    "max_scenes",
    "min_mean_scene_s",
    "max_mean_scene_s",
    "min_height_px",
    "min_complexity",
    "external_score_thresholds",
    "scene_threshold",
    "scene_min_s",
    "clip_pad_s",
    "frames_per_clip",
    "frame_max_side_px",
    "chain_min_turns",
    "chain_max_turns",
    "models_per_step",
    "judge_enabled",
    "judge_threshold",
    "judge_fallback",
    "judge_kinds",
    "path_jump_probability",
    "audit_gate",
    "audit_gate_margin",
    "probe_shuffles",
    "probe_frames",
    "probe_models",
    "archived_at",
    "updated_at",
    "links",
]


# The settings stored as JSON, typed: an object or a list, never null (the validators below refuse null).
@extend_schema_field({"type": "object", "additionalProperties": {}})
class _JsonObjectField(serializers.JSONField):
    pass


@extend_schema_field({"type": "array", "items": {"type": "string", "enum": sorted(RULES)}})
class _CurationRulesField(serializers.JSONField):
    pass


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "properties": {"min": {"type": "number"}, "max": {"type": "number"}},
            "additionalProperties": False,
        },
    }
)
class _ScoreThresholdsField(serializers.JSONField):
    pass


class ProjectSettingsSerializer(serializers.ModelSerializer):
    """Every setting of a project: what an admin reads and changes (PATCH sends only what changes)."""

    judge_kinds = serializers.MultipleChoiceField(
        choices=[k for k, _label in JUDGE_KINDS],
        required=False,
        help_text="Item kinds the quality gate judges when it is on (kept in models_per_step.judge_kinds).",
    )
    taxonomies = _JsonObjectField(
        required=False,
        help_text="Taxonomy key → rows. Editable taxonomies need a unique, non-empty code and a non-empty label per "
        "row: " + ", ".join(f"{k} ({c}, {label})" for k, (c, label) in EDITABLE_TAXONOMIES.items()),
    )
    curation_rules = _CurationRulesField(required=False)
    external_score_thresholds = _ScoreThresholdsField(
        required=False, help_text='Score name → bounds, e.g. {"aesthetic": {"min": 4.5}}.'
    )
    models_per_step = _JsonObjectField(required=False, help_text="Step → model name.")
    probe_models = serializers.ListField(
        child=serializers.CharField(max_length=120),
        required=False,
        help_text="Models the shortcut probes ask; [] uses the model endpoint's probes model.",
    )
    links = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = _SETTINGS_FIELDS
        read_only_fields = ["slug", "kind", "archived_at", "updated_at"]
        ref_name = "ProjectSettings"

    def to_representation(self, project):
        data = super().to_representation(project)
        raw = (project.models_per_step or {}).get(JUDGE_KINDS_KEY)
        data["judge_kinds"] = raw if isinstance(raw, list) else ["qa_chain"]
        return data

    @extend_schema_field(ProjectLinksSerializer)
    def get_links(self, project):
        return _project_links(project, self.context["request"])

    def validate_taxonomies(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("An object of taxonomy key → rows.")
        errors = {key: taxonomy_errors(key, rows) for key, rows in value.items() if key in EDITABLE_TAXONOMIES}
        errors = {key: msgs for key, msgs in errors.items() if msgs}
        if errors:
            raise serializers.ValidationError([f"{key}: {m}" for key, msgs in errors.items() for m in msgs])
        return value

    def validate_curation_rules(self, value):
        if not isinstance(value, list) or any(not isinstance(r, str) or r not in RULES for r in value):
            raise serializers.ValidationError(f"A list of rule codes from: {', '.join(RULES)}.")
        return value

    def validate_models_per_step(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("An object of step → model name.")
        return value

    def validate_external_score_thresholds(self, value):
        ok = isinstance(value, dict) and all(
            isinstance(b, dict) and set(b) <= {"min", "max"} and all(isinstance(x, int | float) for x in b.values())
            for b in value.values()
        )
        if not ok:
            raise serializers.ValidationError('An object of score name → {"min": number, "max": number}.')
        return value


def _settings_response(project, request, status_code=200) -> Response:
    return Response(ProjectSettingsSerializer(project, context={"request": request}).data, status=status_code)


def _save_fields(validated: dict, project: Project) -> dict:
    """Serializer values as Project fields: judge kinds go into models_per_step."""
    fields = dict(validated)
    if "judge_kinds" in fields:
        kinds = sorted(fields.pop("judge_kinds"))
        base = fields.get("models_per_step", project.models_per_step) or {}
        fields["models_per_step"] = {**base, JUDGE_KINDS_KEY: kinds}
    return fields


def _as_api_validation(exc: ValidationError) -> exceptions.ValidationError:
    if hasattr(exc, "error_dict"):
        details = exc.message_dict
        if NON_FIELD_ERRORS in details:
            details["non_field_errors"] = details.pop(NON_FIELD_ERRORS)
        return exceptions.ValidationError(details)
    return exceptions.ValidationError({"non_field_errors": exc.messages})


class ProjectCreateApi(ApiAuthMixin, APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        slug = serializers.SlugField(
            max_length=80, required=False, default="", help_text="Left empty, it is made from the name."
        )
        preset = serializers.ChoiceField(
            choices=list(PRESETS), default="custom", help_text="The kind of benchmark whose settings fill the project."
        )
        copy_from = serializers.SlugField(
            required=False,
            default="",
            help_text="Slug of a project you administer whose settings are copied instead of the preset's.",
        )
        description = serializers.CharField(required=False, allow_blank=True, default="")
        primary_language = serializers.CharField(max_length=10, required=False, default="en")

        class Meta:
            ref_name = "ProjectCreate"

    @extend_schema(
        operation_id="projects_create",
        tags=["projects"],
        request=InputSerializer,
        responses={201: ProjectSettingsSerializer},
    )
    def post(self, request):
        """Create a project from a preset (site administrators and holders of `projects.add_project`).

        The caller becomes the project's admin.
        """
        if not may_create_project(request.user):  # who asks comes before what was sent
            raise ProjectRefused("Only site administrators and people allowed to create projects can do this.")
        data = ProjectCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        copy_slug = values.pop("copy_from")
        copy_from = get_project_or_404(request.user, copy_slug, Action.ADMINISTER) if copy_slug else None
        try:
            with transaction.atomic():
                project = project_create(user=request.user, copy_from=copy_from, **values)
                if copy_from is not None:
                    prompt_templates_copy(source=copy_from, target=project, user=request.user)
        except ValidationError as exc:
            raise _as_api_validation(exc) from exc
        return _settings_response(project, request, status.HTTP_201_CREATED)


SLUG = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The project's slug.")


class ProjectSettingsApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="projects_settings_retrieve",
        tags=["projects"],
        parameters=[SLUG],
        responses={200: ProjectSettingsSerializer},
    )
    def get(self, request, slug):
        """Every setting of the project, taxonomies included (the project's admins)."""
        return _settings_response(get_project_or_404(request.user, slug, Action.ADMINISTER), request)

    @extend_schema(
        operation_id="projects_settings_update",
        tags=["projects"],
        parameters=[SLUG],
        request=ProjectSettingsSerializer,
        responses={200: ProjectSettingsSerializer},
    )
    def patch(self, request, slug):
        """Change some settings (the project's admins); the others stay as they are."""
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        data = ProjectSettingsSerializer(project, data=request.data, partial=True, context={"request": request})
        data.is_valid(raise_exception=True)
        try:
            with transaction.atomic():
                project_update(project=project, user=request.user, **_save_fields(data.validated_data, project))
        except ValidationError as exc:
            raise _as_api_validation(exc) from exc
        return _settings_response(project, request)


class ProjectArchiveApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="projects_archive",
        tags=["projects"],
        parameters=[SLUG],
        request=None,
        responses={200: ProjectSettingsSerializer},
    )
    def post(self, request, slug):
        """Archive the project: no new claims, imports or drafts; it stays readable and releasable."""
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        return _settings_response(project_archive(project=project, user=request.user), request)


class ProjectUnarchiveApi(ApiAuthMixin, APIView):
    @extend_schema(
        operation_id="projects_unarchive",
        tags=["projects"],
        parameters=[SLUG],
        request=None,
        responses={200: ProjectSettingsSerializer},
    )
    def post(self, request, slug):
        """Bring an archived project back to work."""
        project = get_project_or_404(request.user, slug, Action.ADMINISTER)
        return _settings_response(project_unarchive(project=project, user=request.user), request)
