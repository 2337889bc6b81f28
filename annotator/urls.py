"""Annotation workspace and machine drafts. Each editor adds its own block of paths below."""

from django.urls import path  # noqa: F401 - used by the blocks below

app_name = "annotator"

urlpatterns: list = []

# --- drafts ---

# --- chains and relations ---

# --- MCQs and unusable videos ---
