from django.apps import AppConfig


class ReviewerConfig(AppConfig):
    name = "reviewer"
