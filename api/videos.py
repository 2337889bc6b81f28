"""Read endpoints for a project's videos: filterable, ordered, with links to the protected media."""

import django_filters
from django.db.models import Count, QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import exceptions, generics, serializers
from rest_framework.reverse import reverse

from projects.permissions import get_project_or_404
from videos.models import CurationStatus, Split, Video, VideoStatus

from .mixins import ApiAuthMixin
from .ordering import StableOrderingFilter

UNASSIGNED_SPLIT = "unassigned"

_SLUG = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The project's slug.")
_VIDEO_ID = OpenApiParameter("video_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The video's id.")


def _project_videos(project) -> QuerySet[Video]:
    # API-specific shape (clip counts, no raw probe on lists); move to videos/selectors.py if the
    # browser pages come to need the same rows.
    return Video.objects.filter(project=project).annotate(clip_count=Count("clips"))


class VideoMediaLinksSerializer(serializers.Serializer):
    original = serializers.URLField(help_text="The file as imported.")
    proxy = serializers.URLField(help_text="A browser-playable copy; the original when none was needed.")
    poster = serializers.URLField(allow_null=True, help_text="A still image, when one was made.")


class VideoLinksSerializer(serializers.Serializer):
    self = serializers.URLField()
    media = VideoMediaLinksSerializer()


def _video_links(video: Video, *, slug: str, request) -> dict:
    def media(kind):
        return reverse("videos:media", kwargs={"video_id": video.pk, "kind": kind}, request=request)

    return {
        "self": reverse("api:video-detail", kwargs={"slug": slug, "video_id": video.pk}, request=request),
        "media": {
            "original": media("original"),
            "proxy": media("proxy"),
            "poster": media("poster") if video.poster else None,
        },
    }


class VideoFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=VideoStatus.choices, help_text="Processing status.")
    curation_status = django_filters.ChoiceFilter(choices=CurationStatus.choices, help_text="Curation outcome.")
    split = django_filters.ChoiceFilter(
        choices=[(UNASSIGNED_SPLIT, "Unassigned"), *((v, label) for v, label in Split.choices if v)],
        method="filter_split",
        help_text=f"Release split; `{UNASSIGNED_SPLIT}` for videos in none yet.",
    )

    class Meta:
        model = Video
        fields = ["status", "curation_status", "split"]

    def filter_split(self, queryset, name, value):
        return queryset.filter(split=Split.UNASSIGNED if value == UNASSIGNED_SPLIT else value)


class VideoListApi(ApiAuthMixin, generics.ListAPIView):
    """The project's videos, by name unless `ordering` says otherwise (prefix `-` to reverse)."""

    class OutputSerializer(serializers.ModelSerializer):
        clip_count = serializers.IntegerField()
        links = serializers.SerializerMethodField()

        class Meta:
            model = Video
            fields = [
                "id",
                "name",
                "status",
                "curation_status",
                "split",
                "duration_s",
                "fps",
                "width",
                "height",
                "has_audio",
                "size_bytes",
                "clip_count",
                "created_at",
                "links",
            ]
            ref_name = "VideoListItem"

        @extend_schema_field(VideoLinksSerializer)
        def get_links(self, video):
            return _video_links(video, slug=self.context["view"].kwargs["slug"], request=self.context["request"])

    serializer_class = OutputSerializer
    filter_backends = [DjangoFilterBackend, StableOrderingFilter]
    filterset_class = VideoFilter
    ordering_fields = ["name", "created_at", "duration_s", "size_bytes", "status", "curation_status", "split"]
    ordering = ["name"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no project to look up
            return Video.objects.none()
        project = get_project_or_404(self.request.user, self.kwargs["slug"])
        return _project_videos(project).defer("probe", "metadata")

    @extend_schema(operation_id="videos_list", tags=["videos"], parameters=[_SLUG])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class VideoDetailApi(ApiAuthMixin, generics.RetrieveAPIView):
    """One video: probe metadata, pipeline state, clip count and links to its media."""

    class OutputSerializer(serializers.ModelSerializer):
        clip_count = serializers.IntegerField()
        links = serializers.SerializerMethodField()

        class Meta:
            model = Video
            fields = [
                "id",
                "name",
                "original_filename",
                "sha256",
                "size_bytes",
                # Probe.
                "duration_s",
                "fps",
                "fps_is_variable",
                "frame_count",
                "width",
                "height",
                "rotation",
                "container",
                "video_codec",
                "audio_codec",
                "has_audio",
                "start_time_s",
                "probe",
                # Pipeline.
                "status",
                "status_reason",
                "curation_status",
                "complexity_score",
                "unusable_reason",
                "split",
                # Release metadata.
                "topic_category",
                "view_count",
                "source_url",
                "language",
                "metadata",
                "clip_count",
                "created_at",
                "updated_at",
                "links",
            ]
            ref_name = "VideoDetail"

        @extend_schema_field(VideoLinksSerializer)
        def get_links(self, video):
            return _video_links(video, slug=self.context["view"].kwargs["slug"], request=self.context["request"])

    serializer_class = OutputSerializer

    def get_object(self):
        project = get_project_or_404(self.request.user, self.kwargs["slug"])
        video = _project_videos(project).filter(pk=self.kwargs["video_id"]).first()
        if video is None:
            raise exceptions.NotFound("No such video in this project.")
        return video

    @extend_schema(operation_id="videos_retrieve", tags=["videos"], parameters=[_SLUG, _VIDEO_ID])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
