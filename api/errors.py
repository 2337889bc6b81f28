def exception_handler(exc, context):
    from rest_framework.views import exception_handler as drf_handler

    return drf_handler(exc, context)
