"""Liveness probe for `make run`, docker-compose and load balancers: the app answers and reaches its database."""

import logging

from django.db import DatabaseError, connection
from django.http import HttpResponse
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)


@require_safe
def health(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        logger.exception("health check: the database did not answer")
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")
