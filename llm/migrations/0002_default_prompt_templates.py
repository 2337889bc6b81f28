from django.db import migrations


def create_defaults(apps, schema_editor):
    from llm.prompts import ensure_default_templates

    ensure_default_templates(template_model=apps.get_model("llm", "PromptTemplate"))


class Migration(migrations.Migration):
    """Global version-1 prompt templates; only inserts data, and only keys that have none yet."""

    dependencies = [("llm", "0001_initial")]

    operations = [migrations.RunPython(create_defaults, migrations.RunPython.noop)]
