"""The client's address, as far as this server can trust it.

`X-Forwarded-For` is written by whoever sends the request; only the entries appended by our own
proxies mean anything. With `VIDQA_TRUSTED_PROXY_COUNT` = N proxies in front (nginx: 1), the client
is the N-th address from the right; with none (the default) it is the connection's REMOTE_ADDR and
the header is ignored. Login lockouts and throttles key on this, so a client cannot pick a fresh
address per guess.
"""

from django.conf import settings


def client_ip(request) -> str:
    remote = request.META.get("REMOTE_ADDR", "") or ""
    count = settings.VIDQA_TRUSTED_PROXY_COUNT
    if count <= 0:
        return remote
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
    if len(forwarded) < count:
        # Fewer hops than proxies: the request did not come through them all; trust only the socket.
        return remote
    return forwarded[-count]
