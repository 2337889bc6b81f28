"""Cut, list, inspect and delete dataset releases from the shell.

    manage.py release create <project> <version> --format longvideobench [--format generic] \\
        [--status accepted] [--category E2O] [--video bench_0001] [--accepted-from 2025-01-01] \\
        [--accepted-to 2025-06-30] [--no-media] [--clip-files] [--lmms-eval] \\
        [--ratios train=0.8,test=0.2 | --counts test=50] [--no-stratify] [--seed 0] [--test-style] \\
        --by <admin username> [--sync]
    manage.py release list <project>
    manage.py release show <project> <version> [--json]
    manage.py release delete <project> <version> --by <admin username>

`create` checks everything the browser form checks (same service) and queues the build for the
worker; with `--sync` it builds here, with a progress bar, and exits non-zero when the build fails.
Errors go to stderr with a non-zero exit.
"""

from __future__ import annotations

import json
import sys

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.template.defaultfilters import filesizeformat

from projects.models import Project
from releases.models import ReleaseFormat, ReleaseStatus
from releases.selectors import release_by_version, release_list, release_summary, release_total_bytes
from releases.services import release_create, release_delete


def _project(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project with slug {slug!r}.")
    return project


def _user(username: str | None):
    if not username:
        raise CommandError("Say who does this with --by <username> (a project admin or a superuser).")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"No active user {username!r}.")
    return user


def _parts(text: str, option: str, number) -> dict:
    """`train=0.8,test=0.2` → {"train": 0.8, "test": 0.2}."""
    parts = {}
    for chunk in text.split(","):
        name, sep, value = chunk.partition("=")
        if not sep:
            raise CommandError(f"{option} takes split=number pairs separated by commas, e.g. train=0.8,test=0.2.")
        try:
            parts[name.strip()] = number(value.strip())
        except ValueError:
            raise CommandError(f"{option}: {value.strip()!r} is not a number.") from None
    return parts


def _refused(exc: ValidationError) -> CommandError:
    if hasattr(exc, "error_dict"):
        lines = [f"{field}: {message}" for field, messages in exc.message_dict.items() for message in messages]
    else:
        lines = exc.messages
    return CommandError("Refused:\n  " + "\n  ".join(lines))


