"""Download an http(s) URL a user gave us without letting it reach the server's own networks.

A manifest row may name any URL, so the address is checked before connecting: loopback, private,
link-local, multicast, reserved and unspecified addresses (IPv4, IPv6 and IPv4-mapped IPv6) are
refused unless they fall in `VIDQA_FETCH_ALLOWED_NETWORKS` or the host is in
`VIDQA_FETCH_ALLOWED_HOSTS` (a lab's own storage). The host is resolved once and the connection goes
to the very address that was checked, so a second DNS answer cannot swap in another one; redirects
are followed by hand, each target checked the same way.

Failures say "refused" or "could not fetch" and nothing more: which port answered, or how a
connection failed, would map the inside network for whoever wrote the manifest.
"""

import http.client
import ipaddress
import logging
import socket
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}
_CHUNK = 1024 * 1024

_NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchError(Exception):
    """The URL was not downloaded; the message is for the person who gave it."""


class FetchRefused(FetchError):
    """The URL points at an address this server does not fetch from."""


class FetchTooLarge(FetchError):
    """The body is larger than the caller allows."""


def _allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n.strip(), strict=False) for n in settings.VIDQA_FETCH_ALLOWED_NETWORKS if n.strip()]


def _allowed_hosts() -> set[str]:
    return {h.strip().lower().rstrip(".") for h in settings.VIDQA_FETCH_ALLOWED_HOSTS if h.strip()}


def address_allowed(ip: IPAddress, *, host: str = "") -> bool:
    """May the server connect to `ip` (resolved from `host`) on a user's behalf?"""
    if host.lower().rstrip(".") in _allowed_hosts():
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        # IPv6 forms that carry an IPv4 address reach that address: judge it instead.
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
        elif ip.sixtofour is not None:
            ip = ip.sixtofour
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if any(ip.version == net.version and ip in net for net in _allowed_networks()):
        return True
    return not (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


def _resolve(host: str, port: int, url: str) -> IPAddress:
    """The first address of `host` that may be fetched; refused when none may."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        logger.info("fetch %s: cannot resolve %s: %s", url, host, exc)
        raise FetchError(f"{url}: could not fetch (the host name does not resolve).") from exc
    addresses = [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]
    for ip in addresses:
        if address_allowed(ip, host=host):
            return ip
    raise FetchRefused(
        f"{url}: refused; it points at a local or private network address this server does not fetch from."
    )


def _connection(scheme: str, host: str, port: int, ip: IPAddress, timeout: float) -> http.client.HTTPConnection:
    cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    conn = cls(host, port, timeout=timeout)  # Host header and TLS name stay the URL's host

    def pinned(address, timeout=None, source_address=None, *args, **kwargs):
        # Connect to the address that was checked, never to a fresh DNS answer.
        return socket.create_connection((str(ip), address[1]), timeout, source_address)

    conn._create_connection = pinned
    return conn


def fetch_to_file(
    url: str, dest: Path, *, max_bytes: int, timeout: float = 60, too_large: Callable[[str], str] | None = None
) -> None:
    """Write the body at `url` to `dest`. Raises FetchRefused, FetchTooLarge or FetchError."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        parts = urllib.parse.urlsplit(current)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise FetchRefused(f"{url}: refused; only http(s) URLs with a host name are fetched.")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError as exc:
            raise FetchRefused(f"{url}: refused; the port is not valid.") from exc
        ip = _resolve(parts.hostname, port, url)
        conn = _connection(scheme, parts.hostname, port, ip, timeout)
        target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        try:
            conn.request("GET", target, headers={"User-Agent": "VidQA-Studio", "Accept-Encoding": "identity"})
            response = conn.getresponse()
            if response.status in _REDIRECTS:
                location = response.getheader("Location")
                conn.close()
                if not location:
                    raise FetchError(f"{url}: could not fetch (a redirect without a target).")
                current = urllib.parse.urljoin(current, location)
                continue
            if response.status != 200:
                raise FetchError(f"{url}: could not fetch (the server answered HTTP {response.status}).")
            _copy(response, dest, url=url, max_bytes=max_bytes, too_large=too_large)
            return
        except FetchError:
            raise
        except (OSError, http.client.HTTPException) as exc:
            # The detail (refused, reset, timed out, TLS) stays in the log: it would tell ports apart.
            logger.info("fetch %s: %s", current, exc)
            raise FetchError(f"{url}: could not fetch.") from exc
        finally:
            conn.close()
    raise FetchError(f"{url}: could not fetch (more than {MAX_REDIRECTS} redirects).")


def _copy(response, dest: Path, *, url: str, max_bytes: int, too_large) -> None:
    copied = 0
    with open(dest, "wb") as out:
        while chunk := response.read(_CHUNK):
            copied += len(chunk)
            if copied > max_bytes:
                raise FetchTooLarge(too_large(url) if too_large else f"{url}: larger than {max_bytes} bytes.")
            out.write(chunk)
