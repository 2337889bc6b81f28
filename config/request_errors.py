"""Requests the server will not take get a 4xx, never a 500 with a traceback; /api/ paths answer JSON.

Django raises when a body is too big (`DATA_UPLOAD_MAX_MEMORY_SIZE`), has too many fields
(`DATA_UPLOAD_MAX_NUMBER_FIELDS`) or is malformed multipart. Those are the client's mistakes: they
become 413 or 400, in the API's error shape under /api/ and as a plain page elsewhere. The error
handlers (`handler400`… in config/urls.py) answer /api/ paths in that shape too, so the API never
answers HTML.
"""

import logging

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string
from django.views import defaults

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
_BODY_ERRORS = (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent, MultiPartParserError)
_FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


def is_api_path(request) -> bool:
    return request.path_info.startswith(API_PREFIX)


def _megabytes(n: int) -> str:
    return f"{n / 1024 / 1024:g} MB"


def exception_status(exc: BaseException) -> tuple[int, str, str] | None:
    """(status, code, message) for a request the client got wrong; None for anything else."""
    if isinstance(exc, RequestDataTooBig):
        limit = _megabytes(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return 413, "request_too_large", f"The request body is larger than {limit} (files excepted)."
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return 400, "too_many_fields", f"The request has more than {limit} fields."
    if isinstance(exc, TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return 400, "too_many_files", f"The request has more than {limit} files."
    if isinstance(exc, MultiPartParserError):
        return 400, "malformed_request", "The multipart body could not be read."
    if isinstance(exc, SuspiciousOperation | BadRequest):
        return 400, "bad_request", "The request is not valid."
    return None


def error_response(request, status: int, code: str, message: str) -> HttpResponse:
    if is_api_path(request):
        from api.errors import error_body

        return JsonResponse(error_body(code=code, message=message), status=status)
    body = render_to_string("request_error.html", {"status": status, "message": message})
    return HttpResponse(body, status=status)


def _refuse(request, exc: BaseException) -> HttpResponse | None:
    mapped = exception_status(exc)
    if mapped is None:
        return None
    status, code, message = mapped
    # The client's mistake, not ours: a warning with no traceback.
    logger.warning("%s %s: %s (%s)", request.method, request.path, message, type(exc).__name__)
    return error_response(request, status, code, message)


def _csrf_reads_form(request, view_func) -> bool:
    """Would CsrfViewMiddleware read `request.POST` for its token? Then it is read here first."""
    if getattr(view_func, "csrf_exempt", False) or getattr(request, "_dont_enforce_csrf_checks", False):
        return False
    return settings.CSRF_USE_SESSIONS or settings.CSRF_COOKIE_NAME in request.COOKIES


class RequestLimitsMiddleware:
    """Answers 413 for an oversized body before reading it, and 400/413 for unreadable browser forms.

    Sits before CsrfViewMiddleware: that one reads `request.POST` of every browser form in its
    process_view, where an exception would escape every handler but the 500 one.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error_response(request, 400, "bad_request", "The Content-Length header is not a number.")
        # Multipart file parts stream to disk and do not count; every other body is read into memory.
        multipart = request.content_type == "multipart/form-data"
        if limit is not None and length > limit and not multipart:
            return _refuse(request, RequestDataTooBig())
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.method != "POST" or is_api_path(request) or request.content_type not in _FORM_TYPES:
            return None  # the API parses its own bodies, after authentication and permissions
        if not _csrf_reads_form(request, view_func):
            return None  # the view reads its body itself (process_exception answers), or never
        try:
            request.POST  # noqa: B018 - parsed here so a bad body is answered, not raised through CSRF
        except Exception as exc:  # noqa: BLE001 - only the client's mistakes are answered; the rest re-raises
            response = _refuse(request, exc)
            if response is None:
                raise
            request._mark_post_parse_error()
            return response
        return None

    def process_exception(self, request, exception):
        # Only an unreadable body; a view's own SuspiciousOperation keeps Django's handling (handler400).
        if isinstance(exception, _BODY_ERRORS):
            return _refuse(request, exception)
        return None


# Error handlers (config/urls.py): the API's shape under /api/, Django's pages elsewhere.


def bad_request(request, exception=None):
    mapped = exception_status(exception) if exception is not None else None
    status, code, message = mapped or (400, "bad_request", "The request is not valid.")
    return error_response(request, status, code, message)


def permission_denied(request, exception=None):
    if is_api_path(request):
        return error_response(request, 403, "permission_denied", "You do not have permission to do this.")
    return defaults.permission_denied(request, exception)


def page_not_found(request, exception=None):
    if is_api_path(request):
        return error_response(request, 404, "not_found", "No such endpoint.")
    return defaults.page_not_found(request, exception)


def server_error(request):
    if is_api_path(request):
        return error_response(
            request, 500, "server_error", "Something went wrong on our side; the error has been logged."
        )
    return defaults.server_error(request)
