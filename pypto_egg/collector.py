"""Python's cyclic collector paused around pass calls, for a caller that owns its process (the CLI does).

The pass never touches the collector: a library call leaves the process's settings to the process, whose other
threads and objects are not the pass's. But the pass's output is tens of thousands of small acyclic objects on a
batched matmul's pages or a long kernel, and the collector traverses each of them several times while the pass
builds them: young collections, then a full one whenever they make a quarter of the old generation (a batch of
4,096 pages triggers 175 young and one or two full collections a call). A process of the pass's own can skip that:

    with collector_paused():
        program = flatten(program)

Reference counting still frees everything (a pass call leaves no cycle: a test holds it). On leaving, what
survived joins the oldest generation unvisited (a freeze and unfreeze, unless the caller froze objects of their
own) instead of counting towards the next full collection; the collector's previous state is restored by the
last of several concurrent users.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_LOCK = threading.Lock()
_USERS = 0
_WAS_ENABLED = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, for the whole process: use it only where the process is yours."""
    global _USERS, _WAS_ENABLED
    with _LOCK:
        if _USERS == 0:
            _WAS_ENABLED = gc.isenabled()
            gc.disable()
        _USERS += 1
    try:
        yield
    finally:
        with _LOCK:
            _USERS -= 1
            if _USERS == 0 and _WAS_ENABLED:
                if gc.get_freeze_count() == 0:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
