"""Writes on releases: create (admins; the build runs as a background job) and delete (admins, logged).

A release is immutable once created: there is no edit. Its inputs are checked and normalised here,
so the row holds exactly what the build reads and the manifest repeats, and the same inputs give
the same bytes. Refusals are `PermissionDenied` (role) and `ValidationError` whose message_dict maps
each input (`version`, `formats`, `filters`, `split_config`, `seed`) to messages people can act on.
"""

from __future__ import annotations

import datetime as dt
import logging
import posixpath
import re

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotator.models import ItemStatus
from audits.gate import release_gate
from jobs.models import BackgroundJob, JobStatus
from jobs.services import JobAlreadyRunning, job_create
from projects.models import AuditGate, Project
from projects.permissions import Action, can

from .models import DatasetRelease, ReleaseFormat, ReleaseStatus
from .selectors import matching_items, release_match_counts
from .splits import SPLITS, SplitConfigError, split_config_clean

logger = logging.getLogger(__name__)

BUILD_TASK = "releases.build"
VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
VERSION_MAX = DatasetRelease._meta.get_field("version").max_length
FILTER_KEYS = (
    "statuses",
    "categories",
    "video_ids",
    "accepted_from",
    "accepted_to",
    "include_media",
    "clip_files",
    "lmms_eval",
)
# The formats whose files an lmms-eval task reads (releases/writers/lmms_tasks.py).
LMMS_EVAL_FORMATS = (ReleaseFormat.LONGVIDEOBENCH, ReleaseFormat.MVPBENCH, ReleaseFormat.LIVIBENCH)
SPLIT_NAMES = SPLITS
SEED_MAX = 2**63 - 1
_ACTIVE = (ReleaseStatus.QUEUED, ReleaseStatus.BUILDING)


# --- input checks ------------------------------------------------------------------------------------


def clean_version(version) -> str:
    version = (version or "").strip() if isinstance(version, str) else ""
    if not version:
        raise ValidationError(_("Give the release a version label, e.g. v1.0."))
    if len(version) > VERSION_MAX:
        raise ValidationError(
            _("A version label has at most %(version_max)s characters; this one has %(len)s.")
            % {"version_max": VERSION_MAX, "len": len(version)}
        )
    if not VERSION_RE.match(version) or ".." in version:
        # It names the release's folder in storage and in the archives.
        raise ValidationError(
            _(
                "%(version)s cannot be a version label: use letters, digits, dots, dashes, underscores and plus "
                "signs, starting with a letter or digit (e.g. v1.0, 2025-06-rc1)."
            )
            % {"version": repr(version)}
        )
    return version


def clean_formats(formats) -> list[str]:
    if isinstance(formats, str):
        formats = [formats]
    if not isinstance(formats, list | tuple) or not formats:
        raise ValidationError(_("Choose at least one format."))
    unknown = sorted({str(f) for f in formats} - set(ReleaseFormat.values))
    if unknown:
        raise ValidationError(
            ngettext(
                "Unknown format %(unknown)s; choose from %(formats)s.",
                "Unknown formats %(unknown)s; choose from %(formats)s.",
                len(unknown),
            )
            % {"unknown": ", ".join(unknown), "formats": ", ".join(ReleaseFormat.values)}
        )
    # Stable order (the choices' order), no repeats: the manifest and the folders follow it.
    return [f for f in ReleaseFormat.values if f in formats]


def _iso_date(value, label: str) -> str:
    if isinstance(value, dt.date):
        return value.isoformat()
    try:
        return dt.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise ValidationError(
            _("%(label)s must be a date as YYYY-MM-DD, not %(value)r.") % {"label": label, "value": value}
        ) from None


