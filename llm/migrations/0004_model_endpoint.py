import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0003_prompt_nulls_not_distinct"),
        ("projects", "0003_readable_constraint_messages"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ModelEndpoint",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "base_url",
                    models.URLField(
                        blank=True,
                        help_text="e.g. https://api.openai.com/v1 or http://vllm:8000/v1",
                        max_length=300,
                        verbose_name="base URL",
                    ),
                ),
                ("api_key", models.CharField(blank=True, max_length=500, verbose_name="API key")),
                ("drafts_model", models.CharField(blank=True, max_length=120, verbose_name="drafts model")),
                ("vision_model", models.CharField(blank=True, max_length=120, verbose_name="vision model")),
                ("judge_model", models.CharField(blank=True, max_length=120, verbose_name="judge model")),
                (
                    "transcription_model",
                    models.CharField(blank=True, max_length=120, verbose_name="transcription model"),
                ),
                ("probes_model", models.CharField(blank=True, max_length=120, verbose_name="probes model")),
                ("prices", models.JSONField(blank=True, default=dict)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "project",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="model_endpoint",
                        to="projects.project",
                    ),
                ),
                (
                    "updated_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
    ]
