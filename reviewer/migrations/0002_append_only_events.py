"""The review-event log is append-only in the database too, not only in the model's save()."""

from django.db import migrations

POSTGRES = """
CREATE OR REPLACE FUNCTION vidqa_events_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'review events are append-only' USING ERRCODE = 'check_violation';
END $$ LANGUAGE plpgsql;
CREATE TRIGGER reviewevent_append_only BEFORE UPDATE ON reviewer_reviewevent
    FOR EACH ROW EXECUTE FUNCTION vidqa_events_append_only();
"""
SQLITE = """
CREATE TRIGGER reviewevent_append_only BEFORE UPDATE ON reviewer_reviewevent
BEGIN SELECT RAISE(ABORT, 'review events are append-only'); END;
"""


def create(apps, schema_editor):
    schema_editor.execute(POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP TRIGGER IF EXISTS reviewevent_append_only ON reviewer_reviewevent;"
                              " DROP FUNCTION IF EXISTS vidqa_events_append_only;")
    else:
        schema_editor.execute("DROP TRIGGER IF EXISTS reviewevent_append_only")


class Migration(migrations.Migration):
    dependencies = [("reviewer", "0001_initial")]
    operations = [migrations.RunPython(create, drop)]
