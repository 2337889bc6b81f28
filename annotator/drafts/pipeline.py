"""Running a step's items in parallel: preparation (database reads, ffmpeg frame sampling) runs a
little ahead on its own threads while LLM_CONCURRENCY requests wait on the model."""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connections

from llm.client import LLMError, calls_in_flight, llm_endpoint
from llm.frames import FrameSamplingError

from .base import FAILED, Item, ItemResult

log = logging.getLogger(__name__)


def item_failure(exc: BaseException) -> ItemResult:
    if isinstance(exc, LLMError):
        return ItemResult(FAILED, reason=exc.message, call=exc.call)
    if isinstance(exc, FrameSamplingError | ValidationError):
        return ItemResult(FAILED, reason=str(exc) if not isinstance(exc, ValidationError) else "; ".join(exc.messages))
    log.error("drafting an item failed unexpectedly", exc_info=exc)
    return ItemResult(FAILED, reason=f"unexpected {type(exc).__name__}: {exc}")


def draft_concurrency(*, project=None) -> int:
    """Items in flight at once: the per-endpoint limit the LLM layer enforces (0 there = unlimited → 8)."""
    return calls_in_flight(llm_endpoint(project=project))


def _close_thread_connections() -> None:
    # Every thread has its own database connections; a thread that ends must not leak them.
    connections.close_all()


def run_items(
    items: list[Item],
    *,
    prepare: Callable[[Any], Any],
    draft: Callable[[Any, Any], ItemResult],
    concurrency: int,
    on_result: Callable[[Item, ItemResult], None],
) -> None:
    def attempt_prepare(item: Item):
        try:
            return prepare(item.obj), None
        except Exception as exc:  # noqa: BLE001 - becomes the item's failure, the run goes on
            return None, item_failure(exc)

    def attempt_draft(item: Item, prepared, failed: ItemResult | None) -> ItemResult:
        if failed is not None:
            return failed
        try:
            return draft(item.obj, prepared)
        except Exception as exc:  # noqa: BLE001 - becomes the item's failure, the run goes on
            return item_failure(exc)

    if concurrency <= 1 or len(items) <= 1:
        for item in items:
            prepared, failed = attempt_prepare(item)
            on_result(item, attempt_draft(item, prepared, failed))
        return

    todo: queue.Queue = queue.Queue()
    for item in items:
        todo.put(item)
    # Bounded, so preparation runs only a little ahead (frames of thousands of clips would not fit in memory).
    ready: queue.Queue = queue.Queue(maxsize=concurrency * 2)
    stop = threading.Event()
    prepared_all = threading.Event()

    def preparer() -> None:
        try:
            while not stop.is_set():
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                entry = (item, *attempt_prepare(item))
                while not stop.is_set():
                    try:
                        ready.put(entry, timeout=0.1)
                        break
                    except queue.Full:
                        continue
        finally:
            _close_thread_connections()

    def drafter() -> None:
        try:
            while not stop.is_set():
                try:
                    item, prepared, failed = ready.get(timeout=0.05)
                except queue.Empty:
                    if prepared_all.is_set() and ready.empty():
                        return
                    continue
                on_result(item, attempt_draft(item, prepared, failed))
        finally:
            _close_thread_connections()

    # Preparing is mostly short ffmpeg processes: a few more than cores keeps frames coming when other
    # processes compete for the CPU, and the bounded queue keeps them from running far ahead.
    preparers = [
        threading.Thread(target=preparer, name=f"draft-prepare-{i}", daemon=True)
        for i in range(max(1, min(2 * (os.cpu_count() or 1), concurrency, len(items))))
    ]
    # One thread more than the requests allowed in flight: while a thread records its answer and writes
    # its draft, the spare one's request already takes the freed slot. The LLM layer's per-endpoint
    # semaphore still caps requests in flight at `concurrency`.
    drafters = [
        threading.Thread(target=drafter, name=f"draft-llm-{i}", daemon=True)
        for i in range(min(concurrency + 1, len(items)))
    ]
    try:
        for thread in preparers + drafters:
            thread.start()
        for thread in preparers:
            thread.join()
        prepared_all.set()
        for thread in drafters:
            thread.join()
    finally:
        # On a time limit or an interrupt in this thread, the helpers stop taking new items.
        stop.set()


class Memo:
    """A small, thread-safe cache of expensive values (a video's frames shared by its agent roles)."""

    _MISSING = object()

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict = OrderedDict()

    def get(self, key, make: Callable[[], Any]):
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = [threading.Lock(), self._MISSING]
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
            self._entries.move_to_end(key)
        with entry[0]:
            if entry[1] is self._MISSING:
                entry[1] = make()
            return entry[1]
