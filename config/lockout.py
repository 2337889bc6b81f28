"""What a person locked out of logging in sees (django-axes calls this on a locked-out attempt).

The API answers in its one error shape; the browser gets a page that says what happened and what
to do. An administrator unlocks from the admin (Axes → Access attempts) or with
`manage.py axes_reset_username <username>` / `axes_reset_ip <address>`.
"""

from django.conf import settings
from django.shortcuts import render

from config.request_errors import is_api_path


def lockout_message() -> str:
    minutes = settings.VIDQA_LOGIN_COOLOFF_MINUTES
    wait = f"Try again in {minutes} minutes" if minutes else "Logging in stays blocked"
    return (
        "Too many failed login attempts for this account or from this address. "
        f"{wait}, or ask an administrator to unlock it."
    )


def lockout_response(request, original_response=None, credentials=None, *args, **kwargs):
    from api.errors import error_body

    status = settings.AXES_HTTP_RESPONSE_CODE
    if is_api_path(request):
        from django.http import JsonResponse

        return JsonResponse(error_body(code="locked_out", message=lockout_message()), status=status)
    return render(request, "registration/locked_out.html", {"message": lockout_message()}, status=status)
