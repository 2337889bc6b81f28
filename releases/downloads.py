"""A release's files handed to members: the stored zip, or a tar generated on the fly.

The zip is the deterministic archive the build stored; it is served like protected media (ranges,
conditional requests; X-Accel-Redirect behind nginx; a presigned redirect on object storage).
The tar is streamed from the stored files, never assembled in memory or on disk, and is the same
bytes every time: members in the files' listed (sorted) order, fixed mtime, owner and mode, PAX
headers only where a name is too long for ustar. Its length is known in advance, so it carries a
Content-Length and a client can show progress.
"""

from __future__ import annotations

import posixpath
import tarfile
from urllib.parse import quote

from django.conf import settings
from django.core.files.storage import default_storage
from django.http import Http404, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _

from projects.refusals import Refused
from videos.media import CHUNK_SIZE, serve_file

from .models import DatasetRelease, ReleaseStatus

# 1980-01-01T00:00:00Z: the earliest time a zip can record, so both archives carry the same date.
FIXED_MTIME = 315532800
_BLOCK = tarfile.BLOCKSIZE
_RECORD = tarfile.RECORDSIZE


class NotDownloadable(Refused):
    status, code = 409, "release_not_ready"


def archive_root(release: DatasetRelease) -> str:
    """The folder every archive member sits in: `<project slug>-<version>`."""
    return f"{release.project.slug}-{release.version}"


def download_filename(release: DatasetRelease, ext: str) -> str:
    return f"{archive_root(release)}.{ext}"


def check_downloadable(release: DatasetRelease) -> None:
    if release.status != ReleaseStatus.READY:
        raise NotDownloadable(
            _("Release %(version)s is %(status)s; only a ready release can be downloaded.")
            % {"version": release.version, "status": release.get_status_display().lower()}
        )


# --- zip ---------------------------------------------------------------------------------------------


def zip_response(request, release: DatasetRelease) -> HttpResponse:
    if not release.archive:
        raise Http404("This release has no stored archive.")
    name = release.archive.name
    filename = download_filename(release, "zip")
    if settings.MEDIA_ACCEL_REDIRECT_PREFIX:
        response = HttpResponse(content_type="application/zip")
        response["X-Accel-Redirect"] = quote(settings.MEDIA_ACCEL_REDIRECT_PREFIX + name)
        response["Cache-Control"] = "private, no-cache"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    if settings.MEDIA_REDIRECT_TO_STORAGE_URL:
        # Object storage serves the bytes and ranges itself; the presigned URL expires.
        return HttpResponseRedirect(release.archive.storage.url(name))
    response = serve_file(
        request, storage=release.archive.storage, name=name, content_type="application/zip", filename=filename
    )
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


# --- tar ---------------------------------------------------------------------------------------------


def _tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = FIXED_MTIME
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    # PAX only when ustar cannot hold the name; deterministic either way (no atime/ctime records).
    return info.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="strict")


def _padding(size: int) -> int:
    return (-size) % _BLOCK


def tar_members(release: DatasetRelease) -> list[tuple[str, str, int]]:
    """(storage name, member name, size) for every listed file, in path order."""
    root = archive_root(release)
    members = []
    for entry in sorted(release.files or [], key=lambda f: f["path"]):
        path = entry["path"]
        members.append((posixpath.join(release.storage_prefix, path), f"{root}/{path}", int(entry["bytes"])))
    return members


def tar_length(members) -> int:
    body = sum(len(_tar_header(member, size)) + size + _padding(size) for _, member, size in members)
    body += 2 * _BLOCK  # end-of-archive marker
    return body + (-body) % _RECORD


class TarStream:
    """Iterates the tar's bytes; reads each stored file in chunks as the client takes them."""

    def __init__(self, members, storage=default_storage):
        self._members = members
        self._storage = storage
        self._open = None

    def __iter__(self):
        written = 0
        for name, member, size in self._members:
            header = _tar_header(member, size)
            yield header
            sent = 0
            self._open = self._storage.open(name, "rb")
            try:
                while sent < size:
                    chunk = self._open.read(min(CHUNK_SIZE, size - sent))
                    if not chunk:
                        # The stored file is shorter than recorded: stop rather than send a corrupt archive.
                        raise OSError(f"{name} is shorter than the {size} bytes the manifest records")
                    sent += len(chunk)
                    yield chunk
            finally:
                self._open.close()
                self._open = None
            pad = _padding(size)
            if pad:
                yield b"\0" * pad
            written += len(header) + size + pad
        written += 2 * _BLOCK
        yield b"\0" * (2 * _BLOCK + (-written) % _RECORD)

    def close(self):
        if self._open is not None:
            self._open.close()


def tar_response(request, release: DatasetRelease) -> StreamingHttpResponse:
    members = tar_members(release)
    headers = {
        "Content-Type": "application/x-tar",
        "Content-Length": str(tar_length(members)),
        "Content-Disposition": content_disposition_header(True, download_filename(release, "tar")),
        "Cache-Control": "private, no-cache",
    }
    if request.method == "HEAD":
        return HttpResponse(headers=headers)
    return StreamingHttpResponse(TarStream(members), headers=headers)