def clean_filters(filters, *, project: Project) -> dict:
    """Checked, normalised filters (sorted lists, ISO dates); only the keys that narrow the selection."""
    if filters is None:
        filters = {}
    if not isinstance(filters, dict):
        raise ValidationError('Filters must be an object such as {"categories": ["E2O"]}.')
    unknown = sorted(set(filters) - set(FILTER_KEYS))
    if unknown:
        raise ValidationError(
            _("Unknown filter %(value)s; filters are %(value2)s.")
            % {"value": ", ".join(unknown), "value2": ", ".join(FILTER_KEYS)}
        )
    errors: list[str] = []
    clean: dict = {}

    statuses = filters.get("statuses") or list(_default_statuses())
    if not isinstance(statuses, list | tuple) or not all(isinstance(s, str) for s in statuses):
        errors.append("statuses must be a list of item statuses.")
    else:
        bad = sorted(set(statuses) - set(ItemStatus.values))
        if bad:
            errors.append(f"Unknown status {', '.join(bad)}; statuses are {', '.join(ItemStatus.values)}.")
        else:
            clean["statuses"] = [s for s in ItemStatus.values if s in statuses]

    categories = filters.get("categories") or []
    if not isinstance(categories, list | tuple) or not all(isinstance(c, str) for c in categories):
        errors.append("categories must be a list of category codes or task names.")
    elif categories:
        clean["categories"] = sorted({c.strip() for c in categories if c.strip()})

    video_ids = filters.get("video_ids") or []
    if not isinstance(video_ids, list | tuple):
        errors.append("video_ids must be a list of video ids.")
    elif video_ids:
        try:
            ids = sorted({int(v) for v in video_ids})
        except (TypeError, ValueError):
            errors.append("video_ids must be whole numbers (the videos' ids).")
        else:
            found = set(project.videos.filter(pk__in=ids).values_list("pk", flat=True))
            missing = [i for i in ids if i not in found]
            if missing:
                errors.append(f"No video with id {', '.join(map(str, missing))} in this project.")
            else:
                clean["video_ids"] = ids

    for key, label in (("accepted_from", "accepted_from"), ("accepted_to", "accepted_to")):
        if filters.get(key):
            try:
                clean[key] = _iso_date(filters[key], label)
            except ValidationError as exc:
                errors.extend(exc.messages)
    if clean.get("accepted_from") and clean.get("accepted_to") and clean["accepted_from"] > clean["accepted_to"]:
        errors.append(f"accepted_from ({clean['accepted_from']}) is after accepted_to ({clean['accepted_to']}).")

    include_media = filters.get("include_media", True)
    if not isinstance(include_media, bool):
        errors.append("include_media must be true or false.")
    else:
        clean["include_media"] = include_media
    clip_files = filters.get("clip_files", False)
    if not isinstance(clip_files, bool):
        errors.append("clip_files must be true or false.")
    elif clip_files:  # only when asked: the default stays out of the stored filters
        clean["clip_files"] = True
    lmms_eval = filters.get("lmms_eval", False)
    if not isinstance(lmms_eval, bool):
        errors.append("lmms_eval must be true or false.")
    elif lmms_eval:
        clean["lmms_eval"] = True
    if errors:
        raise ValidationError(errors)
    return clean


def lmms_eval_refusals(*, formats: list[str], test_style: bool) -> list[str]:
    """Why a release with these formats cannot carry lmms-eval tasks (empty: it can)."""
    errors = []
    if not set(formats) & set(LMMS_EVAL_FORMATS):
        errors.append(
            _("lmms-eval tasks read the LongVideoBench, MVPBench or LiViBench files: choose one of those formats too.")
        )
    if test_style:
        errors.append(
            _("lmms-eval tasks score answers, and a test-style release withholds them: untick one of the two.")
        )
    return errors


def _default_statuses():
    return (ItemStatus.ACCEPTED.value,)


def clean_split_config(split_config) -> dict:
    """`{"ratios": {split: share}}` or `{"counts": {split: videos}}`, plus `"stratify"` (default true);
    the flat shapes `{"train": 0.8, "test": 0.2}` and `{"test": 50}` mean the same. Empty means every
    video goes to `test`. The split module's own check, so the form and the build never disagree."""
    try:
        return split_config_clean(split_config)
    except SplitConfigError as exc:
        raise ValidationError(str(exc)) from None


