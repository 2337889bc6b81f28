"""Real-time comments: streamed import at millions of rows, time-window reads, density."""

import io
from dataclasses import dataclass, field
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.models import Count, FloatField
from django.db.models.functions import Cast, Floor

from jobs.models import BackgroundJob
from jobs.services import JobAlreadyRunning, job_create

from .comment_formats import CommentRow, RowProblem, copy_sql, iter_comments, write_copy_rows
from .models import Comment, Video

COMMENTS_IMPORT_TASK = "videos.import_comments"
BATCH_ROWS = 50_000
MAX_PROBLEMS_KEPT = 200


@dataclass
class CommentImport:
    imported: int = 0
    skipped: int = 0
    problems: list[RowProblem] = field(default_factory=list)


def comments_import_start(*, video: Video, upload, user=None) -> BackgroundJob:
    """Stage an uploaded comments file in storage and import it in the background (millions of rows).

    A file that cannot be comments (binary, no time or text column, a JSON array) raises
    comment_formats.CommentFormatError at once and nothing is staged; JobAlreadyRunning while the
    video's comments are being imported (the staged copy is removed again).
    """
    iter_comments(upload.open("rb"), upload.name)  # reads only the head: refuse a wrong file now, not in the worker
    upload.seek(0)
    staged = default_storage.save(
        f"projects/{video.project_id}/imports/comments/{video.pk}/{Path(upload.name).name}", upload
    )
    try:
        return job_create(
            project=video.project,
            kind=COMMENTS_IMPORT_TASK,
            target=video,
            user=user,
            params={"staged": staged, "filename": upload.name, "size": upload.size},
        )
    except JobAlreadyRunning:
        default_storage.delete(staged)
        raise


def comments_import(*, video: Video, source, filename: str, progress=None) -> CommentImport:
    """Replace the video's comments with those of a CSV/JSONL file, in one transaction.

    Bad rows are skipped and reported by line; a file that cannot be comments raises
    comment_formats.CommentFormatError before anything changes. `progress(rows_done)` is called
    once per batch.
    """
    reader = iter_comments(source, filename)  # refuses a wrong file up front
    outcome = CommentImport()
    use_copy = connection.vendor == "postgresql"
    with transaction.atomic():
        Comment.objects.filter(video=video).delete()
        batch: list[CommentRow] = []
        for item in reader:
            if isinstance(item, RowProblem):
                outcome.skipped += 1
                if len(outcome.problems) < MAX_PROBLEMS_KEPT:
                    outcome.problems.append(item)
                continue
            batch.append(item)
            if len(batch) >= BATCH_ROWS:
                outcome.imported += _write(video, batch, use_copy)
                batch.clear()
                if progress:
                    progress(outcome.imported)
        if batch:
            outcome.imported += _write(video, batch, use_copy)
            if progress:
                progress(outcome.imported)
    return outcome


def _write(video: Video, rows: list[CommentRow], use_copy: bool) -> int:
    if use_copy:
        buf = io.StringIO()
        write_copy_rows(rows, buf, video_id=video.pk)
        buf.seek(0)
        with connection.cursor() as cursor:
            cursor.cursor.copy_expert(copy_sql(Comment._meta.db_table), buf)
        return len(rows)
    Comment.objects.bulk_create(
        [Comment(video=video, time_s=r.time_s, text=r.text, user=r.user, metadata=r.metadata) for r in rows],
        batch_size=5000,
    )
    return len(rows)


def comments_window(*, video: Video, start_s: float, end_s: float, limit: int = 200) -> list[Comment]:
    """Comments in [start_s, end_s) in time order; served by the (video, time_s) index."""
    return list(
        Comment.objects.filter(video=video, time_s__gte=start_s, time_s__lt=end_s)
        .order_by("time_s", "id")
        .only("id", "time_s", "text", "user")[:limit]
    )


def comments_density(*, video: Video, bins: int = 100) -> dict:
    """Comment counts per equal time bin over the video, for the timeline's density strip."""
    duration = video.duration_s or 0
    if duration <= 0:
        return {"bin_s": 0, "counts": []}
    bins = max(1, min(bins, 2000))
    width = duration / bins
    rows = (
        Comment.objects.filter(video=video)
        .annotate(bin=Floor(Cast("time_s", FloatField()) / width))
        .values("bin")
        .annotate(n=Count("id"))
    )
    counts = [0] * bins
    for row in rows:
        counts[min(bins - 1, max(0, int(row["bin"])))] += row["n"]
    return {"bin_s": width, "counts": counts}
