"""Protected media: a video's files go only to members of its project, with byte ranges for seeking.

Who gets what:
- a member (or superuser), by session or `Authorization: Token <key>` → the bytes;
- anonymous → 302 to the login page (as any login-required page); a bad token → 401;
- anyone else, and anything missing → 404, the same answer so ids reveal nothing.

Ranges (RFC 9110): one range per request (`bytes=a-b`, `bytes=a-`, `bytes=-n`) → 206 with
Content-Range; a range starting past the end → 416 with `Content-Range: bytes */size`. A request
for several ranges is answered 200 with the whole file (allowed by the RFC; browsers seeking a
video ask for one range). Malformed or non-byte Range headers are ignored (200), and so is
a Range whose If-Range no longer matches the file's ETag / Last-Modified.

In production (MEDIA_ACCEL_REDIRECT_PREFIX set) the permission check happens here and nginx
sends the bytes, ranges included: the response is empty with `X-Accel-Redirect`.
"""

import logging
import mimetypes
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import content_disposition_header, http_date, parse_http_date_safe
from django.views.decorators.http import require_safe
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from projects.permissions import Action, can

from .models import Video

logger = logging.getLogger(__name__)

MEDIA_KINDS = ("original", "proxy", "poster")
CHUNK_SIZE = 64 * 1024

# Types the platform's mimetypes table may lack; checked first so answers do not vary by host.
_CONTENT_TYPES = {
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".webm": "video/webm",
    ".mkv": "video/x-matroska",
    ".mov": "video/quicktime",
    ".avi": "video/x-msvideo",
    ".ts": "video/mp2t",
    ".flv": "video/x-flv",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".webp": "image/webp",
    ".vtt": "text/vtt; charset=utf-8",
}


