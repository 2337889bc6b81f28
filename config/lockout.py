"""What a person locked out of logging in sees (django-axes calls this on a locked-out attempt).

The API answers in its one error shape; the browser gets a page that says what happened and what
to do. An administrator unlocks from the admin (Axes → Access attempts) or with
`manage.py axes_reset_username <username>` / `axes_reset_ip <address>`.
"""

from axes.backends import AxesStandaloneBackend
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


class LoginLockoutBackend(AxesStandaloneBackend):
    """django-axes' lockout check for logins that come with a request (the login page, the token API).

    Server-side callers of `authenticate()` without a request (a shell, the test client's `login()`)
    have no client to lock out; axes would refuse them outright, so they pass on to the next backend.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
