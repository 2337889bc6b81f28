from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from backups.services import BackupRefused, backup_create


class Command(BaseCommand):
    help = (
        "Back up the database (one consistent snapshot, as fixtures) and the media files with their sha256 "
        "into a new folder; `restore` reads it back into an empty database."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path, help="A new or empty folder to write the backup into.")
        parser.add_argument(
            "--no-media",
            action="store_true",
            help="List the media files with their checksums but do not copy them (back them up by other means).",
        )

    def handle(self, *args, folder: Path, no_media: bool, **options):
        try:
            result = backup_create(folder=folder, media=not no_media)
        except BackupRefused as exc:
            raise CommandError(str(exc)) from exc
        rows = sum(result.counts.values())
        size = sum(f.size for f in result.media)
        media = "copied" if result.media_copied else "listed, not copied"
        self.stdout.write(self.style.SUCCESS(f"Backed up into {result.folder}"))
        self.stdout.write(f"  {rows} rows in {len(result.counts)} tables")
        self.stdout.write(f"  {len(result.media)} media files, {size / 1e6:.1f} MB ({media})")
