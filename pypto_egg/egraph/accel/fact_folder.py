"""The folder a program's fact files are written to and egglog reads them from."""

from __future__ import annotations

import os
import tempfile
import weakref
from pathlib import Path

# descriptors one fact folder keeps open at most: a set's programs write two dozen files; a file past the bound is
# opened and closed again at each write. (The folders of a process are those of its loaded sets, at most about ten,
# and of runs on an e-graph of their own, each closed when its run is.)
_MOST_KEPT_OPEN = 32


def facts_root() -> str | None:
    """Where fact files are written: a memory file system when there is one (a write there costs a tenth of
    one on disk, and a function's facts are read once), else the system's temporary folder."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class FactFolder:
    """A folder whose files every program writes again, one program at a time: a temporary one of its own, or
    `path` (which it leaves in place).

    Each file stays open once written and is rewritten in place (a positioned write, and a truncate only when the
    text is shorter than the one before): a program writes two dozen small files, and opening, truncating and
    closing each again costs three times as much (about 9 us against 3 us a file on a memory file system). A folder
    keeps at most `_MOST_KEPT_OPEN` of them open, and closes them with `cleanup()` or when it goes."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._own = (
            tempfile.TemporaryDirectory(prefix="pypto-egg-facts-", dir=facts_root()) if path is None else None
        )
        self.path = self._own.name if self._own is not None else str(path)
        self._open: dict[str, int] = {}
        self._size: dict[str, int] = {}  # the length of what each open file holds
        # the descriptors are closed when the folder goes, however it goes (its own directory has a finalizer too)
        self._close = weakref.finalize(self, _close_all, self._open)

    def write(self, name: str, text: str) -> str:
        """Make the file `name` hold `text` alone; its path."""
        path = os.path.join(self.path, name)
        data = text.encode()
        fd = self._open.get(name)
        if fd is not None:
            _write_all(fd, data)
            if len(data) < self._size[name]:
                os.ftruncate(fd, len(data))
            self._size[name] = len(data)
            return path
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        kept = False
        try:
            _write_all(fd, data)
            kept = len(self._open) < _MOST_KEPT_OPEN
            if kept:
                self._open[name] = fd
                self._size[name] = len(data)
        finally:
            if not kept:
                os.close(fd)
        return path

    def cleanup(self) -> None:
        """Close the files, and remove the folder when it is this one's own."""
        self._close()
        if self._own is not None:
            self._own.cleanup()


def _write_all(fd: int, data: bytes) -> None:
    """`data` from the start of the file (positioned writes leave the descriptor's offset alone)."""
    view = memoryview(data)
    at = 0
    while at < len(view):
        at += os.pwrite(fd, view[at:], at)


def _close_all(descriptors: dict[str, int]) -> None:
    for fd in descriptors.values():
        os.close(fd)
    descriptors.clear()
