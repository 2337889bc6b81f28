"""What a video holds besides its pixels: clips and scenes, subtitle cues, real-time comments.

Reads are open to every member; imports are for admins. Comment files can hold millions of rows,
so their import is staged and runs as a job; subtitle files are small and import at once.
"""

import math

import django_filters
from django.db.models import Q
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs.services import JobAlreadyRunning
from projects.permissions import Action
from videos.comment_formats import CommentFormatError
from videos.comments import comments_density, comments_import_start, comments_window
from videos.models import Clip, CueSource, SubtitleCue
from videos.subtitle_formats import SubtitleFormatError
from videos.subtitles import SUBTITLE_MAX_BYTES, subtitles_import

from .errors import ErrorResponseSerializer
from .filters import BoundedNumberFilter
from .jobs import JOB_RUNNING, SLUG, VIDEO_ID, JobSerializer, job_conflict, job_payload
from .lookups import video_or_404
from .mixins import ApiAuthMixin

COMMENTS_DEFAULT_LIMIT = 100
COMMENTS_MAX_LIMIT = 1000
DENSITY_DEFAULT_BINS = 100
DENSITY_MAX_BINS = 2000
# Problems listed in a refusal; the rest are counted, so one answer stays small.
PROBLEMS_SHOWN = 20

_BAD_QUERY = OpenApiResponse(
    ErrorResponseSerializer,
    description="A query parameter is missing or not valid (`validation_error`); see `details`.",
)


# Shapes nested in the answers below (module level, so each is one named schema component).


class ClipSerializer(serializers.ModelSerializer):
    class Meta:
        model = Clip
        fields = ["id", "index", "start_s", "end_s", "scene_start_s", "scene_end_s"]
        ref_name = "Clip"


class SceneSerializer(serializers.Serializer):
    start_s = serializers.FloatField()
    end_s = serializers.FloatField()

    class Meta:
        ref_name = "Scene"


class SubtitleProblemSerializer(serializers.Serializer):
    line = serializers.IntegerField(help_text="Line in the file (1-based).")
    message = serializers.CharField()

    class Meta:
        ref_name = "SubtitleProblem"


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    time_s = serializers.FloatField()
    text = serializers.CharField()
    user = serializers.CharField(help_text="The viewer's name or id, when the file had one.")

    class Meta:
        ref_name = "Comment"


# ---------------------------------------------------------------------------------------------
# Clips and scenes


class VideoClipsApi(ApiAuthMixin, APIView):
    """The video's clips in order, and the scenes they were planned from.

    `scenes` are the detected scenes before merging and padding (null until the video was processed);
    each clip keeps the scene it came from (`scene_start_s`, `scene_end_s`) before padding.
    """

    class OutputSerializer(serializers.Serializer):
        video_id = serializers.IntegerField()
        duration_s = serializers.FloatField(allow_null=True)
        scenes = SceneSerializer(many=True, allow_null=True)
        clips = ClipSerializer(many=True)

        class Meta:
            ref_name = "VideoClips"

    @extend_schema(
        operation_id="videos_clips", tags=["videos"], parameters=[SLUG, VIDEO_ID], responses={200: OutputSerializer}
    )
    def get(self, request, slug, video_id):
        video = video_or_404(request.user, slug, video_id)
        clips = Clip.objects.filter(video=video).order_by("index")
        scenes = None if video.scenes is None else [{"start_s": s, "end_s": e} for s, e in video.scenes]
        body = {"video_id": video.pk, "duration_s": video.duration_s, "scenes": scenes, "clips": clips}
        return Response(VideoClipsApi.OutputSerializer(body).data)


# ---------------------------------------------------------------------------------------------
# Subtitle cues


class CueFilter(django_filters.FilterSet):
    source = django_filters.ChoiceFilter(
        choices=CueSource.choices, help_text="Where the cues came from: a file format, `asr` or `manual`."
    )
    language = django_filters.CharFilter(help_text="Language code as stored with the cues.")
    start = BoundedNumberFilter(method="filter_start", help_text="Seconds; cues that end after it.")
    end = BoundedNumberFilter(method="filter_end", help_text="Seconds; cues that begin before it.")

    class Meta:
        model = SubtitleCue
        fields = ["source", "language", "start", "end"]

    def filter_start(self, queryset, name, value):
        # A zero-length cue exactly at `start` is inside the window too.
        return queryset.filter(Q(end_s__gt=value) | Q(start_s__gte=value))

    def filter_end(self, queryset, name, value):
        return queryset.filter(start_s__lt=value)


