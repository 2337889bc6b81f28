"""The review-event log moves to the items' app with their life cycle (annotator.lifecycle).

State only: the table stays `reviewer_reviewevent`, with its rows, indexes and its append-only
trigger (reviewer 0002). The review app forgets the model in its 0005, after this one.
The content type follows, so permissions granted on the log keep pointing at it.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_move(app_from, app_to):
    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        if not ContentType.objects.filter(app_label=app_to, model="reviewevent").exists():
            ContentType.objects.filter(app_label=app_from, model="reviewevent").update(app_label=app_to)

    return move


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0003_mcq_category_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("projects", "0003_readable_constraint_messages"),
        # The table was created there; it must exist before this app owns it.
        ("reviewer", "0004_dashboard_snapshot"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ReviewEvent",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("item_kind", models.CharField(choices=[("qa_chain", "QA chain"), ("chain_pair", "Relations of a chain pair"), ("mcq", "MCQ")], max_length=20)),
                        ("from_status", models.CharField(blank=True, choices=[("draft", "Machine draft"), ("annotating", "Annotating"), ("submitted", "Submitted"), ("scored", "Scored"), ("examining", "Examining"), ("flagged", "Flagged"), ("revising", "Revising"), ("accepted", "Accepted")], max_length=20)),
                        ("to_status", models.CharField(choices=[("draft", "Machine draft"), ("annotating", "Annotating"), ("submitted", "Submitted"), ("scored", "Scored"), ("examining", "Examining"), ("flagged", "Flagged"), ("revising", "Revising"), ("accepted", "Accepted")], max_length=20)),
                        ("reasons", models.JSONField(blank=True, default=list)),
                        ("comment", models.TextField(blank=True)),
                        ("item_version", models.PositiveIntegerField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("actor", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL)),
                        ("chain_pair", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotator.chainpair")),
                        ("mcq", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotator.mcq")),
                        ("project", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="review_events", to="projects.project")),
                        ("qa_chain", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotator.qachain")),
                    ],
                    options={
                        "db_table": "reviewer_reviewevent",
                        "ordering": ["created_at", "id"],
                        "indexes": [
                            models.Index(fields=["project", "created_at"], name="reviewer_re_project_eb81ab_idx"),
                            models.Index(fields=["actor", "created_at"], name="reviewer_re_actor_i_31ca77_idx"),
                        ],
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(
                                    models.Q(("chain_pair__isnull", True), ("item_kind", "qa_chain"), ("mcq__isnull", True), ("qa_chain__isnull", False)),
                                    models.Q(("chain_pair__isnull", False), ("item_kind", "chain_pair"), ("mcq__isnull", True), ("qa_chain__isnull", True)),
                                    models.Q(("chain_pair__isnull", True), ("item_kind", "mcq"), ("mcq__isnull", False), ("qa_chain__isnull", True)),
                                    _connector="OR",
                                ),
                                name="event_exactly_one_item",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_move("reviewer", "annotator"), content_type_move("annotator", "reviewer")),
    ]
