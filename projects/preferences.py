"""A person's interface preferences (today: the language), kept across browsers and logins."""

from django.conf import settings

from .models import UserPreference


def language_supported(language: str) -> bool:
    return language in dict(settings.LANGUAGES)


def preference_language_set(*, user, language: str) -> UserPreference:
    """Remember `language` for `user`; an unknown code is ignored (the interface keeps its default)."""
    if not language_supported(language):
        raise ValueError(f"unsupported language {language!r}")
    preference, _ = UserPreference.objects.update_or_create(user=user, defaults={"language": language})
    return preference


def preference_language(*, user) -> str:
    """The language `user` chose, or "" when they never chose one (the browser's choice then applies)."""
    language = UserPreference.objects.filter(user=user).values_list("language", flat=True).first() or ""
    return language if language_supported(language) else ""
