"""A limit on simultaneous requests per model endpoint, across every process that calls it.

With Redis (REDIS_URL set) the slots are a lease semaphore: a sorted set of holder tokens scored
by their expiry time, so a worker that dies holding a slot frees it when its lease runs out
instead of leaking it forever. Waiters block on a wake-up list that every release pushes to, so a
freed slot is taken at once rather than at the next poll. Without Redis (a single-process
development run) a process-local semaphore does the same job.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

log = logging.getLogger(__name__)


class SlotTimeout(Exception):
    """No slot became free within the wait limit."""


# KEYS[1] holders (sorted set: token → lease expiry in ms), ARGV: token, limit, lease_ms.
# Redis's own clock decides expiry, so hosts with skewed clocks still agree.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  return 1
end
return 0
"""

# KEYS[1] holders, KEYS[2] wake-up list, ARGV: token, limit.
_RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], '1')
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
redis.call('EXPIRE', KEYS[2], 60)
return 1
"""

# How long a waiter sleeps on the wake-up list before checking for expired leases itself.
_WAKE_POLL_S = 0.2

_local_lock = threading.Lock()
_local_semaphores: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_redis_lock = threading.Lock()
_redis_clients: dict[str, object] = {}


def _slot_key(endpoint: str) -> str:
    return "vidqa:llm:slots:" + hashlib.sha256(endpoint.encode()).hexdigest()[:20]


def _redis(url: str):
    import redis

    with _redis_lock:
        client = _redis_clients.get(url)
        if client is None:
            client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
            _redis_clients[url] = client
        return client


@contextmanager
def endpoint_slot(endpoint: str, *, limit: int, wait_s: float, lease_s: float) -> Iterator[None]:
    """Hold one of `limit` slots for `endpoint` for the duration of the block."""
    if limit <= 0:
        yield  # 0 means "no limit"
        return
    url = getattr(settings, "REDIS_URL", "")
    if url:
        try:
            client = _redis(url)
            client.ping()
        except Exception as exc:  # noqa: BLE001 - any Redis failure: degrade, do not stop drafting
            log.warning("LLM slots: Redis at %s unusable (%s); limiting per process only", url, exc)
        else:
            with _redis_slot(client, endpoint, limit=limit, wait_s=wait_s, lease_s=lease_s):
                yield
            return
    with _local_slot(endpoint, limit=limit, wait_s=wait_s):
        yield


@contextmanager
def _local_slot(endpoint: str, *, limit: int, wait_s: float) -> Iterator[None]:
    with _local_lock:
        semaphore = _local_semaphores.setdefault((endpoint, limit), threading.BoundedSemaphore(limit))
    if not semaphore.acquire(timeout=wait_s):
        raise SlotTimeout(f"no free slot for {endpoint} within {wait_s:g} s (limit {limit} at once)")
    try:
        yield
    finally:
        semaphore.release()


@contextmanager
def _redis_slot(client, endpoint: str, *, limit: int, wait_s: float, lease_s: float) -> Iterator[None]:
    holders = _slot_key(endpoint)
    wake = holders + ":wake"
    token = uuid.uuid4().hex
    lease_ms = max(1000, int(lease_s * 1000))
    deadline = time.monotonic() + wait_s
    while not client.eval(_ACQUIRE, 1, holders, token, limit, lease_ms):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SlotTimeout(f"no free slot for {endpoint} within {wait_s:g} s (limit {limit} at once, shared)")
        client.blpop([wake], timeout=min(_WAKE_POLL_S, remaining))
    try:
        yield
    finally:
        try:
            client.eval(_RELEASE, 2, holders, wake, token, limit)
        except Exception as exc:  # noqa: BLE001 - the lease expires on its own
            log.warning("LLM slots: could not release a slot for %s (%s); its lease will expire", endpoint, exc)


def slots_in_use(endpoint: str) -> int:
    """How many holders Redis currently counts for `endpoint` (0 without Redis); for dashboards and tests."""
    url = getattr(settings, "REDIS_URL", "")
    if not url:
        return 0
    client = _redis(url)
    now_ms = int(time.time() * 1000)
    return int(client.zcount(_slot_key(endpoint), now_ms, "+inf"))
