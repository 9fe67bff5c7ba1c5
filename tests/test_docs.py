"""Every code block of the user guide runs: Python blocks in order in one namespace, `egg` blocks written to
the file their first line names, `console` commands through the installed CLI."""

from __future__ import annotations

import linecache
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(GUIDE.read_text())]


def test_the_guide_has_runnable_blocks_of_every_kind():
    kinds = {kind for kind, _ in blocks()}
    assert {"python", "egg", "console"} <= kinds


def test_every_code_block_of_the_guide_runs(tmp_path, monkeypatch, capsys):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "guide"}
    for i, (kind, text) in enumerate(blocks()):
        if kind == "python":
            exec(compile(text, f"{GUIDE.name} block {i}", "exec"), namespace)
        elif kind == "egg":
            first = text.splitlines()[0]
            m = re.match(r";; file: (\S+)", first)
            assert m, f"block {i}: an egg block starts with ';; file: <name>'"
            (tmp_path / m.group(1)).write_text(text)
        elif kind == "console":
            for line in text.splitlines():
                assert line.startswith("$ pypto-egg "), line
                argv = shlex.split(line[2:])
                env = {**os.environ, "PYTHONPATH": str(ROOT)}
                r = subprocess.run([sys.executable, "-m", "pypto_egg.cli", *argv[1:]], capture_output=True,
                                   text=True, cwd=tmp_path, env=env, timeout=300)  # fmt: skip
                assert r.returncode == 0, (line, r.stderr)
        else:
            pytest.fail(f"block {i}: unknown kind {kind!r}")
    out = capsys.readouterr().out
    assert "validated 1 function(s)" in out


README = ROOT / "README.md"


def test_every_python_block_of_the_readme_runs_as_written(tmp_path, monkeypatch, capsys):
    """In order, in one namespace, from a folder holding the project's examples (the README's paths); the
    block that needs PyPTO runs where PyPTO is installed. Its rule block is examples/my_rules.egg's rule."""
    from pypto_ref import WHY_NO_PYPTO

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    found = [(m.group(1), m.group(2)) for m in BLOCK.finditer(README.read_text())]
    python = [text for kind, text in found if kind == "python"]
    assert len(python) >= 3
    ran = 0
    for i, text in enumerate(python):
        if "pypto_egg.pypto" in text and WHY_NO_PYPTO is not None:
            continue
        name = f"README.md python block {i}"
        linecache.cache[name] = (
            len(text),
            None,
            text.splitlines(keepends=True),
            name,
        )  # @pl.program reads it
        exec(compile(text, name, "exec"), namespace)
        ran += 1
    assert ran == len(python) or WHY_NO_PYPTO is not None
    out = capsys.readouterr().out
    assert "y_tile: pl.Tile[[6, 4], pl.FP32, pl.Mem.Vec] = pl.tile.add(x_tile, x_tile)" in out
    (egg,) = [text for kind, text in found if kind == "egg"]
    assert egg in (ROOT / "examples" / "my_rules.egg").read_text()