class CueListApi(ApiAuthMixin, generics.ListAPIView):
    """The video's subtitle and transcript cues in time order; `start`/`end` keep those overlapping [start, end).

    Every source lands here: imported SRT/WebVTT/LongVideoBench JSON and speech recognition (`asr`).
    """

    class OutputSerializer(serializers.ModelSerializer):
        class Meta:
            model = SubtitleCue
            fields = ["id", "start_s", "end_s", "text", "source", "language"]
            ref_name = "Cue"

    serializer_class = OutputSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = CueFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no video to look up
            return SubtitleCue.objects.none()
        video = video_or_404(self.request.user, self.kwargs["slug"], self.kwargs["video_id"])
        return SubtitleCue.objects.filter(video=video).order_by("start_s", "id")

    @extend_schema(operation_id="videos_cues_list", tags=["subtitles"], parameters=[SLUG, VIDEO_ID])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class SubtitlesImportApi(ApiAuthMixin, APIView):
    """Import a subtitle file (admins): SRT, WebVTT or either LongVideoBench JSON shape, any common encoding.

    Replaces the cues of earlier subtitle files (transcript cues stay). Malformed cues are skipped and
    listed with their line numbers; the valid ones are kept.
    """

    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="The subtitle file (.srt, .vtt, .json).")
        language = serializers.CharField(
            required=False, allow_blank=True, max_length=10, help_text="Language code; the video's when omitted."
        )

        class Meta:
            ref_name = "SubtitlesImport"

    class OutputSerializer(serializers.Serializer):
        count = serializers.IntegerField(help_text="Cues imported.")
        format = serializers.CharField(help_text="`srt`, `vtt`, `lvb_start_end` or `lvb_timestamp`.")
        encoding = serializers.CharField(help_text="The text encoding the file was read in.")
        skipped = SubtitleProblemSerializer(many=True, help_text="Malformed cues, skipped, with their lines.")

        class Meta:
            ref_name = "SubtitlesImportResult"

    @extend_schema(
        operation_id="videos_subtitles_import",
        tags=["subtitles"],
        parameters=[SLUG, VIDEO_ID],
        request={"multipart/form-data": InputSerializer},
        responses={
            201: OutputSerializer,
            400: OpenApiResponse(
                ErrorResponseSerializer,
                description="No usable cue (`validation_error`): `details.file` gives the reason, then the first "
                "problems by line. Nothing was changed.",
            ),
        },
    )
    def post(self, request, slug, video_id):
        video = video_or_404(request.user, slug, video_id, Action.ADMINISTER)
        data = SubtitlesImportApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        if upload.size > SUBTITLE_MAX_BYTES:
            too_big = f"{upload.name} is larger than {SUBTITLE_MAX_BYTES // 2**20} MB; is it really subtitles?"
            raise exceptions.ValidationError({"file": [too_big]})
        try:
            result = subtitles_import(
                video=video, data=upload.read(), filename=upload.name, language=data.validated_data.get("language", "")
            )
        except SubtitleFormatError as exc:
            raise exceptions.ValidationError({"file": [f"{upload.name}: {exc}", *_shown(exc.problems)]}) from exc
        body = {
            "count": result.count,
            "format": result.format,
            "encoding": result.encoding,
            "skipped": [{"line": p.line, "message": p.message} for p in result.problems],
        }
        return Response(SubtitlesImportApi.OutputSerializer(body).data, status=status.HTTP_201_CREATED)


def _shown(problems) -> list[str]:
    shown = [str(p) for p in problems[:PROBLEMS_SHOWN]]
    if len(problems) > PROBLEMS_SHOWN:
        shown.append(f"... and {len(problems) - PROBLEMS_SHOWN} more problems")
    return shown


# ---------------------------------------------------------------------------------------------
# Real-time comments


