"""Many model calls at once: preparation (database reads, ffmpeg frames) a little ahead on threads of
its own, the calls on `concurrency + 1` threads, every result handed back to the caller's thread.

Used by the shortcut probes and the evaluation runs. The LLM layer's per-endpoint limit still caps the
requests in flight; the spare calling thread keeps a freed slot busy while another thread records
its answer. `prepare` and `ask` never stop the run: an exception becomes that item's failure through
`failure`. `done` runs in the calling thread, in completion order, so it may write to the database
inside the caller's transaction.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import connections

log = logging.getLogger(__name__)

Item = TypeVar("Item")
PREPARERS = 2


def run_parallel(
    items: Sequence[Item],
    *,
    prepare: Callable[[Item], Any],
    ask: Callable[[Item, Any], Any],
    failure: Callable[[Item, BaseException], Any],
    done: Callable[[Any], None],
    concurrency: int,
    stop: threading.Event | None = None,
) -> None:
    """Prepare and ask every item; `done(result)` for each. A set `stop` ends the run early (cancel)."""
    stop = stop or threading.Event()

    def attempt(item):
        try:
            return ask(item, prepare(item))
        except Exception as exc:  # noqa: BLE001 - the item's failure, the run goes on
            return failure(item, exc)

    if concurrency <= 1 or len(items) <= 1:
        for item in items:
            if stop.is_set():
                return
            done(attempt(item))
        return

    todo: queue.Queue = queue.Queue()
    for item in items:
        todo.put(item)
    ready: queue.Queue = queue.Queue(maxsize=2 * concurrency)
    finished: queue.Queue = queue.Queue()
    prepared_all = threading.Event()
    halt = threading.Event()

    def preparer() -> None:
        try:
            while not (halt.is_set() or stop.is_set()):
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    entry = (item, prepare(item), None)
                except Exception as exc:  # noqa: BLE001 - the item's failure, the run goes on
                    entry = (item, None, failure(item, exc))
                while not (halt.is_set() or stop.is_set()):
                    try:
                        ready.put(entry, timeout=0.1)
                        break
                    except queue.Full:
                        continue
        finally:
            connections.close_all()  # this thread's own connections

    def asker() -> None:
        try:
            while not (halt.is_set() or stop.is_set()):  # a cancel lets the call in flight finish, no more
                try:
                    item, prepared, failed = ready.get(timeout=0.05)
                except queue.Empty:
                    if prepared_all.is_set() and ready.empty():
                        return
                    continue
                if failed is not None:
                    finished.put(failed)
                    continue
                try:
                    finished.put(ask(item, prepared))
                except Exception as exc:  # noqa: BLE001 - the item's failure, the run goes on
                    finished.put(failure(item, exc))
        finally:
            connections.close_all()

    preparers = [threading.Thread(target=preparer, daemon=True, name=f"prepare-{i}") for i in range(PREPARERS)]
    askers = [
        threading.Thread(target=asker, daemon=True, name=f"ask-{i}") for i in range(min(concurrency + 1, len(items)))
    ]
    try:
        for thread in preparers + askers:
            thread.start()
        while True:
            try:
                done(finished.get(timeout=0.1))
                continue
            except queue.Empty:
                pass
            if not any(t.is_alive() for t in preparers):
                prepared_all.set()
            if not any(t.is_alive() for t in preparers + askers) and finished.empty():
                break
    finally:
        halt.set()
        prepared_all.set()