def clean_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        try:
            seed = int(str(seed).strip())
        except ValueError:
            raise ValidationError(_("The seed must be a whole number, not %(seed)r.") % {"seed": seed}) from None
    if not 0 <= seed <= SEED_MAX:
        raise ValidationError(_("The seed must be between 0 and %(seed_max)s.") % {"seed_max": SEED_MAX})
    return seed


# --- create ----------------------------------------------------------------------------------------


def _same_inputs(release: DatasetRelease, **inputs) -> bool:
    return all(getattr(release, name) == value for name, value in inputs.items())


def release_create(
    *,
    project: Project,
    by,
    version: str,
    formats,
    filters: dict | None = None,
    split_config: dict | None = None,
    seed: int = 0,
    test_style: bool = False,
    enqueue: bool = True,
) -> DatasetRelease:
    """A new release (admins), queued for the worker's `releases.build` job once this transaction commits.

    The same request sent twice (a double click) while the first is still queued or building returns
    that release instead of a second one. `enqueue=False` records the job without sending it to the
    worker, for a caller that runs it in-process (`releases.tasks.release_build_job`).
    """
    if not can(by, Action.ADMINISTER, project):
        raise PermissionDenied(_("Only project admins cut releases."))
    errors: dict[str, list[str]] = {}
    cleaned: dict = {}
    for name, check in (
        ("version", lambda: clean_version(version)),
        ("formats", lambda: clean_formats(formats)),
        ("filters", lambda: clean_filters(filters, project=project)),
        ("split_config", lambda: clean_split_config(split_config)),
        ("seed", lambda: clean_seed(seed)),
    ):
        try:
            cleaned[name] = check()
        except ValidationError as exc:
            errors[name] = exc.messages
    if errors:
        if "version" in cleaned:
            # Say now that the label is taken too, rather than after the other inputs are fixed.
            existing = DatasetRelease.objects.filter(project=project, version=cleaned["version"]).first()
            if existing is not None:
                errors["version"] = [_version_taken(existing)]
        raise ValidationError(errors)
    cleaned["test_style"] = bool(test_style)
    if cleaned["filters"].get("lmms_eval"):
        lmms_errors = lmms_eval_refusals(formats=cleaned["formats"], test_style=cleaned["test_style"])
        if lmms_errors:
            raise ValidationError({"filters": lmms_errors})

    with transaction.atomic():
        # One creator at a time per project: the version check and the insert see each other.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        existing = DatasetRelease.objects.filter(project=project, version=cleaned["version"]).first()
        if existing is not None:
            if existing.status in _ACTIVE and existing.created_by_id == by.pk and _same_inputs(existing, **cleaned):
                return existing  # the same request again: the release already being built
            raise ValidationError({"version": [_version_taken(existing)]})
        matched = release_match_counts(project=project, filters=cleaned["filters"])
        if not matched.total:
            raise ValidationError(
                {
                    "filters": [
                        f"No item matches these filters ({_describe_filters(cleaned['filters'])}); "
                        "widen them, or accept items in review first."
                    ]
                }
            )
        if project.audit_gate == AuditGate.REFUSE:
            mcq_ids = matching_items(project=project, kind="mcq", filters=cleaned["filters"]).values_list(
                "pk", flat=True
            )
            gate = release_gate(project=project, mcq_ids=mcq_ids)
            if gate.refuses:
                raise ValidationError(
                    {
                        "audit": [
                            *gate.messages(),
                            _("Fix the items on the audit page, or a project admin can turn the gate to warn."),
                        ]
                    }
                )
        release = DatasetRelease.objects.create(project=project, created_by=by, **cleaned)
        release.storage_prefix = f"releases/{project.slug}/{release.version}/"
        params = {"release_id": release.pk}
        if not enqueue:
            release.job = BackgroundJob.objects.create(
                project=project,
                kind=BUILD_TASK,
                target_type=release._meta.label_lower,
                target_id=release.pk,
                params=params,
                created_by=by,
            )
        else:
            try:
                release.job = job_create(project=project, kind=BUILD_TASK, target=release, params=params, user=by)
            except JobAlreadyRunning as exc:  # cannot happen for a new row; keep the job it names
                release.job = exc.job
        release.save(update_fields=["storage_prefix", "job"])
    logger.info(
        "release %s of %s created by %s: %s; %s",
        release.version,
        project.slug,
        by,
        cleaned["formats"],
        matched.describe(),
    )
    return release