def content_type_for(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    return _CONTENT_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


# --- Ranges ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int  # inclusive, as in Content-Range

    @property
    def length(self) -> int:
        return self.end - self.start + 1


class RangeNotSatisfiable(Exception):
    pass


_RANGE_SPEC = re.compile(r"^\s*(\d*)\s*-\s*(\d*)\s*$")


def parse_range(header: str, size: int) -> ByteRange | None:
    """The one byte range to send, or None to send the whole file.

    Raises RangeNotSatisfiable when the single range asked for lies wholly past the end.
    """
    unit, sep, specs = header.partition("=")
    if not sep or unit.strip().lower() != "bytes" or size == 0:
        return None
    parts = specs.split(",")
    if len(parts) != 1:
        return None  # several ranges: whole file (see the module docstring)
    match = _RANGE_SPEC.match(parts[0])
    if not match:
        return None
    first, last = match.groups()
    if first:
        start = int(first)
        if last and int(last) < start:
            return None  # syntactically invalid: ignore, as RFC 9110 allows
        if start >= size:
            raise RangeNotSatisfiable
        return ByteRange(start, min(int(last), size - 1) if last else size - 1)
    if last:  # suffix: the last n bytes
        suffix = int(last)
        if suffix == 0:
            raise RangeNotSatisfiable
        return ByteRange(max(size - suffix, 0), size - 1)
    return None  # "bytes=-"


def _if_range_allows(request, etag: str | None, last_modified: int | None) -> bool:
    """True when the Range may be honoured: no If-Range, or it still names this exact file."""
    value = request.headers.get("If-Range")
    if not value:
        return True
    value = value.strip()
    if value.startswith(('"', "W/")):
        # Strong comparison only: a weak validator never allows a partial response.
        return etag is not None and value == etag
    date = parse_http_date_safe(value)
    return date is not None and last_modified is not None and date == last_modified


class _FileRange:
    """`length` bytes of `file` from `start`, read in chunks; the response closes the file when done."""

    def __init__(self, file, start: int, length: int):
        self._file, self._start, self._length = file, start, length

    def __iter__(self):
        self._file.seek(self._start)
        remaining = self._length
        while remaining > 0:
            chunk = self._file.read(min(CHUNK_SIZE, remaining))
            if not chunk:
                break  # the file shrank under us; the client sees a short body and retries
            remaining -= len(chunk)
            yield chunk

    def close(self):
        self._file.close()


def serve_file(request, *, storage, name: str, content_type: str, filename: str = "") -> HttpResponse:
    """Stream a storage file with ranges and conditional requests; never holds it in memory."""
    try:
        size = storage.size(name)
    except OSError:
        logger.warning("Media file missing from storage: %s", name)
        raise Http404("The file is missing.") from None
    try:
        modified = storage.get_modified_time(name).timestamp()
    except (NotImplementedError, OSError):
        last_modified = etag = None  # no validators: conditional and If-Range requests get the whole file
    else:
        last_modified = int(modified)
        # Size and sub-second mtime: a replaced file gets a new tag even within the same second.
        etag = f'"{size:x}-{int(modified * 1_000_000):x}"'

    headers = {
        "Accept-Ranges": "bytes",
        "Content-Type": content_type,
        # Private: the bytes are behind a login. no-cache: revalidate (cheap 304) so a revoked
        # membership takes effect.
        "Cache-Control": "private, no-cache",
    }
    if etag:
        headers["ETag"] = etag
        headers["Last-Modified"] = http_date(last_modified)
    if filename:
        headers["Content-Disposition"] = content_disposition_header(False, filename)

    unconditional = HttpResponse(headers=headers)
    conditional = get_conditional_response(request, etag=etag, last_modified=last_modified, response=unconditional)
    if conditional is not unconditional:
        return conditional  # 304 Not Modified or 412 Precondition Failed

    byte_range = None
    range_header = request.headers.get("Range")
    if range_header and _if_range_allows(request, etag, last_modified):
        try:
            byte_range = parse_range(range_header, size)
        except RangeNotSatisfiable:
            return HttpResponse(
                "Requested range not satisfiable.\n",
                status=416,
                content_type="text/plain; charset=utf-8",
                headers={"Content-Range": f"bytes */{size}", "Accept-Ranges": "bytes"},
            )

    if byte_range is None:
        status, start, length = 200, 0, size
    else:
        status, start, length = 206, byte_range.start, byte_range.length
        headers["Content-Range"] = f"bytes {byte_range.start}-{byte_range.end}/{size}"
    headers["Content-Length"] = str(length)

    if request.method == "HEAD":
        return HttpResponse(status=status, headers=headers)
    file = storage.open(name, "rb")
    return StreamingHttpResponse(_FileRange(file, start, length), status=status, headers=headers)


# --- Permission and the view ------------------------------------------------------------------


def viewable_video_or_404(user, video_id: int) -> Video:
    """Fetch and authorise in one step: "missing" and "not yours" give the same 404."""
    video = Video.objects.select_related("project").filter(pk=video_id).first()
    if video is None or not can(user, Action.VIEW, video.project):
        raise Http404("No such video.")
    return video


def _file_of(video: Video, kind: str):
    if kind == "original":
        field = video.original
    elif kind == "proxy":
        field = video.proxy or video.original  # proxies exist only for originals a browser cannot play
    elif kind == "poster":
        field = video.poster
    else:
        raise Http404("No such media kind.")
    if not field:
        raise Http404(f"This video has no {kind}.")
    return field


def _download_name(video: Video, kind: str, name: str) -> str:
    if kind == "original" and video.original_filename:
        return video.original_filename
    return PurePosixPath(name).name


def _accel_redirect(*, name: str, content_type: str, filename: str) -> HttpResponse:
    # nginx serves `<prefix><path relative to MEDIA_ROOT>` from its internal location, with ranges.
    response = HttpResponse(content_type=content_type)
    response["X-Accel-Redirect"] = quote(settings.MEDIA_ACCEL_REDIRECT_PREFIX + name)
    response["Cache-Control"] = "private, no-cache"
    response["Content-Disposition"] = content_disposition_header(False, filename)
    return response


@require_safe
def video_media(request, video_id: int, kind: str):
    """GET/HEAD /media/videos/<id>/<original|proxy|poster>/ for members of the video's project."""
    user = request.user
    if "HTTP_AUTHORIZATION" in request.META:
        # Scripts follow the media links the API hands out with the same token.
        try:
            authenticated = TokenAuthentication().authenticate(request)
        except AuthenticationFailed as exc:
            return HttpResponse(
                f"{exc.detail}\n",
                status=401,
                content_type="text/plain; charset=utf-8",
                headers={"WWW-Authenticate": "Token"},
            )
        if authenticated is not None:
            user = authenticated[0]
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())

    video = viewable_video_or_404(user, video_id)
    field = _file_of(video, kind)
    name = field.name
    content_type = content_type_for(name)
    filename = _download_name(video, kind, name)
    if settings.MEDIA_ACCEL_REDIRECT_PREFIX:
        return _accel_redirect(name=name, content_type=content_type, filename=filename)
    if settings.MEDIA_REDIRECT_TO_STORAGE_URL:
        # Object storage serves ranges itself; the presigned URL expires (S3_URL_EXPIRE_S).
        return HttpResponseRedirect(field.storage.url(name))
    return serve_file(request, storage=field.storage, name=name, content_type=content_type, filename=filename)

