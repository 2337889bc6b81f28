"""The review-event log now belongs to annotator (its 0004): forget the model here, keep the table."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0004_reviewevent"),
        ("reviewer", "0004_dashboard_snapshot"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ReviewEvent")],
            database_operations=[],
        ),
    ]
