"""Queues: a lease long enough for a working session (4 h), a heartbeat per queue, auto-advance as a choice.

Existing queues keep the lease length their admins chose, except those still on the old 30-minute
default, which move to the new one.
"""

from django.db import migrations, models


def lengthen_default_leases(apps, schema_editor):
    apps.get_model("reviewer", "ReviewQueue").objects.filter(lease_seconds=30 * 60).update(lease_seconds=4 * 60 * 60)


class Migration(migrations.Migration):
    dependencies = [
        ("reviewer", "0005_reviewevent_to_annotator"),
    ]

    operations = [
        migrations.AlterField(
            model_name="reviewqueue",
            name="lease_seconds",
            field=models.PositiveIntegerField(default=14400),
        ),
        migrations.AddField(
            model_name="reviewqueue",
            name="heartbeat_seconds",
            field=models.PositiveIntegerField(default=60),
        ),
        migrations.AddField(
            model_name="reviewqueue",
            name="auto_advance",
            field=models.BooleanField(default=False),
        ),
        migrations.AddConstraint(
            model_name="reviewqueue",
            constraint=models.CheckConstraint(
                condition=models.Q(heartbeat_seconds__gte=10), name="queue_heartbeat_minimum"
            ),
        ),
        migrations.RunPython(lengthen_default_leases, migrations.RunPython.noop),
    ]
