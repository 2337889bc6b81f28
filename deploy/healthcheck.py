"""Container health probe: exits 0 when gunicorn in this container answers GET /healthz with 200.

Used by the Dockerfile HEALTHCHECK and by docker-compose.yml for the web service. Standard library
only and no Django import, so a probe costs milliseconds.
"""

import http.client
import os
import sys


def probe_host() -> str:
    """A Host header Django accepts: it answers 400 to hosts outside DJANGO_ALLOWED_HOSTS."""
    for entry in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(","):
        host = entry.strip()
        if host and host != "*":
            # ".example.com" allows example.com and its subdomains.
            return host.lstrip(".")
    return "localhost"


def main() -> int:
    port = int(os.environ.get("PORT", "8000"))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=8)
    try:
        # As if it came through the TLS front: an HTTPS-only redirect would otherwise answer 301.
        connection.request("GET", "/healthz", headers={"Host": probe_host(), "X-Forwarded-Proto": "https"})
        response = connection.getresponse()
        body = response.read(200)
    except OSError as exc:
        print(f"healthcheck: no answer from 127.0.0.1:{port}: {exc}", file=sys.stderr)
        return 1
    finally:
        connection.close()
    if response.status != 200:
        print(f"healthcheck: GET /healthz answered {response.status}: {body!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