class CommentWindowApi(ApiAuthMixin, APIView):
    """Comments whose time falls in [start, end), in time order, at most `limit` of them.

    `truncated` says the window holds more than `limit`: narrow the window or raise the limit.
    Served by the (video, time) index, fast at millions of comments.
    """

    class InputSerializer(serializers.Serializer):
        start = serializers.FloatField(help_text="Seconds from the start of the video.")
        end = serializers.FloatField(help_text="Seconds; an `end` before `start` is an empty window.")
        limit = serializers.IntegerField(
            required=False,
            default=COMMENTS_DEFAULT_LIMIT,
            min_value=1,
            max_value=COMMENTS_MAX_LIMIT,
            help_text=f"At most this many comments (default {COMMENTS_DEFAULT_LIMIT}, at most {COMMENTS_MAX_LIMIT}).",
        )

        def validate(self, attrs):
            for name in ("start", "end"):
                if not math.isfinite(attrs[name]):
                    raise serializers.ValidationError({name: ["Must be a finite number of seconds."]})
            return attrs

    class OutputSerializer(serializers.Serializer):
        start = serializers.FloatField()
        end = serializers.FloatField()
        limit = serializers.IntegerField()
        truncated = serializers.BooleanField(help_text="More comments fall in the window than were returned.")
        comments = CommentSerializer(many=True)

        class Meta:
            ref_name = "CommentWindow"

    @extend_schema(
        operation_id="videos_comments_window",
        tags=["comments"],
        parameters=[SLUG, VIDEO_ID, InputSerializer],
        responses={200: OutputSerializer, 400: _BAD_QUERY},
    )
    def get(self, request, slug, video_id):
        video = video_or_404(request.user, slug, video_id)
        params = CommentWindowApi.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        start, end, limit = (params.validated_data[k] for k in ("start", "end", "limit"))
        # One extra row tells whether there is more, without a COUNT over millions of rows.
        rows = comments_window(video=video, start_s=max(0.0, start), end_s=end, limit=limit + 1)
        body = {"start": start, "end": end, "limit": limit, "truncated": len(rows) > limit, "comments": rows[:limit]}
        return Response(CommentWindowApi.OutputSerializer(body).data)


class CommentDensityApi(ApiAuthMixin, APIView):
    """How many comments fall in each of `bins` equal slices of the video, for a density strip."""

    class InputSerializer(serializers.Serializer):
        bins = serializers.IntegerField(
            required=False,
            default=DENSITY_DEFAULT_BINS,
            min_value=1,
            max_value=DENSITY_MAX_BINS,
            help_text=f"Number of slices (default {DENSITY_DEFAULT_BINS}, at most {DENSITY_MAX_BINS}).",
        )

    class OutputSerializer(serializers.Serializer):
        bins = serializers.IntegerField()
        bin_s = serializers.FloatField(help_text="Width of one slice in seconds; 0 when the duration is unknown.")
        counts = serializers.ListField(
            child=serializers.IntegerField(), help_text="Comments per slice, from the start; empty without a duration."
        )
        total = serializers.IntegerField()

        class Meta:
            ref_name = "CommentDensity"

    @extend_schema(
        operation_id="videos_comments_density",
        tags=["comments"],
        parameters=[SLUG, VIDEO_ID, InputSerializer],
        responses={200: OutputSerializer, 400: _BAD_QUERY},
    )
    def get(self, request, slug, video_id):
        video = video_or_404(request.user, slug, video_id)
        params = CommentDensityApi.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        density = comments_density(video=video, bins=params.validated_data["bins"])
        body = {
            "bins": len(density["counts"]),
            "bin_s": density["bin_s"],
            "counts": density["counts"],
            "total": sum(density["counts"]),
        }
        return Response(CommentDensityApi.OutputSerializer(body).data)


class CommentsImportApi(ApiAuthMixin, APIView):
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text="CSV with a header naming a time and a text column (user optional), or JSONL with the same keys."
        )

        class Meta:
            ref_name = "CommentsImport"

    @extend_schema(
        operation_id="videos_comments_import",
        tags=["comments"],
        parameters=[SLUG, VIDEO_ID],
        request={"multipart/form-data": InputSerializer},
        responses={
            202: OpenApiResponse(JobSerializer, description="The file is staged; its rows import as this job."),
            400: OpenApiResponse(
                ErrorResponseSerializer,
                description="Not a comments file (`validation_error`): `details.file` says why. Nothing was staged.",
            ),
            409: JOB_RUNNING,
        },
    )
    def post(self, request, slug, video_id):
        """Replace the video's comments with those of a CSV/JSONL file (admins), in the background.

        A file that cannot be comments (binary, no time or text column, a JSON array) is refused at
        once; bad rows inside a good file are skipped and reported in the job's `result.problems`.
        """
        video = video_or_404(request.user, slug, video_id, Action.ADMINISTER)
        data = CommentsImportApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            job = comments_import_start(video=video, upload=upload, user=request.user)
        except CommentFormatError as exc:
            raise exceptions.ValidationError({"file": [f"{upload.name}: {exc}"]}) from exc
        except JobAlreadyRunning as exc:
            return job_conflict(exc, view=self, message=f"Comments for {video.name} are already being imported.")
        return Response(job_payload(job, view=self), status=status.HTTP_202_ACCEPTED)
