"""Read endpoints for projects: only the caller's, and the same 404 for "missing" and "not yours"."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.reverse import reverse

from projects.models import Project
from projects.permissions import get_project_or_404, roles_of
from projects.selectors import project_list_for

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
