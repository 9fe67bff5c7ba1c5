"""The folder a program's fact files are written to and egglog reads them from."""

from __future__ import annotations

import os
import tempfile
import weakref
from pathlib import Path


def facts_root() -> str | None:
    """Where fact files are written: a memory file system when there is one (a write there costs a tenth of
    one on disk, and a function's facts are read once), else the system's temporary folder."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class FactFolder:
    """A folder whose files every program writes again, one program at a time: a temporary one of its own, or
    `path` (which it leaves in place).

    Each file stays open once written and is rewritten in place (a seek, a write and a truncate): a program writes
    two dozen small files, and opening, truncating and closing each again costs three times as much (about 9 us
    against 3 us a file on a memory file system)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._own = (
            tempfile.TemporaryDirectory(prefix="pypto-egg-facts-", dir=facts_root()) if path is None else None
        )
        self.path = self._own.name if self._own is not None else str(path)
        self._open: dict[str, int] = {}
        # the descriptors are closed when the folder goes, however it goes (its own directory has a finalizer too)
        self._close = weakref.finalize(self, _close_all, self._open)

    def write(self, name: str, text: str) -> str:
        """Make the file `name` hold `text` alone; its path."""
        fd = self._open.get(name)
        if fd is None:
            fd = os.open(os.path.join(self.path, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            self._open[name] = fd
        else:
            os.lseek(fd, 0, os.SEEK_SET)
        data = memoryview(text.encode())
        size = len(data)
        while data:
            data = data[os.write(fd, data) :]
        os.ftruncate(fd, size)
        return os.path.join(self.path, name)

    def cleanup(self) -> None:
        """Close the files, and remove the folder when it is this one's own."""
        self._close()
        if self._own is not None:
            self._own.cleanup()


def _close_all(descriptors: dict[str, int]) -> None:
    for fd in descriptors.values():
        os.close(fd)
    descriptors.clear()