def _version_taken(existing: DatasetRelease) -> str:
    who = existing.created_by.get_username() if existing.created_by else "someone"
    when = timezone.localtime(existing.created_at).strftime("%Y-%m-%d %H:%M")
    if existing.status == ReleaseStatus.DELETED:
        return (
            f"Version {existing.version} was used by a release that has been deleted; a label is never reused, "
            "so a download always means one thing. Choose another label."
        )
    return (
        f"This project already has a release {existing.version} ({existing.get_status_display().lower()}, "
        f"created by {who} on {when}); releases never change, so choose another label, e.g. "
        f"{existing.version}.1."
    )


def _describe_filters(filters: dict) -> str:
    parts = [f"status {' or '.join(filters.get('statuses', ['accepted']))}"]
    if filters.get("categories"):
        parts.append(f"categories {', '.join(filters['categories'])}")
    if filters.get("video_ids"):
        parts.append(f"{len(filters['video_ids'])} chosen videos")
    if filters.get("accepted_from"):
        parts.append(f"accepted from {filters['accepted_from']}")
    if filters.get("accepted_to"):
        parts.append(f"accepted up to {filters['accepted_to']}")
    return "; ".join(parts)


# --- delete ------------------------------------------------------------------------------------------


def release_delete(*, release: DatasetRelease, by) -> DatasetRelease:
    """Mark a release deleted and remove its stored files (admins). The row keeps who and when."""
    project = release.project
    if not can(by, Action.ADMINISTER, project):
        raise PermissionDenied(_("Only project admins delete releases."))
    with transaction.atomic():
        release = DatasetRelease.objects.select_for_update().get(pk=release.pk)
        if release.status == ReleaseStatus.DELETED:
            raise ValidationError(_("This release is already deleted."))
        if release.status == ReleaseStatus.BUILDING:
            # The worker is writing its files now; deleting under it would leave half a release behind.
            raise ValidationError(_("This release is being built; delete it once the build has finished or failed."))
        was = release.status
        release.status = ReleaseStatus.DELETED
        release.deleted_by = by
        release.deleted_at = timezone.now()
        release.save(update_fields=["status", "deleted_by", "deleted_at"])
        if release.job_id and was == ReleaseStatus.QUEUED:
            BackgroundJob.objects.filter(pk=release.job_id, status=JobStatus.QUEUED).update(
                status=JobStatus.CANCELLED, finished_at=release.deleted_at, message="The release was deleted."
            )
        transaction.on_commit(lambda: release_files_remove(release=release))
    release.project = project
    logger.warning(
        "release %s of %s deleted by %s (was %s, %d files)",
        release.version,
        project.slug,
        by,
        was,
        len(release.files or []),
    )
    return release


def release_files_remove(*, release: DatasetRelease, storage=default_storage) -> int:
    """Remove every stored file of the release: its listed files, the archive, and anything else under
    its folder (a failed build may have left files that were never listed). Returns how many."""
    removed = 0
    names = set()
    prefix = release.storage_prefix
    if prefix:
        names |= {posixpath.join(prefix, f["path"]) for f in release.files or [] if f.get("path")}
        names |= set(_walk(storage, prefix.rstrip("/")))
    if release.archive:
        names.add(release.archive.name)
    for name in sorted(names):
        try:
            if storage.exists(name):
                storage.delete(name)
                removed += 1
        except OSError:
            logger.exception("could not remove %s of release %s", name, release.pk)
    return removed


def _walk(storage, folder: str):
    try:
        dirs, files = storage.listdir(folder)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return
    for name in files:
        yield posixpath.join(folder, name)
    for name in dirs:
        yield from _walk(storage, posixpath.join(folder, name))
