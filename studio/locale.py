"""The interface's language: the person's saved choice, else the browser's, else English.

The chosen language travels in Django's language cookie (set by `language_set`, or at login from
the person's saved preference); LocaleMiddleware reads the cookie, then Accept-Language. The REST
API always answers in English, so scripts and the schema see the same words whatever the caller's
locale.
"""

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.middleware.locale import LocaleMiddleware
from django.utils import translation
from django.views.decorators.http import require_POST
from django.views.i18n import set_language

from projects.preferences import language_supported, preference_language, preference_language_set

API_PREFIX = "/api/"


class InterfaceLocaleMiddleware(LocaleMiddleware):
    def process_request(self, request):
        if request.path_info.startswith(API_PREFIX):
            translation.activate(settings.LANGUAGE_CODE)
            request.LANGUAGE_CODE = settings.LANGUAGE_CODE
            return
        super().process_request(request)

    def process_response(self, request, response):
        if request.path_info.startswith(API_PREFIX):
            # The API's answers do not vary with the caller's language: no Vary or Content-Language.
            return response
        response = super().process_response(request, response)
        language = getattr(request, "_language_at_login", "")
        if language:
            _set_language_cookie(response, language)
        return response


def _set_language_cookie(response, language: str) -> None:
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )


@receiver(user_logged_in, dispatch_uid="studio.locale.language_at_login")
def _language_at_login(sender, request, user, **kwargs):
    # The login answer carries the person's saved language in the cookie; the page they land on
    # is then in their language on whichever browser they use.
    if request is None:
        return
    language = preference_language(user=user)
    if language:
        request._language_at_login = language


@require_POST
def language_set(request):
    """Django's set_language (cookie and redirect to `next`), and for a signed-in person, remembered."""
    response = set_language(request)
    language = request.POST.get("language", "")
    if request.user.is_authenticated and language_supported(language):
        preference_language_set(user=request.user, language=language)
    return response