class Command(BaseCommand):
    help = "Dataset releases: create (queued, or --sync in-process), list, show, delete."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True, metavar="{create,list,show,delete}")
        # Subparsers are built by Django's CommandParser, which turns parse errors into CommandError.
        kwargs = {"called_from_command_line": getattr(parser, "called_from_command_line", None)}

        create = sub.add_parser("create", help="Cut a new release", **kwargs)
        create.add_argument("project", help="Project slug")
        create.add_argument("version", help="A new version label, e.g. v1.0")
        create.add_argument(
            "--format",
            dest="formats",
            action="append",
            default=[],
            metavar="FORMAT",
            help=f"One of {', '.join(ReleaseFormat.values)}; repeat for several.",
        )
        create.add_argument(
            "--status", dest="statuses", action="append", default=[], help="Item status (default accepted)"
        )
        create.add_argument("--category", dest="categories", action="append", default=[], help="Category code or task")
        create.add_argument("--video", dest="videos", action="append", default=[], help="Video name or id")
        create.add_argument("--accepted-from", help="YYYY-MM-DD")
        create.add_argument("--accepted-to", help="YYYY-MM-DD")
        create.add_argument("--no-media", action="store_true", help="Annotations only, no video or clip files")
        create.add_argument("--clip-files", action="store_true", help="Also cut each released chain's clip (ffmpeg)")
        create.add_argument(
            "--lmms-eval", action="store_true", help="Also write lmms-eval tasks over the MCQ files (lmms_eval/)"
        )
        split = create.add_mutually_exclusive_group()
        split.add_argument("--ratios", help="Shares of the videos, e.g. train=0.8,test=0.2")
        split.add_argument("--counts", help="Numbers of videos, e.g. test=50")
        create.add_argument("--no-stratify", action="store_true", help="Do not stratify by category and duration")
        create.add_argument("--seed", default="0", help="Same seed and data, same bytes (default 0)")
        create.add_argument("--test-style", action="store_true", help="Withhold answers")
        create.add_argument("--by", help="Username of a project admin (or superuser)")
        create.add_argument("--sync", action="store_true", help="Build here with a progress bar instead of queuing")

        listing = sub.add_parser("list", help="The project's releases", **kwargs)
        listing.add_argument("project", help="Project slug")

        show = sub.add_parser("show", help="One release's manifest summary", **kwargs)
        show.add_argument("project", help="Project slug")
        show.add_argument("version")
        show.add_argument("--json", dest="as_json", action="store_true", help="The manifest as JSON")

        delete = sub.add_parser("delete", help="Delete a release's files (the record stays)", **kwargs)
        delete.add_argument("project", help="Project slug")
        delete.add_argument("version")
        delete.add_argument("--by", help="Username of a project admin (or superuser)")

    def handle(self, *args, action, **options):
        getattr(self, f"_{action}")(**options)

    # --- create ---------------------------------------------------------------------------------------

    def _create(self, *, project, version, by, sync, **options):
        project = _project(project)
        user = _user(by)
        filters = {
            "statuses": options["statuses"] or None,
            "categories": options["categories"],
            "video_ids": self._video_ids(project, options["videos"]),
            "accepted_from": options["accepted_from"],
            "accepted_to": options["accepted_to"],
            "include_media": not options["no_media"],
            "clip_files": options["clip_files"] or None,
            "lmms_eval": options["lmms_eval"] or None,
        }
        split_config = {}
        if options["ratios"]:
            split_config = {"ratios": _parts(options["ratios"], "--ratios", float)}
        elif options["counts"]:
            split_config = {"counts": _parts(options["counts"], "--counts", int)}
        if split_config and options["no_stratify"]:
            split_config["stratify"] = False
        try:
            release = release_create(
                project=project,
                by=user,
                version=version,
                formats=options["formats"],
                filters={k: v for k, v in filters.items() if v not in (None, [])},
                split_config=split_config,
                seed=options["seed"],
                test_style=options["test_style"],
                enqueue=not sync,
            )
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise _refused(exc) from exc
        if not sync:
            self.stdout.write(
                f"Release {release.version} is queued (job {release.job_id}); the worker builds it. "
                f"Follow it with: manage.py release show {project.slug} {release.version}"
            )
            return
        self._build_here(release)

    def _video_ids(self, project, tokens: list[str]) -> list[int]:
        ids = [int(t) for t in tokens if t.isdecimal()]
        names = [t for t in tokens if not t.isdecimal()]
        found = dict(project.videos.filter(name__in=names).values_list("name", "pk"))
        missing = [n for n in names if n not in found]
        if missing:
            raise CommandError(f"No video named {', '.join(missing)} in project {project.slug}.")
        return ids + list(found.values())

    def _build_here(self, release):
        from releases.tasks import release_build_job

        width = 30

        def progress(done: int, total: int, message: str) -> None:
            filled = int(width * done / total) if total else 0
            bar = "#" * filled + "." * (width - filled)
            sys.stderr.write(f"\r[{bar}] {done}/{total} {message[:50]:50}")
            sys.stderr.flush()

        release_build_job(job_id=release.job_id, on_progress=progress)
        sys.stderr.write("\n")
        release.refresh_from_db()
        release.job.refresh_from_db()
        if release.status != ReleaseStatus.READY:
            self._show_release(release, errors_to=self.stderr)
            raise CommandError(release.job.error or f"Release {release.version} is {release.status}.")
        self._show_release(release)

    # --- list, show, delete -----------------------------------------------------------------------------

    def _list(self, *, project, **options):
        project = _project(project)
        releases = list(release_list(project=project))
        if not releases:
            self.stdout.write(f"Project {project.slug} has no release yet.")
            return
        self.stdout.write(f"{'VERSION':<16} {'STATUS':<9} {'FORMATS':<28} {'VIDEOS':>6} {'ITEMS':>7}  CREATED")
        for release in releases:
            summary = release_summary(release)
            items = sum(summary["items"].values()) if summary["items"] else None
            who = release.created_by.get_username() if release.created_by else "-"
            self.stdout.write(
                f"{release.version:<16} {release.status:<9} {','.join(release.formats):<28} "
                f"{_n(summary['videos']):>6} {_n(items):>7}  {release.created_at:%Y-%m-%d %H:%M} by {who}"
            )

    def _show(self, *, project, version, as_json: bool = False, **options):
        project = _project(project)
        release = release_by_version(project=project, version=version)
        if release is None:
            raise CommandError(f"Project {project.slug} has no release {version!r}.")
        if as_json:
            self.stdout.write(_json_dumps(release.manifest or {}))
            return
        self._show_release(release)

    def _show_release(self, release, errors_to=None):
        out = self.stdout
        summary = release_summary(release)
        out.write(f"Release {release.version} of {release.project.slug}: {release.status}")
        out.write(f"  formats: {', '.join(release.formats)}{' (test-style)' if release.test_style else ''}")
        out.write(f"  filters: {_json_dumps(release.filters)}")
        out.write(
            f"  split:   {_json_dumps(release.split_config) if release.split_config else 'none'}; seed {release.seed}"
        )
        if release.job_id and release.status in (ReleaseStatus.QUEUED, ReleaseStatus.BUILDING):
            job = release.job
            out.write(f"  job {job.pk}: {job.status}, {job.progress_done}/{job.progress_total} {job.message}")
        if summary["videos"] is not None:
            items = ", ".join(f"{n} {label}" for label, n in summary["item_counts"]) or "no items"
            out.write(f"  videos: {summary['videos']}; {items}; QA pairs: {_n(summary['qa_pairs'])}")
            for split, counts in summary["per_split"].items():
                out.write(f"    {split:<8} {counts.get('videos', 0):>6} videos {counts.get('items', 0):>7} items")
            for taxonomy, counts in summary["categories"].items():
                out.write(f"  {taxonomy}: " + ", ".join(f"{code} {n}" for code, n in counts.items()))
            if summary["duration_groups"]:
                groups = ", ".join(f"{g}: {n}" for g, n in summary["duration_groups"].items())
                out.write(f"  duration groups (s): {groups}")
        if release.files:
            out.write(f"  files: {len(release.files)}, {filesizeformat(release_total_bytes(release))}")
        if release.validation_errors:
            target = errors_to or out
            target.write(f"  validation errors: {len(release.validation_errors)}")
            for error in release.validation_errors[:20]:
                where = " ".join(x for x in (error.get("file"), error.get("item")) if x)
                target.write(f"    {where}: {error.get('message', '')}")
        if release.status == ReleaseStatus.DELETED:
            who = release.deleted_by.get_username() if release.deleted_by else "someone"
            out.write(f"  deleted by {who} on {release.deleted_at:%Y-%m-%d %H:%M}")

    def _delete(self, *, project, version, by, **options):
        project = _project(project)
        user = _user(by)
        release = release_by_version(project=project, version=version)
        if release is None:
            raise CommandError(f"Project {project.slug} has no release {version!r}.")
        try:
            release_delete(release=release, by=user)
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise _refused(exc) from exc
        self.stdout.write(f"Release {release.version} deleted; its files are removed, the record stays.")


def _n(value) -> str:
    return "-" if value is None else str(value)


def _json_dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
