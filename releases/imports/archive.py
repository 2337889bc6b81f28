"""An uploaded zip of benchmark files, unpacked into a temporary folder without leaving it.

A member whose path is absolute or climbs out (`..`), a link, or an archive that unpacks to more than
the video size limit is refused before anything is written. A release's zip has one top folder
(`<slug>-<version>/`); the import then reads from inside it.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.utils.translation import gettext as _

from projects.refusals import Refused


class ArchiveRefused(Refused):
    status, code = 422, "benchmark_archive_refused"


def archive_unpack(*, archive, dest: Path) -> Path:
    """Unpack the zip (a path or file object) into `dest`; returns the folder to import from."""
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveRefused(_("The upload is not a zip archive (%(reason)s).") % {"reason": exc}) from exc
    with zf:
        members = zf.infolist()
        total = sum(m.file_size for m in members)
        if total > settings.VIDEO_MAX_BYTES:
            raise ArchiveRefused(_("The archive unpacks to more than the size limit."))
        for m in members:
            path = PurePosixPath(m.filename)
            if path.is_absolute() or ".." in path.parts or "\\" in m.filename:
                raise ArchiveRefused(_("%(name)s: a path outside the archive's folder.") % {"name": m.filename})
            if stat.S_ISLNK(m.external_attr >> 16):
                raise ArchiveRefused(_("%(name)s: links are not unpacked.") % {"name": m.filename})
        zf.extractall(dest)  # noqa: S202 - every member's path was checked above
    entries = [p for p in dest.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return dest
