from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from backups.services import BackupRefused, backup_restore


class Command(BaseCommand):
    help = (
        "Restore a folder written by `manage.py backup` into an empty database and media folder (it runs "
        "`migrate` first), then check every table's row count and every media file's sha256."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path, help="The backup folder.")

    def handle(self, *args, folder: Path, **options):
        try:
            result = backup_restore(folder=folder)
        except BackupRefused as exc:
            raise CommandError(str(exc)) from exc
        rows = sum(result.counts.values())
        self.stdout.write(self.style.SUCCESS(f"Restored {folder}"))
        self.stdout.write(f"  {rows} rows in {len(result.counts)} tables, every count as in the backup")
        self.stdout.write(f"  {result.media_restored} media files, every checksum as in the backup")
