"""The files a command reads: each file named, and every `.py` under each directory named."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .errors import UserError


def input_files(paths: Sequence[str]) -> list[tuple[Path, Path]]:
    """(file, its path relative to the argument it came from) for each file and each .py of a directory."""
    out: list[tuple[Path, Path]] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            out += [(f, f.relative_to(p)) for f in sorted(p.rglob("*.py"))]
        elif p.is_file():
            out.append((p, Path(p.name)))
        else:
            raise UserError(f"{arg}: no such file or directory")
    return out
