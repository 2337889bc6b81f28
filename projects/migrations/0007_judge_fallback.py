from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0006_merge_user_preference"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="judge_fallback",
            field=models.CharField(
                choices=[
                    ("examine", "On to examining, marked “not scored” with the reason"),
                    ("author", "Back to the author, with the reason"),
                    ("wait", "Wait in “submitted” for an admin"),
                ],
                default="examine",
                max_length=10,
                verbose_name="when the judge cannot score an item",
            ),
        ),
    ]
